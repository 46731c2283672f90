#include "winokit/report/sections.hpp"

#include <algorithm>
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

}  // namespace winokit
