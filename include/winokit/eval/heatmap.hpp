// Word-patch heat maps for a dual encoder (in the spirit of the Winoground paper's Figure 4):
// the similarity between each caption token's final state and each image patch's final state,
// both through their tower's final LayerNorm and projection, drawn over the image.
//
//   auto maps = winokit::word_patch_maps(runtime, image_bytes, {"a dog bites a cat"});
//   std::string png = winokit::render_heatmap_png(maps.pixels, cfg, maps.similarity(0, t), grid);
#pragma once

#include <string>
#include <vector>

#include "winokit/model/embedding_runtime.hpp"

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

// The image with the map overlaid (min-max scaled, red), as a PNG.
std::string render_heatmap_png(const std::vector<float>& pixels, const PreprocessConfig& cfg,
                               const std::vector<float>& map, int grid, int side);

}  // namespace winokit
