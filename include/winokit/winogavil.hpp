// WinoGAViL (Bitton et al., 2022): a cue, 5-12 candidate images, select the k associated ones;
// scored by the Jaccard index against the gold associations.
//
//   auto ds = winokit::load_winogavil("winogavil.csv");       // the published CSV layout
//   auto preds = winokit::predictions_from_column(ds, "clip_vit_32_predictions");
//   auto r = winokit::evaluate_associations(ds, preds, {});   // mean Jaccard, breakdowns, chance
//
// The CSV is read by header name (unknown columns are kept and ignored): `candidates`, `cue`,
// `associations` (lists written as JSON arrays, or Python lists with single quotes, inside
// quoted cells), and optionally `num_associations`, `num_candidates`, `solvers_jaccard_mean`,
// `solvers_jaccard_std`, `score_fool_the_ai`, `ID`, `annotations_label` (a JSON object mapping a
// candidate to its association type: one type name per string, as the published analysis CSV
// writes it, so "Non Visual, Concept Related" is one type; a list of strings gives several).
// Scales as published: solvers_jaccard_mean/std on 0-1, score_fool_the_ai on 0-100; a value
// outside is an InputError naming the row and column. Every CSV under the official repository's
// `assets/` reads as it is (game_5_6.csv, game_10_12.csv, swow.csv, winogavil_dataset.csv, the
// test sets with zero-shot predictions, model_analysis_on_different_association_types.csv).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "winokit/stats.hpp"
#include "winokit/table.hpp"

namespace winokit {

struct AssociationInstance {
  std::string id;
  std::size_t line = 0;
  std::string cue;
  std::vector<std::string> candidates;
  std::vector<std::string> associations;  // gold, a subset of candidates
  std::optional<double> solvers_jaccard_mean, solvers_jaccard_std, fool_the_ai;
  std::map<std::string, std::vector<std::string>> association_types;  // candidate -> types
  std::size_t row = 0;                                                // index into the table's rows
  int k() const { return static_cast<int>(associations.size()); }
  int n() const { return static_cast<int>(candidates.size()); }
};

struct AssociationDataset {
  std::string file, sha256;
  Table table;  // the original rows, for the predictions CSV
  std::vector<AssociationInstance> instances;
};

// Throws InputError naming the file, line and column for malformed cells, gold associations
// that are not candidates, or counts that disagree with the lists.
AssociationDataset load_winogavil(const std::string& csv);
AssociationDataset parse_winogavil(const std::string& text, const std::string& file);
// A JSON list of strings, or a Python list literal of quoted strings.
std::optional<std::vector<std::string>> parse_name_list(std::string_view cell);
// Adds association types from a table with an ID column and an `annotations_label` column.
void load_association_types(AssociationDataset& ds, const std::string& file);

// |a ∩ b| / |a ∪ b| (1 when both are empty).
double jaccard(const std::vector<std::string>& a, const std::vector<std::string>& b);
// Exact expected Jaccard index between the gold k-subset and a uniformly random k-subset of n
// candidates: sum over i of P(|S ∩ G| = i) * i / (2k - i), P hypergeometric.
double expected_random_jaccard(int n, int k);

// Predictions read from a column of the dataset's CSV (lists as in `associations`).
std::vector<std::vector<std::string>> predictions_from_column(const AssociationDataset& ds,
                                                              const std::string& column);

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
struct AssociationCell {
  int candidates = 0, k = 0;
  std::size_t n = 0;
  double mean = 0, chance = 0;
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
