// Long-format CSV reports of evaluation and comparison results (src/report/csv_report.cpp): one
// row per group and metric; the leaderboard of a comparison.
#pragma once

#include <string>

#include "winokit/eval/compare.hpp"
#include "winokit/eval/evaluation.hpp"
#include "winokit/report/format.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(report);

namespace winokit {

std::string csv_report(const EvalResult& result, const ReportContext& ctx);
std::string csv_compare(const CompareResult& result);

}  // namespace winokit
