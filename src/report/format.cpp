#include <cstdio>

#include "winokit/report.hpp"
#include "winokit/version.hpp"

namespace winokit {

using nlohmann::json;

std::string percent(double proportion, int decimals) {
  if (!std::isfinite(proportion)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, proportion * 100.0);
  return buf;
}

std::string interval_text(const Interval& interval, int decimals) {
  if (!interval.valid()) return "n/a";
  return "[" + percent(interval.low, decimals) + ", " + percent(interval.high, decimals) + "]";
}

std::string html_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

json options_json(const EvalOptions& o) {
  return {
      {"seed", o.seed},
      {"bootstrap_resamples", o.bootstrap_resamples},
      {"confidence", o.confidence},
      {"folds", o.folds},
      {"alpha", o.alpha},
      {"secondary_grouping", o.secondary == SecondaryGrouping::Membership ? "membership" : "exact"},
      {"threads", 1}};
}

json dataset_json(const Dataset& dataset) {
  return {{"examples", dataset.examples_path.string()},
          {"sha256", dataset.examples_sha256},
          {"n", dataset.examples.size()}};
}

ReportContext make_context(const Dataset& dataset, const std::string& model, const json& scorer,
                           const EvalInputs& inputs, const EvalOptions& options) {
  ReportContext ctx;
  ctx.model = model;
  json tag_sets = json::array();
  for (const auto& t : inputs.tag_sets) {
    tag_sets.push_back({{"name", t.name}, {"file", t.file}, {"sha256", t.sha256}});
  }
  json covariates = json::array();
  for (const auto& c : inputs.covariates) {
    covariates.push_back({{"name", c.name}, {"file", c.source}, {"sha256", c.sha256}});
  }
  ctx.provenance = {{"tool", "winokit"},
                    {"version", kVersion},
                    {"dataset", dataset_json(dataset)},
                    {"scorer", scorer},
                    {"tag_sets", tag_sets},
                    {"covariates", covariates},
                    {"options", options_json(options)}};
  return ctx;
}

}  // namespace winokit
