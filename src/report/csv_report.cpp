#include <sstream>

#include "winokit/io/table.hpp"
#include "winokit/report/csv_report.hpp"
#include "winokit/report/example_browser.hpp"
#include "winokit/report/format.hpp"
#include "winokit/report/html_report.hpp"
#include "winokit/report/json_report.hpp"
#include "winokit/report/markdown.hpp"

namespace winokit {

namespace {

constexpr const char* kHeader =
    "breakdown,group,n,metric,percent,correct,chance_percent,fold_t_low,fold_t_high,"
    "bootstrap_percentile_low,bootstrap_percentile_high,bootstrap_bca_low,bootstrap_bca_high,"
    "p_vs_chance,above_chance_paper,significant_vs_chance\n";

std::string num(double proportion) {
  return std::isfinite(proportion) ? percent(proportion, 4) : "";
}

void group_rows(std::ostringstream& out, const std::string& breakdown, const GroupStats& g) {
  for (std::size_t m = 0; m < kMetricCount; ++m) {
    const auto& s = g.metrics[m];
    char p[32];
    std::snprintf(p, sizeof p, "%.6g", s.p_vs_chance);
    out << csv_escape(breakdown) << ',' << csv_escape(g.name) << ',' << g.n << ','
        << kMetricNames[m] << ',' << num(s.value) << ',' << s.correct << ',' << num(kChance[m])
        << ',' << (s.fold_t ? num(s.fold_t->ci.low) : "") << ','
        << (s.fold_t ? num(s.fold_t->ci.high) : "") << ',' << num(s.bootstrap_percentile.low) << ','
        << num(s.bootstrap_percentile.high) << ',' << num(s.bootstrap_bca.low) << ','
        << num(s.bootstrap_bca.high) << ',' << p << ',' << (s.above_chance_paper ? "true" : "false")
        << ',' << (s.above_chance ? "true" : "false") << '\n';
  }
}

}  // namespace

std::string csv_report(const EvalResult& r, const ReportContext&) {
  std::ostringstream out;
  out << kHeader;
  group_rows(out, "overall", r.overall);
  for (const auto& b : r.breakdowns) {
    for (const auto& g : b.groups)
      group_rows(out, b.key, g);
  }
  return out.str();
}

std::string csv_compare(const CompareResult& c) {
  std::ostringstream out;
  out << kHeader;
  for (const auto& g : c.leaderboard)
    group_rows(out, "leaderboard", g);
  return out.str();
}

}  // namespace winokit
