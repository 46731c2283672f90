// ViLT as a Winoground pair scorer (4 joint forward passes per example, the image side computed
// once per image) and ViLT's word-patch alignment maps (IPOT optimal transport between caption
// tokens and image patches, as dandelin/ViLT's demo.py draws them; the Winoground paper's
// Figure 4).
//
//   winokit::ViltRuntime rt = winokit::ViltRuntime::load("vilt-b32-finetuned-coco/", {});
//   auto scorer = winokit::make_vilt_scorer(rt, "vilt-coco");
//   auto scores = scorer->score(dataset);  // rank logit, or P(match) for an ITM checkpoint
//   winokit::ViltAlignment a = winokit::vilt_word_patch_alignment(rt, bytes, "a dog bites");
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "winokit/eval/association_solver.hpp"
#include "winokit/eval/retrieval.hpp"
#include "winokit/eval/scorer.hpp"
#include "winokit/model/vilt_family.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(eval);

namespace winokit {

// s(c, i): the rank logit or P(match); 4 joint forward passes per Winoground example.
std::unique_ptr<Scorer> make_vilt_scorer(const ViltRuntime& runtime, std::string name);

// WinoGAViL with ViLT: the prompt made from the cue ("A/An <cue>" by default) is scored jointly
// with each candidate image, and the k best are selected (ties by candidate order). Each image
// is embedded once; SolveResult's embeddings stay empty (no dual-encoder embeddings exist).
SolveResult vilt_solve_with_images(const ViltRuntime& rt, const AssociationDataset& ds,
                                   const std::map<std::string, std::filesystem::path>& images,
                                   const AssociationSolveOptions& options);

// Retrieval with ViLT: every caption scored with every image (2N x 2N joint forward passes;
// on_progress reports the pairs).
ScoreMatrix vilt_score_matrix(const ViltRuntime& rt, const WinogroundDataset& dataset);

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
// The image with the map (values in [0, 1]) overlaid as in eval/heatmap.hpp (heat_pixel), as a PNG.
std::string render_vilt_heatmap_png(const ViltImage& image, const ViltConfig& config,
                                    const std::vector<float>& map, int grid_h, int grid_w);

}  // namespace winokit
