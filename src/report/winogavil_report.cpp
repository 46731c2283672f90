#include "winokit/winogavil_report.hpp"

#include <cmath>
#include <sstream>

#include "winokit/report.hpp"
#include "winokit/table.hpp"

namespace winokit {

using nlohmann::json;

int truncated_percent(double p) {
  return static_cast<int>(std::floor(p * 100.0 + 1e-9));
}

std::string chance_definition() {
  return "chance: the exact expected Jaccard index of a uniformly random k-subset of the n "
         "candidates (hypergeometric), per instance, averaged";
}

namespace {

std::string pct1(double p) {
  return percent(p, 1);
}

std::string row(const AssociationGroup& g) {
  std::ostringstream s;
  s << "| " << g.name << " | " << g.n << " | " << pct1(g.mean) << " | " << truncated_percent(g.mean)
    << " | " << interval_text(g.interval, 1) << " | " << pct1(g.chance) << " | "
    << (g.human ? pct1(*g.human) : std::string("-"));
  if (g.recall) s << " | " << pct1(*g.recall);
  s << " |\n";
  return s.str();
}

json group_json(const AssociationGroup& g) {
  json j = {{"name", g.name},
            {"n", g.n},
            {"mean_jaccard_percent", g.mean * 100},
            {"truncated_percent", truncated_percent(g.mean)},
            {"interval",
             {{"low", g.interval.low * 100},
              {"high", g.interval.high * 100},
              {"method", "seeded bootstrap percentile"}}},
            {"chance_percent", g.chance * 100},
            {"human_percent", g.human ? json(*g.human * 100) : json(nullptr)},
            {"human_n", g.human_n}};
  if (g.recall) j["recall_percent"] = *g.recall * 100;
  return j;
}

}  // namespace

std::string markdown_associations(const AssociationResult& r, const std::string& model) {
  std::ostringstream md;
  const int level = static_cast<int>(r.options.confidence * 100 + 0.5);
  const std::string head = "| Group | N | " + model + " (%) | truncated | " +
                           std::to_string(level) + "% bootstrap | Random chance (%) | Humans (%) |";
  md << "## WinoGAViL: " << model << " (N = " << r.overall.n << ")\n\n"
     << head << "\n|---|---:|---:|---:|---:|---:|---:|\n"
     << row(r.overall);
  for (const auto& b : r.breakdowns) {
    const bool types = b.key == "association_type";
    md << "\n### " << b.title << "\n\nGrouping: " << b.note << ".\n\n"
       << head << (types ? " Recall (%) |" : "") << "\n|---|---:|---:|---:|---:|---:|---:|"
       << (types ? "---:|" : "") << "\n";
    for (const auto& g : b.groups)
      md << row(g);
  }
  md << "\nMean Jaccard index between the selected and the gold associations, as a percentage; "
        "truncated: the integer part, as the published tables print it. Humans: the file's "
        "solvers_jaccard_mean. "
     << chance_definition() << ". Intervals: seeded bootstrap over instances ("
     << r.options.bootstrap_resamples << " resamples, seed " << r.options.seed
     << ", percentile).\n";
  return md.str();
}

json json_associations(const AssociationResult& r, const std::string& model,
                       const json& provenance) {
  json breakdowns = json::array();
  for (const auto& b : r.breakdowns) {
    json groups = json::array();
    for (const auto& g : b.groups)
      groups.push_back(group_json(g));
    breakdowns.push_back(
        {{"key", b.key}, {"title", b.title}, {"grouping", b.note}, {"groups", groups}});
  }
  return {{"model", model},
          {"provenance", provenance},
          {"methods",
           {{"metric", "mean Jaccard index, percent"},
            {"chance", chance_definition()},
            {"interval", "seeded bootstrap over instances, percentile"}}},
          {"overall", group_json(r.overall)},
          {"breakdowns", breakdowns}};
}

std::string csv_associations(const AssociationResult& r) {
  std::ostringstream out;
  out << "breakdown,group,n,mean_jaccard_percent,truncated_percent,bootstrap_low,bootstrap_high,"
         "chance_percent,human_percent,recall_percent\n";
  auto line = [&](const std::string& key, const AssociationGroup& g) {
    out << csv_escape(key) << ',' << csv_escape(g.name) << ',' << g.n << ',' << percent(g.mean, 4)
        << ',' << truncated_percent(g.mean) << ',' << percent(g.interval.low, 4) << ','
        << percent(g.interval.high, 4) << ',' << percent(g.chance, 4) << ','
        << (g.human ? percent(*g.human, 4) : "") << ',' << (g.recall ? percent(*g.recall, 4) : "")
        << '\n';
  };
  line("overall", r.overall);
  for (const auto& b : r.breakdowns) {
    for (const auto& g : b.groups)
      line(b.key, g);
  }
  return out.str();
}

std::string html_associations(const AssociationResult& r, const std::string& model,
                              const json& provenance) {
  std::ostringstream b;
  b << "<h1>WinoGAViL: " << html_escape(model) << "</h1><div class=\"headline\"><p><b>"
    << html_escape(model) << "</b>: mean Jaccard <b>" << pct1(r.overall.mean) << "</b> "
    << interval_text(r.overall.interval, 1) << " over N = " << r.overall.n
    << " associations; chance " << pct1(r.overall.chance)
    << (r.overall.human ? ", humans " + pct1(*r.overall.human) : std::string()) << ".</p>"
    << "<p class=\"note\">What to read: the Jaccard index between the model's picks and the "
       "human associations, in percent, per number of candidates; the dashed line is what "
       "random picks get.</p></div>";
  auto table = [&](const std::string& title, const std::vector<AssociationGroup>& groups) {
    constexpr double kBarHeight = 18, kWidth = 260, kLabel = 90;
    const double svg_w = kLabel + kWidth + 60;
    const double svg_h = kBarHeight * static_cast<double>(groups.size()) + 10;
    b << "<h2>" << html_escape(title) << "</h2><div class=\"chart\"><svg role=\"img\" width=\""
      << svg_w << "\" height=\"" << svg_h << "\" viewBox=\"0 0 " << svg_w << " " << svg_h
      << "\"><title>" << html_escape(title) << "</title>";
    for (std::size_t i = 0; i < groups.size(); ++i) {
      const auto& g = groups[i];
      const double y = static_cast<double>(i) * kBarHeight;
      b << "<text x=\"0\" y=\"" << y + 13 << "\" font-size=\"12\">" << html_escape(g.name)
        << "</text><rect class=\"bar\" x=\"" << kLabel << "\" y=\"" << y + 2 << "\" width=\""
        << kWidth * g.mean << "\" height=\"" << kBarHeight - 4 << "\"><title>" << pct1(g.mean)
        << "</title></rect><line class=\"chance\" x1=\"" << kLabel + kWidth * g.chance << "\" x2=\""
        << kLabel + kWidth * g.chance << "\" y1=\"" << y << "\" y2=\"" << y + kBarHeight << "\"/>";
    }
    b << "</svg></div><div class=\"scroll\"><table><tr><th>Group</th><th>N</th><th>Mean "
         "Jaccard (%)</th><th>Interval (%)</th><th>Chance (%)</th><th>Humans (%)</th></tr>";
    for (const auto& g : groups) {
      b << "<tr><td>" << html_escape(g.name) << "</td><td>" << g.n << "</td><td>" << pct1(g.mean)
        << "</td><td>" << interval_text(g.interval, 1) << "</td><td>" << pct1(g.chance)
        << "</td><td>" << (g.human ? pct1(*g.human) : "-") << "</td></tr>";
    }
    b << "</table></div>";
  };
  table("Overall", {r.overall});
  for (const auto& bd : r.breakdowns)
    table(bd.title, bd.groups);
  b << "<p class=\"note\">" << html_escape(chance_definition()) << " (dashed lines).</p>"
    << provenance_html(provenance);
  return html_page("WinoGAViL: " + model, b.str());
}

std::string predictions_csv(const AssociationDataset& ds,
                            const std::vector<std::vector<std::string>>& predictions,
                            const AssociationResult& r, const std::string& model) {
  std::ostringstream out;
  const std::string pred_col = model + "_predictions", jac_col = model + "_jaccard";
  // Replace the columns when the file already has them (re-scoring a predictions file).
  auto existing_pred = ds.table.find_column({pred_col});
  auto existing_jac = ds.table.find_column({jac_col});
  std::vector<std::string> header = ds.table.header;
  if (!existing_pred) header.push_back(pred_col);
  if (!existing_jac) header.push_back(jac_col);
  for (std::size_t i = 0; i < header.size(); ++i)
    out << (i ? "," : "") << csv_escape(header[i]);
  out << "\n";
  for (std::size_t i = 0; i < ds.instances.size(); ++i) {
    std::vector<std::string> cells = ds.table.rows[ds.instances[i].row].cells;
    char jac[32];
    std::snprintf(jac, sizeof jac, "%.6g", r.per_instance[i]);
    const std::string pred = json(predictions[i]).dump();
    if (existing_pred)
      cells[*existing_pred] = pred;
    else
      cells.push_back(pred);
    if (existing_jac)
      cells[*existing_jac] = jac;
    else
      cells.push_back(jac);
    for (std::size_t c = 0; c < cells.size(); ++c)
      out << (c ? "," : "") << csv_escape(cells[c]);
    out << "\n";
  }
  return out.str();
}

}  // namespace winokit
