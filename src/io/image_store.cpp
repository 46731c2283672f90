#include "winokit/io/image_store.hpp"

#include <zip.h>

#include <array>
#include <vector>

#include "winokit/core/error.hpp"
#include "winokit/core/text.hpp"
#include "winokit/io/files.hpp"

namespace winokit {

namespace fs = std::filesystem;

namespace {
constexpr std::array<const char*, 4> kExtensions = {".png", ".jpg", ".jpeg", ".webp"};

// fs::status without exceptions: a symbolic-link loop or a permission problem is an IoError
// naming the path (a missing path is just "not there").
fs::file_status status_of(const fs::path& p) {
  std::error_code ec;
  fs::file_status st = fs::status(p, ec);
  if (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory) {
    throw IoError(p.string() + ": " + ec.message());
  }
  return st;
}

std::string stem_if_image(const std::string& member) {
  std::string base = member.substr(member.find_last_of('/') + 1);
  auto dot = base.find_last_of('.');
  if (dot == std::string::npos) return {};
  std::string ext = to_lower_ascii(base.substr(dot));
  for (const char* known : kExtensions) {
    if (ext == known) return base.substr(0, dot);
  }
  return {};
}
}  // namespace

std::optional<std::string> normalize_image_name(std::string_view name) {
  if (name.empty() || name.front() == '/') return std::nullopt;
  if (name.find('\0') != std::string_view::npos || name.find('\\') != std::string_view::npos) {
    return std::nullopt;
  }
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (start <= name.size()) {
    std::size_t end = name.find('/', start);
    if (end == std::string_view::npos) end = name.size();
    std::string_view part = name.substr(start, end - start);
    if (part == "..") {
      if (parts.empty()) return std::nullopt;
      parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    start = end + 1;
  }
  if (parts.empty()) return std::nullopt;
  std::string out;
  for (auto part : parts) {
    if (!out.empty()) out.push_back('/');
    out.append(part);
  }
  return out;
}

const char* to_string(ImageFormat format) {
  switch (format) {
    case ImageFormat::Png:
      return "png";
    case ImageFormat::Jpeg:
      return "jpeg";
    case ImageFormat::Webp:
      return "webp";
    case ImageFormat::Gif:
      return "gif";
    case ImageFormat::Unknown:
      break;
  }
  return "unknown";
}

ImageFormat sniff_image_format(std::string_view b) {
  if (b.size() >= 8 && b.substr(0, 8) == "\x89PNG\r\n\x1a\n") return ImageFormat::Png;
  if (b.size() >= 3 && b.substr(0, 3) == "\xFF\xD8\xFF") return ImageFormat::Jpeg;
  if (b.size() >= 12 && b.substr(0, 4) == "RIFF" && b.substr(8, 4) == "WEBP") {
    return ImageFormat::Webp;
  }
  if (b.size() >= 6 && (b.substr(0, 6) == "GIF87a" || b.substr(0, 6) == "GIF89a")) {
    return ImageFormat::Gif;
  }
  return ImageFormat::Unknown;
}

struct ImageStore::Zip {
  zip_t* archive = nullptr;
  std::unordered_map<std::string, zip_uint64_t> by_stem;
  std::unordered_map<std::string, std::string> member_by_stem;
  ~Zip() {
    if (archive != nullptr) zip_discard(archive);
  }
};

ImageStore::ImageStore(ImageStore&&) noexcept = default;
ImageStore& ImageStore::operator=(ImageStore&&) noexcept = default;
ImageStore::~ImageStore() = default;

ImageStore ImageStore::open(const fs::path& root, const fs::path& images) {
  ImageStore store;
  store.root_ = root;
  store.zip_mutex_ = std::make_unique<std::mutex>();
  if (!images.empty() && !fs::exists(status_of(images))) {
    throw IoError(images.string() + ": no such image folder or zip",
                  "--images takes a folder of images or a .zip of them");
  }
  const fs::path dir = images.empty() ? root / "images" : images;
  if (fs::is_directory(status_of(dir))) {
    store.dir_ = dir;
    return store;
  }
  const fs::path zip = images.empty() ? root / "images.zip" : images;
  if (fs::is_regular_file(status_of(zip))) {
    store.zip_path_ = zip;
    int err = 0;
    zip_t* archive = zip_open(store.zip_path_.c_str(), ZIP_RDONLY, &err);
    if (archive == nullptr) {
      zip_error_t error;
      zip_error_init_with_code(&error, err);
      std::string message = zip_error_strerror(&error);
      zip_error_fini(&error);
      throw IoError(store.zip_path_.string() + ": cannot open zip archive: " + message);
    }
    store.zip_ = std::make_unique<Zip>();
    store.zip_->archive = archive;
    zip_int64_t count = zip_get_num_entries(archive, 0);
    for (zip_int64_t i = 0; i < count; ++i) {
      const char* name = zip_get_name(archive, static_cast<zip_uint64_t>(i), 0);
      if (name == nullptr) continue;
      std::string stem = stem_if_image(name);
      if (stem.empty() || stem.rfind("._", 0) == 0) continue;  // skip macOS resource forks
      store.zip_->by_stem.emplace(stem, static_cast<zip_uint64_t>(i));
      store.zip_->member_by_stem.emplace(stem, name);
    }
  }
  return store;
}

std::string ImageStore::describe() const {
  if (!dir_.empty()) return dir_.string();
  if (zip_) return zip_path_.string();
  return "(no images/ folder or images.zip in " + root_.string() + ")";
}

std::optional<fs::path> ImageStore::file_of(const std::string& requested) const {
  const auto normalized = normalize_image_name(requested);
  if (!normalized || dir_.empty()) return std::nullopt;
  for (const char* ext : kExtensions) {
    fs::path candidate = dir_ / (*normalized + ext);
    if (fs::is_regular_file(status_of(candidate))) return candidate;
  }
  return std::nullopt;
}

ImageBytes ImageStore::read(const std::string& requested) const {
  const auto normalized = normalize_image_name(requested);
  if (!normalized) {
    throw InputError({describe(), 0, "image"},
                     "image name '" + requested + "' is not a name inside the image folder",
                     "image names are relative to images/ (or images.zip) and cannot leave it");
  }
  const std::string& name = *normalized;
  ImageBytes out;
  out.name = requested;
  if (!dir_.empty()) {
    for (const char* ext : kExtensions) {
      fs::path candidate = dir_ / (name + ext);
      if (fs::is_regular_file(status_of(candidate))) {
        out.source = candidate.string();
        out.bytes = read_file(candidate);
        out.format = sniff_image_format(out.bytes);
        return out;
      }
    }
    throw IoError("image '" + name + "': not found (looked for " + name +
                      ".png/.jpg/.jpeg/.webp in " + dir_.string() + ")",
                  "check the dataset directory passed with --data, or pass --images DIR|ZIP");
  }
  if (zip_) {
    auto it = zip_->by_stem.find(name);
    if (it == zip_->by_stem.end()) {
      throw IoError("image '" + name + "': not found in " + zip_path_.string(),
                    "the archive has no member named " + name + ".png/.jpg/.jpeg/.webp");
    }
    std::lock_guard<std::mutex> lock(*zip_mutex_);
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(zip_->archive, it->second, 0, &st) != 0) {
      throw IoError(zip_path_.string() + ": cannot stat member for image '" + name + "'");
    }
    zip_file_t* file = zip_fopen_index(zip_->archive, it->second, 0);
    if (file == nullptr) {
      throw IoError(zip_path_.string() + ": cannot open member for image '" + name +
                    "': " + zip_strerror(zip_->archive));
    }
    out.bytes.resize(static_cast<std::size_t>(st.size));
    zip_int64_t got = zip_fread(file, out.bytes.data(), st.size);
    zip_fclose(file);
    if (got < 0 || static_cast<zip_uint64_t>(got) != st.size) {
      throw IoError(zip_path_.string() + ":" + zip_->member_by_stem.at(name) +
                    ": truncated or corrupt member");
    }
    out.source = zip_path_.string() + ":" + zip_->member_by_stem.at(name);
    out.format = sniff_image_format(out.bytes);
    return out;
  }
  throw IoError(
      "image '" + name + "': the dataset has no images (no images/ folder or " + "images.zip in " +
          root_.string() + ")",
      "pass --images DIR|ZIP when they lie elsewhere; images are needed only to score with a "
      "model, a scores file needs none");
}

}  // namespace winokit
