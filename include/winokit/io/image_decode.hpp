// Decoded images in PIL's modes (the pixels PIL's Image.open + load produce).
//
//   winokit::DecodedImage im = winokit::decode_image(store.read("ex_0_img_0"));
//   // then winokit::preprocess(im, config.preprocess) (winokit/model/preprocess.hpp)
//
// Decoding follows what PIL's Image.open + load produce: JPEG through libjpeg-turbo with its
// defaults (islow DCT, fancy upsampling; grayscale stays "L"), PNG through libpng (palette stays
// "P", gray+alpha "LA", 16-bit colour keeps the high byte, 16-bit gray becomes "I", 1/2/4-bit
// gray is scaled to 8 bits), WebP through libwebp (RGB or RGBA). EXIF orientation is not applied
// (neither PIL's open nor the CLIP processors apply it). A truncated or corrupt file is an
// InputError naming it.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "winokit/io/image_store.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(io);

namespace winokit {

enum class PixelMode { L, LA, RGB, RGBA, P, I };
const char* to_string(PixelMode mode);
int channels(PixelMode mode);  // bytes per pixel for 8-bit modes; 1 for P and I

struct DecodedImage {
  int width = 0, height = 0;
  PixelMode mode = PixelMode::RGB;
  std::vector<std::uint8_t> pixels;                  // interleaved 8-bit channels (P: indices)
  std::vector<std::int32_t> wide;                    // mode I
  std::vector<std::array<std::uint8_t, 3>> palette;  // mode P
};

DecodedImage decode_image(const ImageBytes& image);

// The decoder's memory is bounded per process: each decode reserves its canvas bytes from one
// budget (1 GiB by default) and waits while other threads hold it, so decoding on N threads does
// not multiply the peak by N; an image larger than the whole budget is decoded alone.
struct DecodeMemoryStats {
  std::uint64_t budget_bytes = 0;  // the budget
  std::uint64_t in_use_bytes = 0;  // reserved now
  std::uint64_t peak_bytes = 0;    // most reserved at once since the last set_decode_memory_budget
};
DecodeMemoryStats decode_memory_stats();
// Sets the budget (bytes > 0; a UsageError otherwise), resets the peak to what is reserved now,
// and returns the previous budget.
std::uint64_t set_decode_memory_budget(std::uint64_t bytes);
DecodedImage decode_image(const std::string& bytes, const std::string& source);

}  // namespace winokit
