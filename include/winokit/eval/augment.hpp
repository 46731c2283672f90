// Caption augmentation scores ("Why is Winoground Hard?", S_aug): each caption's score is
// aggregated (mean or max) over its variants and mixed with the original by lambda, and the
// text / image / group scores are recomputed for every (aggregation, lambda) setting.
//
//   std::vector<winokit::AugmentSetting> s =
//       winokit::augmented_scores(ds, original, variants, variant_scores, {0.0, 0.5, 1.0});
#pragma once

#include <array>
#include <string>
#include <vector>

#include "winokit/data/variants.hpp"
#include "winokit/eval/scores.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(eval);

namespace winokit {

struct AugmentSetting {
  std::string agg;  // "mean" or "max"
  double lambda = 0;
  std::array<double, 3> scores{};  // text, image, group proportions
};

// S_aug for every (agg, lambda); `variant_scores[v]` holds s(variant v, image k) for k = 0, 1.
std::vector<AugmentSetting> augmented_scores(
    const WinogroundDataset& dataset, const std::vector<WinogroundScores>& original,
    const std::vector<CaptionVariant>& variants,
    const std::vector<std::array<double, 2>>& variant_scores, const std::vector<double>& lambdas,
    bool include_original = true);

}  // namespace winokit
