// Comparing several runs on the same dataset: a leaderboard with intervals, and pairwise tests
// on the same examples (exact McNemar on per-example outcomes, paired bootstrap interval of
// the difference).
//
//   std::vector<winokit::Run> runs = {{"clip", clip_scores, {}}, {"blip", blip_scores, {}}};
//   winokit::CompareResult c = winokit::compare_runs(dataset, runs, winokit::EvalOptions{});
//
// Correlating the runs' scores with numbers about the runs (the Winoground paper's Table 7:
// multimodal pretraining data size), with and without some runs (the paper drops CLIP):
//
//   winokit::RunInfo info = winokit::load_run_info("runs.csv");  // run,pretraining_pairs,...
//   c.run_correlations = winokit::correlate_runs(c, info, {"clip"});
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "winokit/eval/benchmark.hpp"
#include "winokit/eval/evaluation.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(eval);

namespace winokit {

struct Run {
  std::string name;
  std::vector<WinogroundScores> scores;
  nlohmann::json source;  // provenance (file, hash, format)
};

struct PairwiseRow {
  std::string a, b;
  std::size_t metric = kGroup;
  double difference = 0;   // proportion(a) - proportion(b)
  std::size_t a_only = 0;  // examples a gets right and b wrong
  std::size_t b_only = 0;
  double p_mcnemar = 1.0;  // exact, two-sided
  Interval paired_bootstrap;
};

// A table with a run-name column (`run`, `name` or `model`) and other columns; an empty cell
// (or NA) is a missing value. A column whose every value is a finite number is numeric
// (correlated with the scores, the paper's Table 7, and plotted, its Appendix B figures); a
// column with a value that is not a number is categorical (architecture, attention type: the
// paper's section 6.2), its runs grouped by value. A non-finite number (inf, nan) is an error.
struct RunInfo {
  std::string file, sha256;
  std::vector<std::string> columns;                                      // numeric, in file order
  std::map<std::string, std::map<std::string, double>> values;           // column -> run -> value
  std::vector<std::string> categorical_columns;                          // in file order
  std::map<std::string, std::map<std::string, std::string>> categories;  // column -> run -> value
};
RunInfo load_run_info(const std::string& file);

struct RunCorrelationRow {
  std::string column;
  std::size_t metric = kGroup;
  std::vector<std::string> runs;  // the runs with a value, in compare's input order
  Correlation pearson, spearman;  // across runs: the column against the run's score
};

// The runs sharing one value of a categorical column: the mean of their scores and a t
// interval over runs (mean +- t_{(1+confidence)/2, n-1} sd / sqrt(n), sd with n - 1 degrees of
// freedom; invalid for a single run).
struct RunCategoryGroup {
  std::string value;
  std::vector<std::string> runs;
  std::array<double, 3> mean{};
  std::array<Interval, 3> interval{};
};
struct RunCategoryTable {
  std::string column;
  std::vector<RunCategoryGroup> groups;  // by value
};

struct RunCorrelationSet {
  std::vector<std::string> excluded;         // empty: every run
  std::vector<RunCorrelationRow> rows;       // columns with at least 3 runs
  std::vector<std::string> messages;         // columns left out, and why
  std::vector<RunCategoryTable> categories;  // categorical columns
};

struct RunCorrelations {
  std::string file, sha256;
  std::vector<RunCorrelationSet> sets;  // all runs, then without the excluded runs (if any)
  // Every numeric column's (run, value) pairs, in compare's input order: the scatter plots of
  // the paper's Appendix B (value against each score).
  std::map<std::string, std::vector<std::pair<std::string, double>>> points;
};

struct CompareResult {
  EvalOptions options;
  std::vector<std::string> names;                   // input order
  std::vector<nlohmann::json> sources;              // input order
  std::vector<GroupStats> leaderboard;              // sorted by group, then text, then image score
  std::vector<PairwiseRow> pairwise;                // every pair (input order), every metric
  std::optional<RunCorrelations> run_correlations;  // with --run-info
};

// Throws UsageError for fewer than two runs or duplicate names.
CompareResult compare_runs(const WinogroundDataset& dataset, const std::vector<Run>& runs,
                           const EvalOptions& options);

// Pearson and Spearman r with two-sided p (t with N-2 df) across runs, between each numeric
// column and each of the text/image/group scores; a column with fewer than 3 runs with a value
// gets a message instead of a row. Categorical columns: per value, the runs' mean scores with a
// t interval over runs (`confidence` of the compare options). `exclude` names runs of `result`
// (UsageError otherwise).
RunCorrelations correlate_runs(const CompareResult& result, const RunInfo& info,
                               const std::vector<std::string>& exclude);
std::string run_correlation_text();

// ---- Any registered benchmark ----
// Runs of one benchmark on the same items, compared from their per-item outcomes
// (BenchmarkSummary::items): for each check (the headline one first; at most three, e.g.
// EqBen's group, text and image scores) overall and per subset, each run's accuracy with a
// seeded bootstrap percentile interval (the same resamples for every run), and for every pair
// of runs the discordant counts, the exact two-sided McNemar p and the paired bootstrap
// percentile interval of the difference.
//
//   std::vector<winokit::BenchmarkRun> runs = {{"a", b.evaluate(data, sa, o), {}}, ...};
//   winokit::BenchmarkCompareResult c = winokit::compare_benchmark_runs(data, runs, o);
struct BenchmarkRun {
  std::string name;
  BenchmarkSummary summary;
  nlohmann::json source;  // provenance (file, hash)
};

struct BenchmarkAccuracyRow {
  std::string run, subset, check;  // subset "" is every item
  std::size_t n = 0, right = 0;
  double percent = 0;
  Interval interval;  // seeded bootstrap percentile, in percent
};

struct BenchmarkPairRow {
  std::string subset, check, a, b;
  std::size_t n = 0, a_right = 0, b_right = 0;
  std::size_t a_only = 0, b_only = 0;  // items a gets right and b wrong, and the reverse
  double difference = 0;               // percent(a) - percent(b), in points
  double p_mcnemar = 1.0;              // exact, two-sided
  Interval paired_bootstrap;           // of the difference, in points
};

struct BenchmarkCompareResult {
  std::string benchmark;
  BenchmarkOptions options;
  std::vector<std::string> names, checks, subsets;  // subsets in order of first appearance
  std::vector<nlohmann::json> sources;
  std::vector<BenchmarkAccuracyRow> accuracy;  // per check, subset ("" first), run
  std::vector<BenchmarkPairRow> pairwise;      // per check, subset ("" first), pair of runs
  // Per item: its id, subset and each run's outcome of each check ([run][check]).
  struct Item {
    std::string id, subset;
    std::vector<std::vector<std::uint8_t>> right;
  };
  std::vector<Item> items;
};

// UsageError for fewer than two runs, duplicate names, or a run whose outcomes do not cover the
// data's items (or a benchmark that gives none).
BenchmarkCompareResult compare_benchmark_runs(const BenchmarkData& data,
                                              const std::vector<BenchmarkRun>& runs,
                                              const BenchmarkOptions& options);
std::string run_category_text(double confidence);

}  // namespace winokit
