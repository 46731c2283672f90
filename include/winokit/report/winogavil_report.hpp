// Reports for WinoGAViL results: markdown (mean Jaccard as a percentage with one decimal, and
// truncated to an integer as the published tables do), JSON, CSV, HTML, and the predictions CSV
// in the published layout (the original columns plus <model>_predictions and <model>_jaccard).
//
//   std::cout << winokit::markdown_associations(result, "clip_vit_32");
//   out.add("preds.csv", winokit::predictions_csv(ds, preds, result, "clip_vit_32"));
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "winokit/data/winogavil.hpp"
#include "winokit/eval/association.hpp"
#include "winokit/eval/supervised.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(report);

namespace winokit {

// floor(100 * proportion), guarding against binary rounding just below an integer.
int truncated_percent(double proportion);
std::string chance_definition();

std::string markdown_associations(const AssociationResult& r, const std::string& model);
nlohmann::json json_associations(const AssociationResult& r, const std::string& model,
                                 const nlohmann::json& provenance);
std::string csv_associations(const AssociationResult& r);
std::string html_associations(const AssociationResult& r, const std::string& model,
                              const nlohmann::json& provenance);
std::string predictions_csv(const AssociationDataset& ds,
                            const std::vector<std::vector<std::string>>& predictions,
                            const AssociationResult& r, const std::string& model);

// The supervised baseline's section (`runs_per_group` runs per candidate-count group): every
// run's Jaccard and the mean +- standard deviation per group, against zero-shot on the same test
// instances; appended to the markdown, and under "supervised" in the JSON.
std::string markdown_supervised(const SupervisedResult& supervised, std::size_t runs_per_group);
nlohmann::json json_supervised(const SupervisedResult& supervised);

}  // namespace winokit
