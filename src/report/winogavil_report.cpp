#include "winokit/report/winogavil_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "winokit/io/table.hpp"
#include "winokit/report/csv_report.hpp"
#include "winokit/report/example_browser.hpp"
#include "winokit/report/format.hpp"
#include "winokit/report/html_report.hpp"
#include "winokit/report/json_report.hpp"
#include "winokit/report/markdown.hpp"

namespace winokit {

using nlohmann::json;

int truncated_percent(double p) {
  return static_cast<int>(std::floor(p * 100.0 + 1e-9));
}

std::string chance_definition() {
  return "chance: the exact expected Jaccard index of a uniformly random k-subset of the n "
         "candidates (hypergeometric), per instance, averaged";
}

std::string paper_chance_note() {
  return "Paper's chance: the random-chance figures the WinoGAViL paper quotes per candidate "
         "count (38/34/24/17 for 5/6/10/12). They differ from the exact expectation because it "
         "weights each instance by its own k, while the quoted figures are consistent with "
         "averaging over the possible k uniformly (k = 2, 3 for 5 candidates gives 38.0; "
         "k = 2-5 for 10 gives 24.1)";
}

std::string solvers_note() {
  return "Solvers in the file: the mean of the file's solvers_jaccard_mean, the game's own "
         "solvers; the published instances were kept only when that score was >= 80, so it is "
         "inflated by the selection and is not the paper's human performance (new annotators on "
         "a sample: see the published reference values)";
}

namespace {

std::string pct1(double p) {
  return percent(p, 1);
}

std::optional<int> group_paper_chance(const std::string& name) {
  for (int n : {5, 6, 10, 12}) {
    if (name == std::to_string(n)) return paper_random_chance_percent(n);
  }
  return std::nullopt;
}

std::string row(const AssociationGroup& g, bool paper_chance) {
  std::ostringstream s;
  s << "| " << g.name << " | " << g.n << " | " << pct1(g.mean) << " | " << truncated_percent(g.mean)
    << " | " << interval_text(g.interval, 1) << " | " << pct1(g.chance) << " | ";
  if (paper_chance) {
    auto p = group_paper_chance(g.name);
    s << (p ? std::to_string(*p) : std::string("-")) << " | ";
  }
  s << (g.human ? pct1(*g.human) : std::string("-"));
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
            {"solvers_in_file_percent", g.human ? json(*g.human * 100) : json(nullptr)},
            {"solvers_in_file_n", g.human_n}};
  if (auto p = group_paper_chance(g.name)) j["paper_chance_percent"] = *p;
  if (g.recall) j["recall_percent"] = *g.recall * 100;
  return j;
}

}  // namespace

std::string markdown_associations(const AssociationResult& r, const std::string& model) {
  std::ostringstream md;
  const int level = static_cast<int>(r.options.confidence * 100 + 0.5);
  const std::string head = "| Group | N | " + model + " (%) | truncated | " +
                           std::to_string(level) + "% bootstrap | Random chance, exact (%) |";
  const std::string tail = " Solvers in the file (%) |";
  md << "## WinoGAViL: " << model << " (N = " << r.overall.n << ")\n\n"
     << head << tail << "\n|---|---:|---:|---:|---:|---:|---:|\n"
     << row(r.overall, false);
  for (const auto& b : r.breakdowns) {
    const bool types = b.key == "association_type";
    const bool candidates = b.key == "candidates";
    md << "\n### " << b.title << "\n\nGrouping: " << b.note << ".\n\n"
       << head << (candidates ? " Paper's chance (%) |" : "") << tail
       << (types ? " Recall (%) |" : "") << "\n|---|---:|---:|---:|---:|---:|---:|"
       << (candidates ? "---:|" : "") << (types ? "---:|" : "") << "\n";
    for (const auto& g : b.groups)
      md << row(g, candidates);
  }
  if (!r.cross.empty()) {
    std::set<int> ks;
    for (const auto& c : r.cross)
      ks.insert(c.k);
    md << "\n### Candidates x associations (Table 10)\n\nMean Jaccard (%) of " << model
       << " with N in parentheses, by number of candidates (rows) and of associations k "
          "(columns).\n\n| Candidates |";
    for (int k : ks)
      md << " k = " << k << " |";
    md << "\n|---|";
    for (std::size_t i = 0; i < ks.size(); ++i)
      md << "---:|";
    md << "\n";
    int current = -1;
    std::map<int, std::string> line;
    auto flush = [&] {
      if (current < 0) return;
      md << "| " << current << " |";
      for (int k : ks) {
        auto it = line.find(k);
        md << " " << (it == line.end() ? std::string("-") : it->second) << " |";
      }
      md << "\n";
      line.clear();
    };
    for (const auto& c : r.cross) {
      if (c.candidates != current) {
        flush();
        current = c.candidates;
      }
      line[c.k] = pct1(c.mean) + " (" + std::to_string(c.n) + ")";
    }
    flush();
    const bool rival = std::any_of(r.cross.begin(), r.cross.end(),
                                   [](const AssociationCell& c) { return c.rival.has_value(); });
    if (rival) {
      md << "\nThe paper's model column of Table 10: the game's rival (CLIP RN50 in the official "
            "backend), 100 - score_fool_the_ai of each instance, mean (%) with N in "
            "parentheses.\n\n| Candidates |";
      for (int k : ks)
        md << " k = " << k << " |";
      md << "\n|---|";
      for (std::size_t i = 0; i < ks.size(); ++i)
        md << "---:|";
      md << "\n";
      current = -1;
      for (const auto& c : r.cross) {
        if (c.candidates != current) {
          flush();
          current = c.candidates;
        }
        if (c.rival) line[c.k] = pct1(*c.rival) + " (" + std::to_string(c.rival_n) + ")";
      }
      flush();
    }
  }
  md << "\n### Published reference values\n\n| What | Value | Source |\n|---|---|---|\n";
  for (const auto& p : winogavil_published_references())
    md << "| " << p.what << " | " << p.value << " | " << p.source << " |\n";
  md << "\nMean Jaccard index between the selected and the gold associations, as a percentage; "
        "truncated: the integer part, as the published tables print it. "
     << solvers_note() << ". " << chance_definition() << ". " << paper_chance_note()
     << ". Intervals: seeded bootstrap over instances (" << r.options.bootstrap_resamples
     << " resamples, seed " << r.options.seed << ", percentile).\n";
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
  json cross = json::array();
  for (const auto& c : r.cross) {
    cross.push_back({{"candidates", c.candidates},
                     {"k", c.k},
                     {"n", c.n},
                     {"mean_jaccard_percent", c.mean * 100},
                     {"rival_jaccard_percent", c.rival ? json(*c.rival * 100) : json(nullptr)},
                     {"rival_n", c.rival_n},
                     {"chance_percent", c.chance * 100}});
  }
  json refs = json::array();
  for (const auto& p : winogavil_published_references())
    refs.push_back({{"what", p.what}, {"value", p.value}, {"source", p.source}});
  return {{"model", model},
          {"provenance", provenance},
          {"methods",
           {{"metric", "mean Jaccard index, percent"},
            {"chance", chance_definition()},
            {"paper_chance", paper_chance_note()},
            {"solvers_in_file", solvers_note()},
            {"interval", "seeded bootstrap over instances, percentile"}}},
          {"overall", group_json(r.overall)},
          {"breakdowns", breakdowns},
          {"candidates_by_k", cross},
          {"published_references", refs}};
}

std::string csv_associations(const AssociationResult& r) {
  std::ostringstream out;
  out << "breakdown,group,n,mean_jaccard_percent,truncated_percent,bootstrap_low,bootstrap_high,"
         "chance_percent,paper_chance_percent,solvers_in_file_percent,recall_percent\n";
  auto line = [&](const std::string& key, const AssociationGroup& g) {
    out << csv_escape(key) << ',' << csv_escape(g.name) << ',' << g.n << ',' << percent(g.mean, 4)
        << ',' << truncated_percent(g.mean) << ',' << percent(g.interval.low, 4) << ','
        << percent(g.interval.high, 4) << ',' << percent(g.chance, 4) << ','
        << (group_paper_chance(g.name) ? std::to_string(*group_paper_chance(g.name)) : "") << ','
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
    << (r.overall.human ? "; the game's own solvers (in the file, kept at >= 80 by selection, "
                          "not human performance) " +
                              pct1(*r.overall.human)
                        : std::string())
    << ".</p>"
    << "<p class=\"note\">What to read: the Jaccard index between the model's picks and the "
       "human associations, in percent, per number of candidates; the dashed line is what "
       "random picks get. Human performance is in the published reference values below.</p></div>";
  auto table = [&](const std::string& title, const std::vector<AssociationGroup>& groups) {
    // Horizontal bars on a 0-100 axis with gridlines every 25, each group's name above its bar,
    // the bar's value printed at its end and the exact random chance as a dashed mark: readable
    // without hovering, and narrow enough for a phone at full size (names past 36 characters
    // are shortened; the full name stays in the tooltip and the table below).
    constexpr double kRow = 34, kBar = 14, kLeft = 12, kWidth = 300, kRight = 44, kTop = 4,
                     kAxis = 40;
    constexpr std::size_t kMaxLabel = 36;
    const double svg_w = kLeft + kWidth + kRight;
    const double plot_h = kRow * static_cast<double>(groups.size());
    const double svg_h = kTop + plot_h + kAxis;
    auto x_of = [&](double proportion) { return kLeft + kWidth * proportion; };
    b << "<h2>" << html_escape(title) << "</h2><div class=\"chart\"><svg role=\"img\" width=\""
      << fixed(svg_w, 0) << "\" height=\"" << fixed(svg_h, 0) << "\" viewBox=\"0 0 "
      << fixed(svg_w, 0) << " " << fixed(svg_h, 0) << "\"><title>" << html_escape(title)
      << ": mean Jaccard (%) per group, dashed: random chance</title>";
    for (int tick = 0; tick <= 100; tick += 25) {
      const double x = x_of(tick / 100.0);
      b << "<line class=\"grid\" x1=\"" << fixed(x, 1) << "\" x2=\"" << fixed(x, 1) << "\" y1=\""
        << kTop << "\" y2=\"" << fixed(kTop + plot_h + 4, 1) << "\"/><text class=\"tick\" x=\""
        << fixed(x, 1) << "\" y=\"" << fixed(kTop + plot_h + 16, 1)
        << "\" font-size=\"11\" text-anchor=\"middle\">" << tick << "</text>";
    }
    b << "<text class=\"axis-title\" x=\"" << fixed(x_of(0.5), 1) << "\" y=\""
      << fixed(kTop + plot_h + 33, 1)
      << "\" font-size=\"12\" text-anchor=\"middle\">Mean Jaccard (%)</text>";
    for (std::size_t i = 0; i < groups.size(); ++i) {
      const auto& g = groups[i];
      const double y = kTop + static_cast<double>(i) * kRow;
      const std::string label =
          g.name.size() > kMaxLabel ? g.name.substr(0, kMaxLabel - 3) + "..." : g.name;
      b << "<g><title>" << html_escape(g.name) << ": " << pct1(g.mean) << " (N = " << g.n
        << "), chance " << pct1(g.chance) << "</title><text class=\"label\" x=\"" << fixed(kLeft, 1)
        << "\" y=\"" << fixed(y + 12, 1) << "\" font-size=\"12\">" << html_escape(label)
        << " (N = " << g.n << ")</text><rect class=\"bar\" x=\"" << fixed(kLeft, 1) << "\" y=\""
        << fixed(y + 16, 1) << "\" width=\"" << fixed(kWidth * g.mean, 1) << "\" height=\"" << kBar
        << "\"/><line class=\"chance\" x1=\"" << fixed(x_of(g.chance), 1) << "\" x2=\""
        << fixed(x_of(g.chance), 1) << "\" y1=\"" << fixed(y + 14, 1) << "\" y2=\""
        << fixed(y + 16 + kBar + 2, 1) << "\"/><text class=\"value\" x=\""
        << fixed(x_of(g.mean) + 4, 1) << "\" y=\"" << fixed(y + 27, 1) << "\" font-size=\"11\">"
        << pct1(g.mean) << "</text></g>";
    }
    b << "</svg></div><div class=\"scroll\"><table><tr><th>Group</th><th>N</th><th>Mean "
         "Jaccard (%)</th><th>Interval (%)</th><th>Chance (exact, %)</th><th>Solvers in the file "
         "(%)</th></tr>";
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
  if (!r.cross.empty()) {
    b << "<h2>Candidates x associations (Table 10)</h2><div "
         "class=\"scroll\"><table><tr><th>Candidates</th><th>k</th>"
         "<th>N</th><th>Mean Jaccard</th><th>Chance (exact)</th><th>Game rival (100 - "
         "fool-the-AI; N)</th></tr>";
    for (const auto& c : r.cross) {
      b << "<tr><td>" << c.candidates << "</td><td>" << c.k << "</td><td>" << c.n << "</td><td>"
        << pct1(c.mean) << "</td><td>" << pct1(c.chance) << "</td><td>"
        << (c.rival ? pct1(*c.rival) + " (" + std::to_string(c.rival_n) + ")" : "-")
        << "</td></tr>";
    }
    b << "</table></div>";
  }
  b << "<h2>Published reference values</h2><div "
       "class=\"scroll\"><table><tr><th>What</th><th>Value</th><th>Source</th>"
       "</tr>";
  for (const auto& p : winogavil_published_references()) {
    b << "<tr><td>" << html_escape(p.what) << "</td><td>" << html_escape(p.value) << "</td><td>"
      << html_escape(p.source) << "</td></tr>";
  }
  b << "</table></div><p>" << html_escape(solvers_note()) << ".</p><p>"
    << html_escape(paper_chance_note()) << ".</p>";
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

namespace winokit {

std::string markdown_supervised(const SupervisedResult& sup, std::size_t runs_per_group) {
  char line[320];
  std::ostringstream md;
  md << "\n### Supervised baseline (" << runs_per_group << " runs per group)\n\n"
     << "Protocol: " << sup.protocol << ".\n";
  for (const auto& g : sup.groups) {
    md << "\n#### Test on " << g.name
       << "\n\n| Run | Train pairs | Validation | Test | Epoch tested | Supervised (%) | "
          "Zero-shot (%) | By candidates (%) |\n"
       << "|---:|---:|---:|---:|---:|---:|---:|---|\n";
    for (const auto& r : g.runs) {
      std::string per;
      for (const auto& [c, v] : r.by_candidates) {
        char b[64];
        std::snprintf(b, sizeof b, "%s%d: %.1f (N %zu)", per.empty() ? "" : "; ", c, v.first * 100,
                      v.second);
        per += b;
      }
      std::snprintf(line, sizeof line, "| %llu | %zu | %zu | %zu | %d | %.1f | %.1f | %s |\n",
                    static_cast<unsigned long long>(r.seed), r.train_pairs, r.validation, r.test,
                    r.epoch, r.test_jaccard * 100, r.zero_shot_jaccard * 100, per.c_str());
      md << line;
    }
    std::snprintf(line, sizeof line,
                  "\nTest Jaccard on %s, mean +- standard deviation over runs: supervised "
                  "%.1f +- %.1f, zero-shot on the same test instances %.1f +- %.1f.\n",
                  g.name.c_str(), g.mean * 100, g.stddev * 100, g.zero_shot_mean * 100,
                  g.zero_shot_std * 100);
    md << line;
  }
  return md.str();
}

json json_supervised(const SupervisedResult& sup) {
  json groups = json::array();
  for (const auto& g : sup.groups) {
    json runs = json::array();
    for (const auto& r : g.runs) {
      json per_json = json::object();
      for (const auto& [c, v] : r.by_candidates)
        per_json[std::to_string(c)] = {{"percent", v.first * 100}, {"n", v.second}};
      runs.push_back({{"seed", r.seed},
                      {"train_pairs", r.train_pairs},
                      {"validation", r.validation},
                      {"test", r.test},
                      {"epoch_tested", r.epoch},
                      {"supervised_percent", r.test_jaccard * 100},
                      {"zero_shot_percent", r.zero_shot_jaccard * 100},
                      {"by_candidates", per_json}});
    }
    groups.push_back({{"group", g.name},
                      {"runs", runs},
                      {"supervised_mean_percent", g.mean * 100},
                      {"supervised_std_percent", g.stddev * 100},
                      {"zero_shot_mean_percent", g.zero_shot_mean * 100},
                      {"zero_shot_std_percent", g.zero_shot_std * 100}});
  }
  return {{"protocol", sup.protocol}, {"groups", groups}};
}

}  // namespace winokit
