// The shared pieces of every report (src/report/format.cpp): the context a Winoground report is
// written from (model name and provenance record), and the number and text formats every report
// uses (percentages with two decimals, intervals, HTML escaping, base64).
//
//   winokit::ReportContext ctx = winokit::make_context(dataset, "clip", scorer->describe(),
//                                                    inputs, options);
//   std::cout << winokit::markdown_report(result, ctx);          // report/markdown.hpp
//   out.add("report.html", winokit::html_report(result, ctx));   // report/html_report.hpp
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "winokit/eval/evaluation.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(report);

namespace winokit {

struct ReportContext {
  std::string model;          // shown in tables
  nlohmann::json provenance;  // tool, version, dataset, scorer, tag sets, covariates, options
};

// The context of an evaluation report; its provenance is built with report/provenance.hpp.
ReportContext make_context(const WinogroundDataset& dataset, const std::string& model,
                           const nlohmann::json& scorer, const EvalInputs& inputs,
                           const EvalOptions& options);

// "30.75" for 0.3075: percentage with two decimals.
std::string percent(double proportion, int decimals = 2);
// "[25.51, 36.02]" or "n/a".
std::string interval_text(const Interval& interval, int decimals = 2);
std::string html_escape(const std::string& text);
// Standard base64 (RFC 4648), for images embedded in self-contained HTML.
std::string base64(const std::string& bytes);
// "0.1235" for fixed(0.12345, 4); "n/a" when not finite.
std::string fixed(double value, int decimals);

}  // namespace winokit
