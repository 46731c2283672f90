// Winoground evaluation: per-example outcomes, the three scores, breakdowns by tag, intervals,
// tests against chance, and correlations with covariates.
//
//   winokit::EvalOptions opt;                       // seed 0, 10,000 resamples, 95%
//   winokit::EvalInputs extra{tag_sets, covariates};
//   winokit::EvalResult r = winokit::evaluate(dataset, scores, extra, opt);
//   r.overall.metrics[winokit::kGroup].value;     // e.g. 0.08 for 8.00%
//
// Definitions (Thrush et al. 2022, and the official evaluation code): with s(c, i) the score
// of caption c and image i,
//   text  = s(c0,i0) > s(c1,i0) and s(c1,i1) > s(c0,i1)
//   image = s(c0,i0) > s(c0,i1) and s(c1,i1) > s(c1,i0)
//   group = text and image
// with strict ">": a tie counts as wrong. Chance is 1/4, 1/4 and 1/6.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "winokit/data/covariates.hpp"
#include "winokit/data/tag_set.hpp"
#include "winokit/data/winoground.hpp"
#include "winokit/eval/scores.hpp"
#include "winokit/eval/stats.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(eval);

namespace winokit {

inline constexpr std::size_t kText = 0;
inline constexpr std::size_t kImage = 1;
inline constexpr std::size_t kGroup = 2;
inline constexpr std::size_t kMetricCount = 3;
inline constexpr std::array<const char*, 3> kMetricNames = {"text", "image", "group"};
// Chance: a random ordering of the four scores (Thrush et al. 2022, Table 3).
inline constexpr std::array<double, 3> kChance = {0.25, 0.25, 1.0 / 6.0};

struct Outcome {
  bool text = false, image = false, group = false;
  std::uint8_t text_ties = 0;   // of the 2 text comparisons
  std::uint8_t image_ties = 0;  // of the 2 image comparisons
  std::uint8_t bits() const {
    return static_cast<std::uint8_t>((text ? 1 : 0) | (image ? 2 : 0) | (group ? 4 : 0));
  }
};

Outcome judge(const WinogroundScores& s);

// How the secondary tags are grouped.
enum class SecondaryGrouping {
  Membership,  // an example is in every group whose tag is in its list (Symbolic 41 ...)
  ExactSingle  // only examples whose list is exactly one tag (the paper's Table 5)
};

// How the examples are split into folds for the t interval.
enum class FoldSplit {
  PaperShuffle,  // the paper's: Python's random.shuffle seeded with fold_seed
                 // (paper_fold_t_interval)
  IdOrder        // consecutive groups in id order (fold_t_interval); not the paper's
};

struct EvalOptions {
  std::uint64_t seed = 0;
  std::size_t bootstrap_resamples = 10000;
  double confidence = 0.95;
  int folds = 4;  // the t interval over folds (Student's t)
  FoldSplit fold_split = FoldSplit::PaperShuffle;
  std::uint64_t fold_seed = 0;  // the paper's random.seed(0)
  double alpha = 0.05;          // significant when the one-sided binomial p is below this
  SecondaryGrouping secondary = SecondaryGrouping::Membership;
};

struct MetricStats {
  std::size_t correct = 0;
  double value = 0;                    // proportion in [0, 1]
  std::optional<FoldInterval> fold_t;  // nullopt when n < folds
  Interval bootstrap_percentile;
  Interval bootstrap_bca;
  double p_vs_chance = 1.0;   // exact one-sided binomial P(X >= correct | chance)
  bool above_chance = false;  // significant: p_vs_chance < alpha
  // The papers' definition (Winoground's bolded scores, the official `bolden_table_dict`): the
  // score is strictly above chance (> 25% text and image, > 16.67% group), no test.
  bool above_chance_paper = false;
};

struct TieCounts {
  std::size_t text = 0;         // tied text comparisons
  std::size_t image = 0;        // tied image comparisons
  std::size_t comparisons = 0;  // 4 per example
  std::size_t examples_with_ties = 0;
};

struct GroupStats {
  std::string name;
  std::size_t n = 0;
  std::array<MetricStats, 3> metrics;
  TieCounts ties;
};

struct Breakdown {
  std::string key;    // "collapsed_tag", "num_main_preds", "secondary_tag", "tag", "tags:<set>"
  std::string title;  // shown as the table heading
  std::string note;   // how the groups are formed
  std::vector<GroupStats> groups;
};

struct CorrelationRow {
  std::string covariate;
  std::string source;
  std::size_t metric = kGroup;
  Correlation pearson;
  Correlation spearman;
};

// The correlation of a per-caption covariate with the raw image-caption scores (the Winoground
// paper's Table 6, left): one point per (caption, image) pair, each of an example's two captions
// with each of its two images (N = 4 x examples with a value: 1,600 on the real set).
struct PairCorrelationRow {
  std::string covariate;
  std::string source;
  Correlation pearson;
  Correlation spearman;
};

struct EvalInputs {
  std::vector<TagSet> tag_sets;
  std::vector<Covariate> covariates;  // the caption-length covariate is always added
};

struct EvalResult {
  EvalOptions options;
  GroupStats overall;
  std::vector<Breakdown> breakdowns;
  std::vector<PairCorrelationRow> pair_correlations;  // per-caption covariates vs pair scores
  std::vector<CorrelationRow> correlations;           // per-example covariates vs 0/1 correctness
  std::vector<Outcome> outcomes;                      // aligned with dataset.examples
};

// Computes one group's statistics. `members` are example indices in id order; `stream` names
// the bootstrap stream (results do not depend on the order groups are computed in).
GroupStats group_stats(const std::string& name, const std::vector<std::size_t>& members,
                       const std::vector<Outcome>& outcomes, const EvalOptions& options,
                       const std::string& stream);

EvalResult evaluate(const WinogroundDataset& dataset, const std::vector<WinogroundScores>& scores,
                    const EvalInputs& inputs, const EvalOptions& options);

// Text descriptions of the methods, used by every report.
std::string fold_method_text(const EvalOptions& options);
// The interval's column heading: "t over 4 folds (paper)" or "t over 4 folds (id order)".
std::string fold_column_label(const EvalOptions& options);
std::string bootstrap_method_text(const EvalOptions& options);
std::string chance_test_text(const EvalOptions& options);
// The two correlation definitions, with their N, as the reports state them.
std::string pair_correlation_text();
std::string correctness_correlation_text();

}  // namespace winokit
