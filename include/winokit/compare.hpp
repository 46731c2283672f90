// Comparing several runs on the same dataset: a leaderboard with intervals, and pairwise tests
// on the same examples (exact McNemar on per-example outcomes, paired bootstrap interval of
// the difference).
//
//   std::vector<winokit::Run> runs = {{"clip", clip_scores, {}}, {"blip", blip_scores, {}}};
//   winokit::CompareResult c = winokit::compare_runs(dataset, runs, winokit::EvalOptions{});
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "winokit/evaluation.hpp"

namespace winokit {

struct Run {
  std::string name;
  std::vector<PairScores> scores;
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

struct CompareResult {
  EvalOptions options;
  std::vector<std::string> names;       // input order
  std::vector<nlohmann::json> sources;  // input order
  std::vector<GroupStats> leaderboard;  // sorted by group, then text, then image score
  std::vector<PairwiseRow> pairwise;    // every pair (input order), every metric
};

// Throws UsageError for fewer than two runs or duplicate names.
CompareResult compare_runs(const Dataset& dataset, const std::vector<Run>& runs,
                           const EvalOptions& options);

}  // namespace winokit
