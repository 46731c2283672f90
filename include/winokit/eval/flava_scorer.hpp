// FLAVA as a pair scorer with either head: ITM (4 multimodal forward passes per Winoground
// example, the image and text encoders run once per image and caption) or contrastive (a dual
// encoder's dot products, scaled by exp(logit_scale) as FlavaForPreTraining's
// contrastive_logits_per_image).
//
//   winokit::FlavaRuntime rt = winokit::FlavaRuntime::load("flava-full/", std::nullopt, {});
//   auto scorer = winokit::make_flava_scorer(rt, "flava-itm");   // rt.head: itm by default
//   auto scores = scorer->score(dataset);
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "winokit/eval/association_solver.hpp"
#include "winokit/eval/retrieval.hpp"
#include "winokit/eval/scorer.hpp"
#include "winokit/io/image_store.hpp"
#include "winokit/model/flava_family.hpp"
#include "winokit/model/wordpiece.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(eval);

namespace winokit {

std::unique_ptr<Scorer> make_flava_scorer(const FlavaRuntime& runtime, std::string name);

// WinoGAViL: the cue prompt scored with each candidate image; the k best selected.
SolveResult flava_solve_with_images(const FlavaRuntime& rt, const AssociationDataset& ds,
                                    const std::map<std::string, std::filesystem::path>& images,
                                    const AssociationSolveOptions& options);

// Every caption with every image (2N x 2N) with rt.head.
ScoreMatrix flava_score_matrix(const FlavaRuntime& rt, const WinogroundDataset& dataset);

}  // namespace winokit
