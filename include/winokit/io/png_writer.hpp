// Encodes 8-bit RGB pixels as a PNG file in memory (libpng).
//
//   std::vector<std::uint8_t> rgb(w * h * 3, 255);
//   std::string png = winokit::encode_png_rgb8(rgb, w, h);
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(io);

namespace winokit {

std::string encode_png_rgb8(const std::vector<std::uint8_t>& rgb, int width, int height);

}  // namespace winokit
