#include "winokit/report/sections.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "winokit/io/table.hpp"

namespace winokit {

namespace {

std::string fixed2(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", v);
  return b;
}

// Markdown table cells may not hold a bare '|'.
std::string cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\";
    out += c == '\n' ? ' ' : c;
  }
  return out;
}

std::string metric_line(const BenchmarkMetric& m) {
  std::string line = "| " + cell(m.name) + " | " + fixed2(m.percent) + " | " + std::to_string(m.n);
  line += " | ";
  if (m.low && m.high) line += "[" + fixed2(*m.low) + ", " + fixed2(*m.high) + "] " + m.method;
  return line + " |\n";
}

}  // namespace

std::string summary_markdown(const Benchmark& benchmark, const BenchmarkData& data,
                             const BenchmarkSummary& summary, const std::string& model,
                             const nlohmann::json& provenance) {
  std::ostringstream md;
  md << "# " << benchmark.title() << ": " << model << "\n\n"
     << benchmark.description() << ". " << data.items.size() << " items from " << data.file.string()
     << " (sha256 " << data.sha256.substr(0, 12) << ").\n\n"
     << "| Metric | % | N | Interval |\n|---|---:|---:|---|\n";
  for (const auto& m : summary.metrics)
    md << metric_line(m);
  for (const auto& s : summary.sections) {
    md << "\n## " << s.title << "\n\n";
    if (!s.note.empty()) md << s.note << "\n\n";
    md << "|";
    for (const auto& c : s.columns)
      md << " " << cell(c) << " |";
    md << "\n|";
    for (std::size_t i = 0; i < s.columns.size(); ++i)
      md << (i == 0 ? "---|" : "---:|");
    md << "\n";
    for (const auto& row : s.rows) {
      md << "|";
      for (const auto& v : row)
        md << " " << cell(v) << " |";
      md << "\n";
    }
  }
  md << "\n<details><summary>Provenance</summary>\n\n```json\n"
     << provenance.dump(2) << "\n```\n</details>\n";
  return md.str();
}

nlohmann::json summary_json(const Benchmark& benchmark, const BenchmarkData& data,
                            const BenchmarkSummary& summary, const std::string& model,
                            const nlohmann::json& provenance) {
  nlohmann::json metrics = nlohmann::json::array();
  for (const auto& m : summary.metrics) {
    nlohmann::json j = {{"name", m.name}, {"percent", m.percent}, {"n", m.n}};
    if (m.low && m.high) j["interval"] = {{"low", *m.low}, {"high", *m.high}, {"method", m.method}};
    metrics.push_back(j);
  }
  nlohmann::json sections = nlohmann::json::array();
  for (const auto& s : summary.sections) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& r : s.rows) {
      nlohmann::json row = nlohmann::json::object();
      for (std::size_t i = 0; i < r.size() && i < s.columns.size(); ++i)
        row[s.columns[i]] = r[i];
      rows.push_back(row);
    }
    sections.push_back({{"title", s.title}, {"note", s.note}, {"rows", rows}});
  }
  return {{"benchmark", benchmark.name()}, {"title", benchmark.title()}, {"model", model},
          {"items", data.items.size()},    {"metrics", metrics},         {"sections", sections},
          {"details", summary.details},    {"provenance", provenance}};
}

std::string summary_per_item_csv(const BenchmarkSummary& summary) {
  std::vector<std::string> columns;
  const nlohmann::json& items = summary.details.value("per_item", nlohmann::json::array());
  for (const auto& item : items) {
    for (const auto& [k, v] : item.items()) {
      if (std::find(columns.begin(), columns.end(), k) == columns.end()) columns.push_back(k);
    }
  }
  // "id" first, then the other keys in JSON (alphabetical) order.
  if (auto id = std::find(columns.begin(), columns.end(), "id"); id != columns.end()) {
    std::rotate(columns.begin(), id, id + 1);
  }
  std::string out;
  for (std::size_t i = 0; i < columns.size(); ++i)
    out += (i ? "," : "") + csv_escape(columns[i]);
  out += "\n";
  for (const auto& item : items) {
    for (std::size_t i = 0; i < columns.size(); ++i) {
      std::string v;
      if (item.contains(columns[i])) {
        const auto& x = item[columns[i]];
        v = x.is_string() ? x.get<std::string>() : x.dump();
      }
      out += (i ? "," : "") + csv_escape(v);
    }
    out += "\n";
  }
  return out;
}

namespace {

std::string interval_cell(const Interval& i) {
  return i.valid() ? "[" + fixed2(i.low) + ", " + fixed2(i.high) + "]" : "-";
}

std::string p_cell(double p) {
  char b[32];
  std::snprintf(b, sizeof b, p < 1e-4 ? "%.2e" : "%.4f", p);
  return b;
}

std::string signed2(double v) {
  const std::string s = fixed2(v);
  return v > 0 ? "+" + s : s == "-0.00" ? "0.00" : s;
}

nlohmann::json interval_json(const Interval& i) {
  if (!i.valid()) return nullptr;
  return {{"low", i.low}, {"high", i.high}};
}

}  // namespace

std::string benchmark_compare_markdown(const BenchmarkCompareResult& r, const std::string& title) {
  std::ostringstream md;
  const int level = static_cast<int>(std::lround(r.options.confidence * 100));
  md << "# " << title << ": " << r.names.size() << " runs compared\n\n"
     << "Per item outcomes of " << r.items.size()
     << " items; a tie is wrong. Intervals: seeded bootstrap percentile (" << level << "%, "
     << r.options.bootstrap_resamples << " resamples, seed " << r.options.seed
     << "; the same resamples for every run). Paired tests: the items one run gets right and "
        "the other wrong, the exact two-sided McNemar test on those counts, and the paired "
        "bootstrap interval of the difference.\n";
  for (const std::string& check : r.checks) {
    md << "\n## " << cell(check) << "\n\n| Run | Subset | N | Right | % | Interval |\n"
       << "|---|---|---:|---:|---:|---|\n";
    for (const auto& a : r.accuracy) {
      if (a.check != check) continue;
      md << "| " << cell(a.run) << " | " << cell(a.subset.empty() ? "all" : a.subset) << " | "
         << a.n << " | " << a.right << " | " << fixed2(a.percent) << " | "
         << interval_cell(a.interval) << " |\n";
    }
    md << "\n| A | B | Subset | N | A only | B only | A - B (points) | Paired interval | "
          "McNemar p |\n|---|---|---|---:|---:|---:|---:|---|---:|\n";
    for (const auto& p : r.pairwise) {
      if (p.check != check) continue;
      md << "| " << cell(p.a) << " | " << cell(p.b) << " | "
         << cell(p.subset.empty() ? "all" : p.subset) << " | " << p.n << " | " << p.a_only << " | "
         << p.b_only << " | " << signed2(p.difference) << " | " << interval_cell(p.paired_bootstrap)
         << " | " << p_cell(p.p_mcnemar) << " |\n";
    }
  }
  return md.str();
}

nlohmann::json benchmark_compare_json(const BenchmarkCompareResult& r,
                                      const nlohmann::json& provenance) {
  nlohmann::json accuracy = nlohmann::json::array(), pairwise = nlohmann::json::array();
  for (const auto& a : r.accuracy)
    accuracy.push_back({{"run", a.run},
                        {"subset", a.subset.empty() ? nlohmann::json() : nlohmann::json(a.subset)},
                        {"check", a.check},
                        {"n", a.n},
                        {"right", a.right},
                        {"percent", a.percent},
                        {"interval", interval_json(a.interval)}});
  for (const auto& p : r.pairwise)
    pairwise.push_back({{"a", p.a},
                        {"b", p.b},
                        {"subset", p.subset.empty() ? nlohmann::json() : nlohmann::json(p.subset)},
                        {"check", p.check},
                        {"n", p.n},
                        {"a_right", p.a_right},
                        {"b_right", p.b_right},
                        {"a_only", p.a_only},
                        {"b_only", p.b_only},
                        {"difference_points", p.difference},
                        {"paired_bootstrap", interval_json(p.paired_bootstrap)},
                        {"p_mcnemar_exact", p.p_mcnemar}});
  return {{"benchmark", r.benchmark},
          {"runs", r.names},
          {"checks", r.checks},
          {"methods",
           {{"interval", "seeded bootstrap percentile"},
            {"paired_interval", "paired bootstrap percentile of the difference"},
            {"test", "exact two-sided McNemar on the discordant items"}}},
          {"accuracy", accuracy},
          {"pairwise", pairwise},
          {"provenance", provenance}};
}

std::string benchmark_compare_per_item_csv(const BenchmarkCompareResult& r) {
  std::string out = "id,subset";
  for (const auto& run : r.names)
    for (const auto& check : r.checks)
      out += "," + csv_escape(run + ": " + check);
  out += "\n";
  for (const auto& item : r.items) {
    out += csv_escape(item.id) + "," + csv_escape(item.subset);
    for (const auto& run : item.right)
      for (auto v : run)
        out += v ? ",1" : ",0";
    out += "\n";
  }
  return out;
}

}  // namespace winokit
