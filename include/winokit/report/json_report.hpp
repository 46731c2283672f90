// JSON reports of evaluation and comparison results (src/report/json_report.cpp): every figure
// with its N, interval, method and seed, and the provenance record; and the per-example JSONL.
//
//   out.add("r.json", winokit::json_report(result, ctx).dump(2) + "\n");
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "winokit/compare.hpp"
#include "winokit/evaluation.hpp"
#include "winokit/report/format.hpp"

namespace winokit {

nlohmann::json json_report(const EvalResult& result, const ReportContext& ctx);
nlohmann::json json_compare(const CompareResult& result, const nlohmann::json& provenance);
std::string per_example_jsonl(const Dataset& dataset, const std::vector<PairScores>& scores,
                              const EvalResult& result, const std::vector<TagSet>& tag_sets);

}  // namespace winokit
