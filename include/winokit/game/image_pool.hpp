// The images a WinoGAViL game samples its candidates from.
//
//   auto pool = winokit::scan_image_pool("images/", 12);   // name (file stem) -> file
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(game);

namespace winokit {

// Name (file stem) -> file for every PNG/JPEG/WebP file in `dir` (not recursive). Throws
// IoError when `dir` is not a folder or holds fewer than `min_images` such files.
std::map<std::string, std::filesystem::path> scan_image_pool(const std::filesystem::path& dir,
                                                             std::size_t min_images);

// The pool's images as the client sees them: an opaque id per image (a keyed hash of its name,
// stable for the game's database), so neither the pages nor the API tell a file name, which in
// the WinoGAViL pools is the concept itself (`basil.jpg`).
class ImageIds {
 public:
  ImageIds() = default;
  ImageIds(const std::vector<std::string>& names, const std::string& key);
  std::string id_of(const std::string& name) const;         // "" for a name not in the pool
  const std::string* name_of(const std::string& id) const;  // nullptr for an unknown id

 private:
  std::unordered_map<std::string, std::string> by_name_, by_id_;
};

// A JPEG of the image scaled so its shorter side is `side` pixels (never enlarged); the pages
// ask for the size they show instead of the original file. Throws InputError/IoError.
std::string image_thumbnail(const std::filesystem::path& file, int side);

}  // namespace winokit
