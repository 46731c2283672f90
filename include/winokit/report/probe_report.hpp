// Reports of the probes of "Why is Winoground Hard?" Section 5 (src/report/probe_report.cpp): the
// pair MLP probes, the text-only probe and the SVM separability of caption variants, per layer,
// as markdown tables, JSON with every seed's accuracies, and HTML with per-layer plots.
//
//   ProbeReport r{"clip", ProbePooling::Token, options, results, svm, note, seconds, provenance};
//   std::cout << winokit::probe_markdown(r);
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "winokit/eval/probe.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(report);

namespace winokit {

struct ProbeReport {
  std::string model;  // the name in the report
  ProbePooling pooling = ProbePooling::Token;
  ProbeOptions options;  // with the seeds that ran
  std::vector<ProbeResult> results;
  std::vector<SvmLayerResult> svm;
  std::string vision_layer_note;  // ProbeEmbeddings::vision_layer_note
  double seconds = 0;             // wall time of the probe runs
  nlohmann::json provenance;      // report/provenance.hpp
};

std::string probe_markdown(const ProbeReport& report);
nlohmann::json probe_json(const ProbeReport& report);
// The markdown as a page, with an SVG plot per probe (target and control min / max per layer)
// and one for the SVM separability.
std::string probe_html(const ProbeReport& report);

}  // namespace winokit
