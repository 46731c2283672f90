// Reports of the augmentation-aware score S_aug over caption variants
// (src/report/variants_report.cpp): per group of variants (each augmentation, each family of the
// official layout, all), the text, image and group scores for every (agg, lambda), and the best.
//
//   VariantsReport r = variants_report(ds, original, variants, scores, lambdas, true);
//   r.model = "clip"; r.provenance = p.json();
//   std::cout << winokit::variants_markdown(r);
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "winokit/data/variants.hpp"
#include "winokit/eval/augment.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(report);

namespace winokit {

struct VariantGroupResult {
  std::string name;  // an augmentation, "family:NAME" or "all"
  std::size_t variants = 0, captions = 0;
  std::vector<AugmentSetting> settings;  // augmented_scores, in its order
};

struct VariantsReport {
  std::string model;  // the name in the report
  std::size_t examples = 0, variants = 0;
  bool include_original = true;
  std::vector<VariantGroupResult> groups;
  nlohmann::json provenance;  // report/provenance.hpp
};

// Scores every group: each augmentation, each family when there are several ("family:NAME"),
// and "all" when there are several augmentations. `variant_scores[v]` holds s(variant v, image k).
VariantsReport variants_report(const WinogroundDataset& dataset,
                               const std::vector<WinogroundScores>& original,
                               const std::vector<CaptionVariant>& variants,
                               const std::vector<std::array<double, 2>>& variant_scores,
                               const std::vector<double>& lambdas, bool include_original);

// The definition of S_aug the report states.
std::string augmented_score_definition(bool include_original);

std::string variants_markdown(const VariantsReport& report);
nlohmann::json variants_json(const VariantsReport& report);
std::string variants_html(const VariantsReport& report);

}  // namespace winokit
