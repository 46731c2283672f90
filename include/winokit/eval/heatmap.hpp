// Word-patch heat maps for a dual encoder (in the spirit of the Winoground paper's Figure 4):
// the similarity between each caption token's final state and each image patch's final state,
// both through their tower's final LayerNorm and projection, drawn over the image.
//
//   auto maps = winokit::word_patch_maps(runtime, image_bytes, {"a dog bites a cat"});
//   std::string png = winokit::render_heatmap_png(maps.pixels, cfg, maps.similarity(0, t), grid);
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "winokit/model/embedding_runtime.hpp"
#include "winokit/model/vl_model.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(eval);

namespace winokit {

struct WordPatchMaps {
  int grid = 0;                                  // patches per side
  std::vector<float> pixels;                     // the preprocessed image [3, side, side]
  std::vector<std::vector<std::string>> tokens;  // per caption (start and end tokens dropped)
  // per caption, per token: cosine similarity to each patch, row-major [grid * grid]
  std::vector<std::vector<std::vector<float>>> similarity;
};

WordPatchMaps word_patch_maps(const ClipRuntime& rt, const ImageBytes& image,
                              const std::vector<std::string>& captions);

// The colour map of every word-patch map: viridis (dark violet for the map's lowest value, blue,
// green, yellow for its highest), perceptually ordered and readable by most colour-blind readers.
// `heat` in [0, 1]; returns 8-bit RGB.
std::array<std::uint8_t, 3> heat_colour(float heat);

// One pixel of a map: the image in grey (so that a red or yellow image cannot hide the map),
// blended with heat_colour(heat). `rgb` in [0, 1].
std::array<std::uint8_t, 3> heat_pixel(const std::array<float, 3>& rgb, float heat);

// The image with the map overlaid (min-max scaled, heat_pixel), as a PNG.
std::string render_heatmap_png(const std::vector<float>& pixels, const PreprocessConfig& cfg,
                               const std::vector<float>& map, int grid, int side);

// ---- word-region alignment of any model that offers it (Ability::Alignment) ----
// What the maps of a model show (the report's title, method and colour-scale ends).
struct AlignmentMethod {
  std::string title, method, scale_low, scale_high;
};
// One image with one caption: a PNG per caption token (the map over the image).
struct AlignmentPanel {
  std::size_t image = 0, caption = 0;
  std::vector<std::pair<std::string, std::string>> maps;  // (token, PNG)
  std::string note;                                       // "score 0.8123", or empty
};
// UsageError (require) when the model has no alignment.
AlignmentMethod alignment_method(const VlModel& model);
// Every image with every caption: images x captions panels, image-major.
std::vector<AlignmentPanel> alignment_panels(const VlModel& model,
                                             const std::vector<ImageBytes>& images,
                                             const std::vector<std::string>& captions);

}  // namespace winokit
