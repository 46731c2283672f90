// Decoded images in PIL's modes, and the two CLIP preprocessing pipelines reproduced exactly.
//
//   winokit::DecodedImage im = winokit::decode_image(store.read("ex_0_img_0"));
//   std::vector<float> chw = winokit::preprocess(im, config.preprocess);  // [3, crop, crop]
//
// Decoding follows what PIL's Image.open + load produce: JPEG through libjpeg-turbo with its
// defaults (islow DCT, fancy upsampling; grayscale stays "L"), PNG through libpng (palette stays
// "P", gray+alpha "LA", 16-bit colour keeps the high byte, 16-bit gray becomes "I", 1/2/4-bit
// gray is scaled to 8 bits), WebP through libwebp (RGB or RGBA). EXIF orientation is not applied
// (neither PIL's open nor the CLIP processors apply it). A truncated or corrupt file is an
// InputError naming it.
//
// Pipelines (see ../shared/golden/clip/README.md):
//  - hf (transformers CLIPImageProcessor): convert("RGB") first (alpha dropped), resize the
//    shortest edge with PIL bicubic, centre crop with top = (h - crop) // 2, x / 255, normalise;
//  - openai (openai/CLIP, OpenCLIP): resize in the image's own mode (palette images with
//    NEAREST, RGBA/LA premultiplied), centre crop with top = round((h - crop) / 2) (half to
//    even), then convert("RGB"), x / 255, normalise.
// PIL's resampling is reproduced exactly: separable bicubic (a = -0.5), support widened by the
// scale when downscaling, coefficients in 22-bit fixed point on 8-bit images.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "winokit/clip.hpp"
#include "winokit/image_store.hpp"

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
DecodedImage decode_image(const std::string& bytes, const std::string& source);

// PIL's convert("RGB").
DecodedImage to_rgb(const DecodedImage& image);
// PIL's Image.resize(size, BICUBIC) (NEAREST for palette images, premultiplied for RGBA / LA).
DecodedImage pil_resize(const DecodedImage& image, int width, int height);

std::vector<float> preprocess(const DecodedImage& image, const PreprocessConfig& config);

}  // namespace winokit
