#include <algorithm>
#include <cstdio>
#include <sstream>

#include "winokit/report/markdown.hpp"

namespace winokit {

namespace {

std::string p_text(double p) {
  char buf[32];
  if (p < 1e-4) {
    std::snprintf(buf, sizeof buf, "%.1e", p);
  } else {
    std::snprintf(buf, sizeof buf, "%.4f", p);
  }
  return buf;
}

std::string r_text(double r) {
  if (!std::isfinite(r)) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f", r);
  return buf;
}

std::string above_list(const GroupStats& g, bool paper) {
  std::string out;
  for (std::size_t m = 0; m < kMetricCount; ++m) {
    const bool above = paper ? g.metrics[m].above_chance_paper : g.metrics[m].above_chance;
    if (above) out += (out.empty() ? "" : ", ") + std::string(kMetricNames[m]);
  }
  return out.empty() ? "-" : out;
}

std::string alpha_text(double alpha) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", alpha);
  return buf;
}

std::string ties_sentence(const TieCounts& t) {
  return "Ties: " + std::to_string(t.text + t.image) + " of " + std::to_string(t.comparisons) +
         " comparisons (text " + std::to_string(t.text) + ", image " + std::to_string(t.image) +
         ") in " + std::to_string(t.examples_with_ties) +
         " examples; a tie counts as wrong (strict >).";
}

}  // namespace

std::string markdown_report(const EvalResult& r, const ReportContext& ctx) {
  std::ostringstream md;
  const auto& o = r.overall;
  md << "## Winoground: " << ctx.model << " (N = " << o.n << ")\n\n";
  md << "| Model | Text | Image | Group |\n|---|---:|---:|---:|\n";
  md << "| " << ctx.model << " | " << percent(o.metrics[kText].value) << " | "
     << percent(o.metrics[kImage].value) << " | " << percent(o.metrics[kGroup].value) << " |\n";
  md << "| Random chance | " << percent(kChance[kText]) << " | " << percent(kChance[kImage])
     << " | " << percent(kChance[kGroup]) << " |\n\n";
  md << ties_sentence(o.ties) << "\n\n";

  const int level = static_cast<int>(r.options.confidence * 100 + 0.5);
  md << "### Intervals (" << level << "%) and tests against chance\n\n";
  md << "| Metric | Score | " << fold_column_label(r.options)
     << " | Bootstrap percentile | Bootstrap BCa | p vs chance | > chance (paper) | "
        "significant (binomial p < "
     << alpha_text(r.options.alpha) << ") |\n";
  md << "|---|---:|---:|---:|---:|---:|---|---|\n";
  for (std::size_t m = 0; m < kMetricCount; ++m) {
    const auto& s = o.metrics[m];
    md << "| " << kMetricNames[m] << " | " << percent(s.value) << " | "
       << (s.fold_t ? interval_text(s.fold_t->ci) : "n/a") << " | "
       << interval_text(s.bootstrap_percentile) << " | " << interval_text(s.bootstrap_bca) << " | "
       << p_text(s.p_vs_chance) << " | " << (s.above_chance_paper ? "yes" : "no") << " | "
       << (s.above_chance ? "yes" : "no") << " |\n";
  }
  md << "\nMethods: " << fold_method_text(r.options) << "; " << bootstrap_method_text(r.options)
     << "; " << chance_test_text(r.options) << ".\n";
  const bool outside = std::any_of(o.metrics.begin(), o.metrics.end(), [](const MetricStats& s) {
    return s.fold_t && s.fold_t->ci.valid() && (s.fold_t->ci.low < 0 || s.fold_t->ci.high > 1);
  });
  if (outside)
    md << "The t interval is printed as computed: with " << r.options.folds
       << " folds, mean +- t x standard error can pass 0 or 100, which no score can (the HTML "
          "report shows it clipped).\n";

  for (const auto& b : r.breakdowns) {
    md << "\n### " << b.title << "\n\n"
       << "Grouping: " << b.note << ".\n\n";
    md << "| Group | N | Text | Image | Group | > chance (paper) | significant (binomial p < "
       << alpha_text(r.options.alpha) << ") |\n|---|---:|---:|---:|---:|---|---|\n";
    for (const auto& g : b.groups) {
      md << "| " << g.name << " | " << g.n << " | " << percent(g.metrics[kText].value) << " | "
         << percent(g.metrics[kImage].value) << " | " << percent(g.metrics[kGroup].value) << " | "
         << above_list(g, true) << " | " << above_list(g, false) << " |\n";
    }
  }

  if (!r.pair_correlations.empty()) {
    md << "\n### Correlations with image-caption scores (Table 6, left)\n\n";
    md << "| Covariate | Pairs N | Pearson r | p | Spearman rho | p |\n";
    md << "|---|---:|---:|---:|---:|---:|\n";
    for (const auto& c : r.pair_correlations) {
      md << "| " << c.covariate << " | " << c.pearson.n << " | " << r_text(c.pearson.r) << " | "
         << (std::isfinite(c.pearson.p) ? p_text(c.pearson.p) : "n/a") << " | "
         << r_text(c.spearman.r) << " | "
         << (std::isfinite(c.spearman.p) ? p_text(c.spearman.p) : "n/a") << " |\n";
    }
    md << "\nDefinition: " << pair_correlation_text() << ".\n";
  }
  if (!r.correlations.empty()) {
    md << "\n### Correlations with per-example correctness\n\n"
       << "Definition: " << correctness_correlation_text() << ".\n\n";
    md << "| Covariate | Metric | N | Pearson r | p | Spearman rho | p |\n";
    md << "|---|---|---:|---:|---:|---:|---:|\n";
    for (const auto& c : r.correlations) {
      md << "| " << c.covariate << " | " << kMetricNames[c.metric] << " | " << c.pearson.n << " | "
         << r_text(c.pearson.r) << " | "
         << (std::isfinite(c.pearson.p) ? p_text(c.pearson.p) : "n/a") << " | "
         << r_text(c.spearman.r) << " | "
         << (std::isfinite(c.spearman.p) ? p_text(c.spearman.p) : "n/a") << " |\n";
    }
    md << "\nCorrectness is 1 or 0 per example; p is two-sided (t with N-2 df); n/a where a "
          "variable is constant.\n";
  }
  return md.str();
}

namespace {

// Table 7: the runs' scores against numbers about the runs.
std::string markdown_run_correlations(const RunCorrelations& rc, double rc_confidence) {
  std::ostringstream md;
  md << "\n### Correlations with run information (Table 7)\n\n"
     << "Definition: " << run_correlation_text() << ". From " << rc.file << ".\n";
  for (const auto& set : rc.sets) {
    std::string title = set.excluded.empty() ? "All runs" : "Without";
    for (std::size_t i = 0; i < set.excluded.size(); ++i)
      title += (i == 0 ? " " : ", ") + set.excluded[i];
    md << "\n" << title << ":\n\n";
    if (!set.rows.empty()) {
      md << "| Column | Metric | N runs | Pearson r | p | Spearman rho | p |\n"
         << "|---|---|---:|---:|---:|---:|---:|\n";
      for (const auto& row : set.rows) {
        md << "| " << row.column << " | " << kMetricNames[row.metric] << " | " << row.runs.size()
           << " | " << r_text(row.pearson.r) << " | "
           << (std::isfinite(row.pearson.p) ? p_text(row.pearson.p) : "n/a") << " | "
           << r_text(row.spearman.r) << " | "
           << (std::isfinite(row.spearman.p) ? p_text(row.spearman.p) : "n/a") << " |\n";
      }
    }
    for (const auto& m : set.messages)
      md << "\nNot computed: " << m << ".\n";
    for (const auto& t : set.categories) {
      md << "\nBy " << t.column << " (" << run_category_text(rc_confidence) << "):\n\n"
         << "| " << t.column << " | N runs | Runs | Text | Image | Group |\n"
         << "|---|---:|---|---:|---:|---:|\n";
      for (const auto& g : t.groups) {
        md << "| " << g.value << " | " << g.runs.size() << " |";
        for (std::size_t i = 0; i < g.runs.size(); ++i)
          md << (i == 0 ? " " : ", ") << g.runs[i];
        md << " |";
        for (std::size_t m : {kText, kImage, kGroup}) {
          md << " " << percent(g.mean[m]);
          if (g.interval[m].valid()) md << " " << interval_text(g.interval[m]);
          md << " |";
        }
        md << "\n";
      }
    }
  }
  return md.str();
}

}  // namespace

std::string markdown_compare(const CompareResult& c) {
  std::ostringstream md;
  const int level = static_cast<int>(c.options.confidence * 100 + 0.5);
  md << "## Leaderboard (N = " << (c.leaderboard.empty() ? 0 : c.leaderboard[0].n) << ")\n\n";
  md << "| Rank | Run | Text | Image | Group | Group " << level << "% bootstrap | Group " << level
     << "% " << fold_column_label(c.options) << " |\n";
  md << "|---:|---|---:|---:|---:|---:|---:|\n";
  for (std::size_t i = 0; i < c.leaderboard.size(); ++i) {
    const auto& g = c.leaderboard[i];
    md << "| " << i + 1 << " | " << g.name << " | " << percent(g.metrics[kText].value) << " | "
       << percent(g.metrics[kImage].value) << " | " << percent(g.metrics[kGroup].value) << " | "
       << interval_text(g.metrics[kGroup].bootstrap_percentile) << " | "
       << (g.metrics[kGroup].fold_t ? interval_text(g.metrics[kGroup].fold_t->ci) : "n/a")
       << " |\n";
  }
  md << "| - | Random chance | " << percent(kChance[kText]) << " | " << percent(kChance[kImage])
     << " | " << percent(kChance[kGroup]) << " | | |\n";
  md << "\n### Pairwise differences on the same examples\n\n";
  md << "| A | B | Metric | A - B | A only | B only | McNemar exact p | Paired bootstrap " << level
     << "% |\n|---|---|---|---:|---:|---:|---:|---:|\n";
  for (const auto& p : c.pairwise) {
    md << "| " << p.a << " | " << p.b << " | " << kMetricNames[p.metric] << " | "
       << percent(p.difference) << " | " << p.a_only << " | " << p.b_only << " | "
       << p_text(p.p_mcnemar) << " | " << interval_text(p.paired_bootstrap) << " |\n";
  }
  md << "\nMethods: " << bootstrap_method_text(c.options)
     << "; McNemar: exact two-sided binomial test on the discordant examples; the paired "
        "bootstrap resamples examples and scores both runs on each resample.\n";
  if (c.run_correlations)
    md << markdown_run_correlations(*c.run_correlations, c.options.confidence);
  return md.str();
}

}  // namespace winokit
