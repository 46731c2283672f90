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
