// Finds a dataset's images by name, in an `images/` folder or straight inside `images.zip`.
// Names carry no extension; .png, .jpg, .jpeg and .webp are tried, and the bytes decide the
// format (the published Winoground files include JPEG data named .png).
//
//   auto store = winokit::ImageStore::open("winoground/data");   // images/ or images.zip
//   winokit::ImageBytes img = store.read("ex_0_img_0");
//   if (img.format == winokit::ImageFormat::Jpeg) decode_jpeg(img.bytes);
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(io);

namespace winokit {

enum class ImageFormat { Png, Jpeg, Webp, Gif, Unknown };

const char* to_string(ImageFormat format);
// Looks at the leading bytes only.
ImageFormat sniff_image_format(std::string_view bytes);

// An image name confined to the image folder: "a/./b" -> "a/b", "a/../b" -> "b". nullopt for a
// name that is empty, absolute, holds a NUL byte or a backslash, or leaves the folder after
// normalisation ("../../outside/secret", "a/../../x").
std::optional<std::string> normalize_image_name(std::string_view name);

struct ImageBytes {
  std::string name;    // the dataset's name, without extension
  std::string source;  // file path, or "archive.zip:member"
  ImageFormat format = ImageFormat::Unknown;
  std::string bytes;
};

class ImageStore {
 public:
  // `root` is the dataset directory (the one holding examples.jsonl). Nothing is read yet;
  // an absent image folder is only an error when an image is requested.
  // `images`, when given (the CLI's --images), is the folder of images or a .zip of them,
  // wherever it lies; an absent one is an IoError at once.
  static ImageStore open(const std::filesystem::path& root,
                         const std::filesystem::path& images = {});
  ImageStore(ImageStore&&) noexcept;
  ImageStore& operator=(ImageStore&&) noexcept;
  ~ImageStore();

  // Thread-safe. Throws IoError naming the image, where it looked, and a hint; InputError for a
  // name that normalize_image_name refuses (nothing outside the image folder is ever read).
  ImageBytes read(const std::string& name) const;
  // The file read() would read for `name` when the images are a folder; nullopt for a zip, or
  // when read() would fail (it then reports why). Lets a cache key come from a remembered hash.
  std::optional<std::filesystem::path> file_of(const std::string& name) const;
  // Human-readable description of where images come from.
  std::string describe() const;

 private:
  ImageStore() = default;
  struct Zip;
  std::filesystem::path root_;
  std::filesystem::path dir_;
  std::filesystem::path zip_path_;
  std::unique_ptr<Zip> zip_;
  std::unique_ptr<std::mutex> zip_mutex_;
};

}  // namespace winokit
