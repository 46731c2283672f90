// ViLT's word-patch alignment maps (IPOT optimal transport between caption tokens and image
// patches, as dandelin/ViLT's demo.py draws them; the Winoground paper's Figure 4). ViLT's pair
// scores are the model interface's (winokit/model/vilt_family.hpp).
//
//   winokit::ViltAlignment a = winokit::vilt_word_patch_alignment(rt, bytes, "a dog bites");
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "model/families/vilt/vilt_family.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(model);

namespace winokit {

// ---- word-patch alignment (Figure 4 of the Winoground paper, after ViLT's demo.py) ----
struct ViltAlignment {
  int grid_h = 0, grid_w = 0;
  ViltImage image;
  std::vector<std::string> tokens;            // the caption's word pieces ([CLS]/[SEP] dropped)
  std::vector<std::vector<float>> transport;  // per token: the IPOT plan over the patches,
                                              // row-major [grid_h * grid_w]
  double score = 0;                           // the pair's score
};
// IPOT (beta 0.1, 1000 iterations, k 1) between the caption's tokens (without [CLS] and the
// final [SEP]) and the patches (without the image class token), on cosine distances of the
// final states, as dandelin/ViLT's objectives.ipot and demo.py.
ViltAlignment vilt_word_patch_alignment(const ViltRuntime& rt, const ImageBytes& image,
                                        const std::string& caption);
// The demo's display scaling of one token's map: standardise, clip to [1, 3], min-max to [0, 1].
std::vector<float> vilt_display_map(const std::vector<float>& transport);

}  // namespace winokit
