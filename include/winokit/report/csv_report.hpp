// Long-format CSV reports of evaluation and comparison results (src/report/csv_report.cpp): one
// row per group and metric; the leaderboard of a comparison.
#pragma once

#include <string>

#include "winokit/compare.hpp"
#include "winokit/evaluation.hpp"
#include "winokit/report/format.hpp"

namespace winokit {

std::string csv_report(const EvalResult& result, const ReportContext& ctx);
std::string csv_compare(const CompareResult& result);

}  // namespace winokit
