// The scorer interface: anything that gives s(caption, image) for the four pairs of every
// example. Scores files, the built-in baselines, and (in-process) models all implement it, so
// every evaluation, report and comparison works the same whatever produced the scores.
//
//   auto scorer = winokit::make_baseline_scorer("oracle", /*seed=*/0);
//   std::vector<winokit::WinogroundScores> s = scorer->score(dataset);
//   nlohmann::json provenance = scorer->describe();   // recorded in every result file
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "winokit/data/winoground.hpp"
#include "winokit/eval/scores.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(eval);

namespace winokit {

class Scorer {
 public:
  virtual ~Scorer() = default;
  // Short name used in tables ("clip-vit-b-32", "random", a scores file's stem...).
  virtual std::string name() const = 0;
  // Provenance: kind, files and their hashes, seeds, model hash, preprocessing...
  virtual nlohmann::json describe() const = 0;
  // Scores aligned with dataset.examples. Throws on bad input; never returns partial scores.
  virtual std::vector<WinogroundScores> score(const WinogroundDataset& dataset) = 0;
};

// Reads a scores file (official JSONL, per-example JSONL or table). `name` defaults to the
// file's stem.
std::unique_ptr<Scorer> make_scores_file_scorer(const std::string& file, std::string name = {});

// Baselines that need no model:
//  - "random": seeded uniform scores (independent of example order);
//  - "bag-of-words": for synthetic data, the share of the caption's words that the scene makes
//    true, blind to order: both captions of a pair tie on every image;
//  - "oracle": for synthetic data, the share of the caption's claims that hold in the scene.
// Throws UsageError for an unknown kind, or when a synthetic-only scorer meets real data.
std::unique_ptr<Scorer> make_baseline_scorer(const std::string& kind, std::uint64_t seed);

// The baseline kinds, for help texts.
const std::vector<std::string>& baseline_scorer_kinds();

}  // namespace winokit
