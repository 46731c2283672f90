// Markdown reports of evaluation and comparison results (src/report/markdown.cpp): tables shaped
// like the Winoground paper's Tables 3-5, percentages with two decimals.
//
//   std::cout << winokit::markdown_report(result, ctx);
#pragma once

#include <string>

#include "winokit/eval/compare.hpp"
#include "winokit/eval/evaluation.hpp"
#include "winokit/report/format.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(report);

namespace winokit {

std::string markdown_report(const EvalResult& result, const ReportContext& ctx);
std::string markdown_compare(const CompareResult& result);

}  // namespace winokit
