// JSON reports of evaluation and comparison results (src/report/json_report.cpp): every figure
// with its N, interval, method and seed, and the provenance record; and the per-example JSONL.
//
//   out.add("r.json", winokit::json_report(result, ctx).dump(2) + "\n");
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "winokit/eval/compare.hpp"
#include "winokit/eval/evaluation.hpp"
#include "winokit/report/format.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(report);

namespace winokit {

nlohmann::json json_report(const EvalResult& result, const ReportContext& ctx);
nlohmann::json json_compare(const CompareResult& result, const nlohmann::json& provenance);
std::string per_example_jsonl(const WinogroundDataset& dataset,
                              const std::vector<WinogroundScores>& scores, const EvalResult& result,
                              const std::vector<TagSet>& tag_sets);

}  // namespace winokit
