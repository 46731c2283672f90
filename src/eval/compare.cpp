#include "winokit/compare.hpp"

#include <algorithm>
#include <set>

#include "winokit/error.hpp"
#include "winokit/rng.hpp"

namespace winokit {

CompareResult compare_runs(const Dataset& dataset, const std::vector<Run>& runs,
                           const EvalOptions& options) {
  if (runs.size() < 2) throw UsageError("compare needs at least two runs");
  std::set<std::string> names;
  for (const auto& run : runs) {
    if (!names.insert(run.name).second) {
      throw UsageError("two runs are named '" + run.name + "'", "name them with NAME=FILE");
    }
    if (run.scores.size() != dataset.examples.size()) {
      throw UsageError("run '" + run.name + "' does not cover the dataset");
    }
  }
  CompareResult out;
  out.options = options;
  const auto order = dataset.id_order();
  std::vector<std::vector<Outcome>> outcomes;
  std::vector<std::vector<std::uint8_t>> bits;
  for (const auto& run : runs) {
    std::vector<Outcome> o;
    for (const auto& s : run.scores)
      o.push_back(judge(s));
    std::vector<std::uint8_t> b;
    for (std::size_t i : order)
      b.push_back(o[i].bits());
    out.names.push_back(run.name);
    out.sources.push_back(run.source);
    // Every run uses the same bootstrap stream, so the leaderboard's intervals are paired too.
    out.leaderboard.push_back(group_stats(run.name, order, o, options, "overall"));
    outcomes.push_back(std::move(o));
    bits.push_back(std::move(b));
  }
  std::stable_sort(out.leaderboard.begin(), out.leaderboard.end(),
                   [](const GroupStats& x, const GroupStats& y) {
                     for (std::size_t m : {kGroup, kText, kImage}) {
                       if (x.metrics[m].correct != y.metrics[m].correct) {
                         return x.metrics[m].correct > y.metrics[m].correct;
                       }
                     }
                     return false;
                   });
  for (std::size_t a = 0; a < runs.size(); ++a) {
    for (std::size_t b = a + 1; b < runs.size(); ++b) {
      auto diff = paired_bootstrap_difference(
          bits[a], bits[b], kMetricCount, options.bootstrap_resamples, options.confidence,
          derive_seed(options.seed, "paired/" + runs[a].name + "/" + runs[b].name));
      for (std::size_t m = 0; m < kMetricCount; ++m) {
        PairwiseRow row;
        row.a = runs[a].name;
        row.b = runs[b].name;
        row.metric = m;
        for (std::size_t i = 0; i < bits[a].size(); ++i) {
          bool x = (bits[a][i] >> m) & 1u, y = (bits[b][i] >> m) & 1u;
          row.a_only += x && !y;
          row.b_only += y && !x;
        }
        row.difference = (static_cast<double>(row.a_only) - static_cast<double>(row.b_only)) /
                         static_cast<double>(bits[a].size());
        row.p_mcnemar = mcnemar_exact_p(row.a_only, row.b_only);
        row.paired_bootstrap = diff[m];
        out.pairwise.push_back(row);
      }
    }
  }
  return out;
}

}  // namespace winokit
