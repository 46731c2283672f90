// The two CLIP preprocessing pipelines reproduced exactly, on images decoded by
// winokit/io/image_decode.hpp.
//
//   winokit::DecodedImage im = winokit::decode_image(store.read("ex_0_img_0"));
//   std::vector<float> chw = winokit::preprocess(im, config.preprocess);  // [3, crop, crop]
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
#include <vector>

#include <nlohmann/json.hpp>

#include "winokit/io/image_decode.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(model);

namespace winokit {

enum class PreprocessPipeline { Hf, OpenAi };
const char* to_string(PreprocessPipeline pipeline);

// A CLIP image pipeline: which one, the shortest edge it resizes to, the centre crop and the
// per-channel normalisation.
struct PreprocessConfig {
  PreprocessPipeline pipeline = PreprocessPipeline::Hf;
  int resize = 224;  // shortest edge
  int crop = 224;
  std::array<float, 3> mean = {0.48145466f, 0.4578275f, 0.40821073f};
  std::array<float, 3> std = {0.26862954f, 0.26130258f, 0.27577711f};
  nlohmann::json to_json() const;
};

// PIL's convert("RGB").
DecodedImage to_rgb(const DecodedImage& image);
// PIL's resampling filters, numbered as Image.Resampling.
enum class PilFilter { Lanczos = 1, Bilinear = 2, Bicubic = 3 };
// PIL's Image.resize(size, filter) on 8-bit images (Resample.c: 22-bit fixed-point coefficients,
// the horizontal pass over the rows the vertical one reads, each pass rounded to uint8; NEAREST
// for palette images, premultiplied for RGBA / LA; 32-bit images bicubic only).
DecodedImage pil_resize(const DecodedImage& image, int width, int height,
                        PilFilter filter = PilFilter::Bicubic);

std::vector<float> preprocess(const DecodedImage& image, const PreprocessConfig& config);

}  // namespace winokit
