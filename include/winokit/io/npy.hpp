// NumPy .npy arrays (format versions 1-3): little-endian float32, float16, float64, int64,
// int32 and uint8, C order, read as float32 with their shape.
//
//   winokit::NpyArray a = winokit::read_npy("image_embeds.npy");   // a.shape = {800, 512}
//   std::string bytes = winokit::encode_npy_f32({800, 512}, values);
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(io);

namespace winokit {

struct NpyArray {
  std::vector<std::int64_t> shape;
  std::vector<float> values;  // C order
};

// Throws InputError naming the file and the header field for anything it cannot read exactly
// (big-endian data, Fortran order, object arrays, a size that does not match the shape).
NpyArray read_npy(const std::filesystem::path& path);
NpyArray parse_npy(const std::string& bytes, const std::string& file);
std::string encode_npy_f32(const std::vector<std::int64_t>& shape,
                           const std::vector<float>& values);

}  // namespace winokit
