// The images a WinoGAViL game samples its candidates from.
//
//   auto pool = winokit::scan_image_pool("images/", 12);   // name (file stem) -> file
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <string>

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(game);

namespace winokit {

// Name (file stem) -> file for every PNG/JPEG/WebP file in `dir` (not recursive). Throws
// IoError when `dir` is not a folder or holds fewer than `min_images` such files.
std::map<std::string, std::filesystem::path> scan_image_pool(const std::filesystem::path& dir,
                                                             std::size_t min_images);

}  // namespace winokit
