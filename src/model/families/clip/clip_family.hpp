// CLIP behind the model interface (vl_model.hpp): the registry's hooks, and the runtime for
// the analyses that read CLIP's towers directly (word-patch maps).
//
//   std::unique_ptr<winokit::VlModel> m = winokit::open_clip("clip-vit-base-patch32/", {});
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "model/runtime/embedding_runtime.hpp"
#include "winokit/model/vl_model.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(model);

namespace winokit {

bool is_clip_checkpoint(const std::filesystem::path& checkpoint);
std::unique_ptr<VlModel> open_clip(const std::filesystem::path& checkpoint,
                                   const ModelOptions& options);
// A runtime already loaded (seeded random weights for the demo and the game's test rival).
std::unique_ptr<VlModel> wrap_clip_runtime(ClipRuntime runtime, std::string name);

// Word-patch similarity maps (CLIP's VlModel::align): the cosine similarity between each caption
// token's final state and each image patch's final state, both through their tower's final
// LayerNorm and projection.
struct WordPatchMaps {
  int grid = 0;                                  // patches per side
  std::vector<float> pixels;                     // the preprocessed image [3, side, side]
  std::vector<std::vector<std::string>> tokens;  // per caption (start and end tokens dropped)
  // per caption, per token: cosine similarity to each patch, row-major [grid * grid]
  std::vector<std::vector<std::vector<float>>> similarity;
};
WordPatchMaps word_patch_maps(const ClipRuntime& rt, const ImageBytes& image,
                              const std::vector<std::string>& captions);

}  // namespace winokit
