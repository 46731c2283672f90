// Encodes 8-bit RGB pixels as a PNG file (libpng) or a baseline JPEG (libjpeg) in memory.
//
//   std::vector<std::uint8_t> rgb(w * h * 3, 255);
//   std::string png = winokit::encode_png_rgb8(rgb, w, h);
//   std::string jpg = winokit::encode_jpeg_rgb8(rgb, w, h, 82);   // quality 1-100
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(io);

namespace winokit {

std::string encode_png_rgb8(const std::vector<std::uint8_t>& rgb, int width, int height);
// libjpeg's defaults at `quality`; an Error naming libjpeg's message when it fails.
std::string encode_jpeg_rgb8(const std::vector<std::uint8_t>& rgb, int width, int height,
                             int quality);

}  // namespace winokit
