#include "winokit/report/probe_report.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "winokit/report/format.hpp"
#include "winokit/report/html_report.hpp"

namespace winokit {

namespace {

nlohmann::json finite_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

// One SVG line chart of per-layer values in [0, 1]: x the layers in order, y 0-100%; each series
// a polyline with its label in the legend. Attributes only (the report's CSP forbids inline
// styles).
struct Series {
  std::string label, colour;
  bool dashed = false;
  std::vector<double> values;  // per layer, NaN skipped
};

std::string layer_chart(const std::string& title, const std::vector<std::string>& layers,
                        const std::vector<Series>& series) {
  constexpr double kW = 520, kH = 232, kLeft = 44, kRight = 150, kTop = 24, kBottom = 42;
  const double plot_w = kW - kLeft - kRight, plot_h = kH - kTop - kBottom;
  auto x_of = [&](std::size_t i) {
    return kLeft + (layers.size() < 2
                        ? plot_w / 2
                        : plot_w * static_cast<double>(i) / static_cast<double>(layers.size() - 1));
  };
  auto y_of = [&](double v) { return kTop + plot_h * (1 - v); };
  std::ostringstream s;
  s << "<svg role=\"img\" width=\"" << kW << "\" height=\"" << kH << "\" viewBox=\"0 0 " << kW
    << ' ' << kH << "\"><title>" << html_escape(title) << "</title><text x=\"" << kLeft
    << "\" y=\"14\" font-size=\"12\">" << html_escape(title) << "</text>";
  for (int t = 0; t <= 4; ++t) {
    const double v = t / 4.0, y = y_of(v);
    s << "<line x1=\"" << kLeft << "\" x2=\"" << kLeft + plot_w << "\" y1=\"" << y << "\" y2=\""
      << y << "\" stroke=\"#ddd\"/><text x=\"4\" y=\"" << y + 4 << "\" font-size=\"10\">" << t * 25
      << "%</text>";
  }
  // Layer names centred under their points; with many layers every k-th, so none overlap (the
  // last always: it is "final" or the top layer).
  constexpr double kLabelSpacing = 30;
  const double spacing =
      layers.size() < 2 ? plot_w : plot_w / static_cast<double>(layers.size() - 1);
  const auto step = static_cast<std::size_t>(std::max(1.0, std::ceil(kLabelSpacing / spacing)));
  for (std::size_t i = 0; i < layers.size(); ++i) {
    if ((layers.size() - 1 - i) % step != 0) continue;
    s << "<text x=\"" << x_of(i) << "\" y=\"" << kH - 22
      << "\" font-size=\"10\" text-anchor=\"middle\">" << html_escape(layers[i]) << "</text>";
  }
  s << "<text x=\"" << kLeft + plot_w / 2 << "\" y=\"" << kH - 6
    << "\" font-size=\"10\" text-anchor=\"middle\" fill=\"#555\">layer</text>";
  for (std::size_t k = 0; k < series.size(); ++k) {
    const Series& se = series[k];
    std::ostringstream pts;
    for (std::size_t i = 0; i < se.values.size() && i < layers.size(); ++i) {
      if (!std::isfinite(se.values[i])) continue;
      pts << x_of(i) << ',' << y_of(se.values[i]) << ' ';
      s << "<circle cx=\"" << x_of(i) << "\" cy=\"" << y_of(se.values[i]) << "\" r=\"2.5\" fill=\""
        << se.colour << "\"><title>" << html_escape(se.label) << " " << html_escape(layers[i])
        << ": " << percent(se.values[i]) << "</title></circle>";
    }
    s << "<polyline fill=\"none\" stroke=\"" << se.colour << "\" stroke-width=\"1.5\""
      << (se.dashed ? " stroke-dasharray=\"4,3\"" : "") << " points=\"" << pts.str() << "\"/>";
    const double ly = kTop + 14.0 * static_cast<double>(k);
    s << "<line x1=\"" << kW - kRight + 10 << "\" x2=\"" << kW - kRight + 30 << "\" y1=\"" << ly
      << "\" y2=\"" << ly << "\" stroke=\"" << se.colour << "\""
      << (se.dashed ? " stroke-dasharray=\"4,3\"" : "") << "/><text x=\"" << kW - kRight + 34
      << "\" y=\"" << ly + 4 << "\" font-size=\"10\">" << html_escape(se.label) << "</text>";
  }
  s << "</svg>";
  return s.str();
}

std::string states_sentence(ProbePooling pooling) {
  if (pooling == ProbePooling::Token)
    return "the class token (vision) and end-of-text token (text) of each layer";
  return std::string(pooling == ProbePooling::Mean ? "Mean@l" : "Max@l") + ", the " +
         to_string(pooling) +
         " over tokens of each layer (vision: every token; text: up to end-of-text)";
}

}  // namespace

std::string probe_markdown(const ProbeReport& r) {
  const MlpProbeOptions& m = r.options.mlp;
  std::ostringstream md;
  md << "## Probes: " << r.model << "\n\n"
     << "Layer states: " << states_sentence(r.pooling)
     << "; \"final\" is the projected embedding.\n\n"
     << "MLP probes: " << m.depth << " Linear layers, hidden " << m.hidden
     << ", ReLU, sigmoid output, Adam lr " << m.learning_rate << ", " << m.epochs
     << " epochs, batch " << m.batch_size << "; " << r.options.seeds.size() << " seeds ("
     << r.options.seeds.front() << ".." << r.options.seeds.back()
     << "); split: " << describe_split(r.options)
     << ". Control: the labels of a random half of the items "
        "flipped. Accuracy in %, min and max over seeds.\n\n";
  auto table_for = [&](ProbeTask task, const std::string& title) {
    bool any = false;
    for (const auto& p : r.results)
      any = any || p.task == to_string(task);
    if (!any) return;
    md << "### " << title << "\n\n"
       << "| Layer | Train / test instances | Target min | Target max | Control min | Control "
          "max |\n|---|---:|---:|---:|---:|---:|\n";
    for (const auto& p : r.results) {
      if (p.task != to_string(task)) continue;
      md << "| " << p.layer << " | " << p.train_rows << " / " << p.test_rows << " | "
         << percent(p.target_min) << " | " << percent(p.target_max) << " | "
         << percent(p.control_min) << " | " << percent(p.control_max) << " |\n";
    }
    md << "\n";
  };
  table_for(ProbeTask::PairText, "Pair probe, text score (one image, which caption matches?)");
  table_for(ProbeTask::PairImage, "Pair probe, image score (one caption, which image matches?)");
  table_for(ProbeTask::TextOnly,
            "Text-only probe (which caption does a held-out variant belong to?)");
  if (!r.svm.empty()) {
    md << "### Linear separability of caption variants (SVM, C = " << r.options.svm_c
       << ")\n\n| Layer | Items | Target separated % | Control separated % | Target margin | "
          "Control margin |\n|---|---:|---:|---:|---:|---:|\n";
    for (const auto& s : r.svm) {
      md << "| " << s.layer << " | " << s.items << " | " << percent(s.target_separated) << " | "
         << percent(s.control_separated) << " | " << fixed(s.target_margin, 4) << " | "
         << fixed(s.control_margin, 4) << " |\n";
    }
    md << "\nPer item: caption 0 and its variants against caption 1 and its variants; margin = "
          "2/||w|| averaged over the separated items. Control: the same points with the two sets' "
          "members "
          "reassigned at random.\n";
  }
  if (!r.vision_layer_note.empty()) md << "\nLayers: " << r.vision_layer_note << ".\n";
  return md.str();
}

nlohmann::json probe_json(const ProbeReport& r) {
  const MlpProbeOptions& m = r.options.mlp;
  nlohmann::json j = {
      {"model", r.model},
      {"provenance", r.provenance},
      {"options",
       {{"depth", m.depth},
        {"hidden", m.hidden},
        {"learning_rate", m.learning_rate},
        {"epochs", m.epochs},
        {"batch_size", m.batch_size},
        {"seeds", r.options.seeds},
        {"train_share", r.options.train_share},
        {"svm_c", r.options.svm_c},
        {"split", describe_split(r.options)},
        {"split_kind", to_string(r.options.paper_split ? ProbeSplitKind::Paper : r.options.split)},
        {"control", "labels of a random half of the items flipped"}}},
      {"seconds", r.seconds},
      {"pooling", to_string(r.pooling)},
      {"mlp_probes", nlohmann::json::array()},
      {"svm", nlohmann::json::array()}};
  for (const auto& p : r.results) {
    nlohmann::json runs = nlohmann::json::array();
    for (const auto& run : p.runs) {
      runs.push_back({{"seed", run.seed},
                      {"target_test_percent", run.target_test * 100},
                      {"control_test_percent", run.control_test * 100},
                      {"target_train_percent", run.target_train * 100},
                      {"control_train_percent", run.control_train * 100}});
    }
    j["mlp_probes"].push_back({{"task", p.task},
                               {"layer", p.layer},
                               {"inputs", p.inputs},
                               {"train_items", p.train_items},
                               {"test_items", p.test_items},
                               {"train_instances", p.train_rows},
                               {"test_instances", p.test_rows},
                               {"target_min_percent", p.target_min * 100},
                               {"target_max_percent", p.target_max * 100},
                               {"control_min_percent", p.control_min * 100},
                               {"control_max_percent", p.control_max * 100},
                               {"runs", runs}});
  }
  for (const auto& s : r.svm) {
    j["svm"].push_back({{"layer", s.layer},
                        {"items", s.items},
                        {"target_separated_percent", s.target_separated * 100},
                        {"control_separated_percent", s.control_separated * 100},
                        {"target_margin", finite_or_null(s.target_margin)},
                        {"control_margin", finite_or_null(s.control_margin)}});
  }
  return j;
}

std::string probe_html(const ProbeReport& r) {
  // Per-layer accuracy plots (SVG) for each probe and for SVM separability.
  std::ostringstream plots;
  plots << "<h2>Per-layer plots</h2>";
  for (ProbeTask task : {ProbeTask::PairText, ProbeTask::PairImage, ProbeTask::TextOnly}) {
    std::vector<std::string> names;
    Series tmax{"target max", "#4e79a7", false, {}}, tmin{"target min", "#4e79a7", true, {}},
        cmax{"control max", "#e15759", false, {}}, cmin{"control min", "#e15759", true, {}};
    for (const auto& p : r.results) {
      if (p.task != to_string(task)) continue;
      names.push_back(p.layer);
      tmax.values.push_back(p.target_max);
      tmin.values.push_back(p.target_min);
      cmax.values.push_back(p.control_max);
      cmin.values.push_back(p.control_min);
    }
    if (!names.empty()) {
      plots << "<div class=\"chart\">"
            << layer_chart(std::string(to_string(task)) + " probe: test accuracy by layer", names,
                           {tmax, tmin, cmax, cmin})
            << "</div>";
    }
  }
  if (!r.svm.empty()) {
    std::vector<std::string> names;
    Series target{"target separated", "#59a14f", false, {}},
        control{"control separated", "#e15759", true, {}};
    for (const auto& s : r.svm) {
      names.push_back(s.layer);
      target.values.push_back(s.target_separated);
      control.values.push_back(s.control_separated);
    }
    plots << "<div class=\"chart\">"
          << layer_chart("SVM separability: share of items separated by layer", names,
                         {target, control})
          << "</div>";
  }
  return markdown_html("Probes: " + r.model, probe_markdown(r), r.provenance, plots.str());
}

}  // namespace winokit
