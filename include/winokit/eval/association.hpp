// WinoGAViL's metric over a dataset: mean Jaccard with a seeded bootstrap interval, the random
// baseline, the solvers' figure where the file has it, and the paper's breakdowns (candidates,
// k, association types) and the candidates x k cross table (Table 10).
//
//   winokit::AssociationDataset ds = winokit::load_winogavil("winogavil.csv");
//   winokit::AssociationResult r = winokit::evaluate_associations(ds, predictions, {.seed = 0});
//   double jaccard = r.overall.mean;  // r.overall.interval: bootstrap percentile
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "winokit/data/winogavil.hpp"
#include "winokit/eval/stats.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(eval);

namespace winokit {

struct AssociationOptions {
  std::uint64_t seed = 0;
  std::size_t bootstrap_resamples = 10000;
  double confidence = 0.95;
};

struct AssociationGroup {
  std::string name;
  std::size_t n = 0;
  double mean = 0;              // mean Jaccard of the predictions, in [0, 1]
  Interval interval;            // seeded bootstrap percentile
  double chance = 0;            // mean expected Jaccard of a random k-subset
  std::optional<double> human;  // mean solvers_jaccard_mean where given
  std::size_t human_n = 0;
  std::optional<double> recall;  // association types only: share of gold of that type selected
};

struct AssociationBreakdown {
  std::string key, title, note;
  std::vector<AssociationGroup> groups;
};

// One cell of WinoGAViL's Table 10: the instances with n candidates and k associations.
// `rival` is the paper's model column there: the game's own rival (CLIP RN50, the official
// backend) scored 100 - score_fool_the_ai on each instance, averaged over the cell's instances
// that carry score_fool_the_ai (`rival_n`), in [0, 1]; nullopt when none does.
struct AssociationCell {
  int candidates = 0, k = 0;
  std::size_t n = 0;
  double mean = 0, chance = 0;
  std::optional<double> rival;
  std::size_t rival_n = 0;
};

// Values published in the WinoGAViL paper (Bitton et al., NeurIPS 2022), printed beside
// winokit's own figures as references: the quoted random chance per candidate count, and the
// human performance measured with new annotators on a sample of the test sets.
struct PublishedReference {
  std::string what, value, source;
};
std::vector<PublishedReference> winogavil_published_references();
// The paper's quoted random chance (percent) for 5, 6, 10 and 12 candidates; nullopt otherwise.
std::optional<int> paper_random_chance_percent(int candidates);

struct AssociationResult {
  AssociationOptions options;
  AssociationGroup overall;
  std::vector<AssociationBreakdown> breakdowns;
  std::vector<AssociationCell> cross;  // candidates x k (Table 10), sorted by (candidates, k)
  std::vector<double> per_instance;    // Jaccard of each instance
};

AssociationResult evaluate_associations(const AssociationDataset& ds,
                                        const std::vector<std::vector<std::string>>& predictions,
                                        const AssociationOptions& options);

// Percentile bootstrap of a mean (seeded, numpy-style linear quantiles).
Interval bootstrap_mean_interval(const std::vector<double>& values, std::size_t resamples,
                                 double confidence, std::uint64_t seed);

}  // namespace winokit
