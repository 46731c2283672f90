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

#include "winokit/io/table.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(data);

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

}  // namespace winokit
