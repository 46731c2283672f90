#include <algorithm>
#include <set>

#include "winokit/core/error.hpp"
#include "winokit/core/rng.hpp"
#include "winokit/core/text.hpp"
#include "winokit/data/synth.hpp"
#include "winokit/eval/scorer.hpp"

namespace winokit {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

class ScoresFileScorer final : public Scorer {
 public:
  ScoresFileScorer(std::string file, std::string name)
      : file_(std::move(file)), name_(std::move(name)) {
    if (name_.empty()) name_ = fs::path(file_).stem().string();
  }
  std::string name() const override { return name_; }
  json describe() const override {
    return {{"kind", "scores-file"},
            {"file", file_},
            {"sha256", sha256_},
            {"format", format_.empty() ? json(nullptr) : json(format_)}};
  }
  std::vector<WinogroundScores> score(const WinogroundDataset& dataset) override {
    LoadedScores loaded = load_scores(file_, dataset);
    sha256_ = loaded.sha256;
    format_ = to_string(loaded.format);
    return std::move(loaded.scores);
  }

 private:
  std::string file_, name_, sha256_, format_;
};

class RandomScorer final : public Scorer {
 public:
  explicit RandomScorer(std::uint64_t seed) : seed_(seed) {}
  std::string name() const override { return "random"; }
  json describe() const override { return {{"kind", "random"}, {"seed", seed_}}; }
  std::vector<WinogroundScores> score(const WinogroundDataset& dataset) override {
    std::vector<WinogroundScores> out(dataset.examples.size());
    for (std::size_t i = 0; i < out.size(); ++i) {
      Rng rng(derive_seed(seed_, "random-scorer/" + dataset.examples[i].id));
      for (auto& v : out[i].s)
        v = rng.uniform();
    }
    return out;
  }

 private:
  std::uint64_t seed_;
};

// Reads the scenes that `winokit synth` stores with each example.
std::array<Scene, 2> scenes_of(const WinogroundDataset& dataset, const WinogroundExample& ex,
                               const char* scorer) {
  auto it = ex.extra.find("scenes");
  Location where{dataset.examples_path.string(), ex.line, "scenes"};
  if (it == ex.extra.end() || !it->is_array() || it->size() != 2) {
    throw UsageError(std::string("the ") + scorer + " scorer needs scene descriptions: " +
                         format_location(where) + " has none",
                     "it works on datasets made by `winokit synth`");
  }
  return {scene_from_json((*it)[0], where), scene_from_json((*it)[1], where)};
}

class SceneScorer final : public Scorer {
 public:
  explicit SceneScorer(bool oracle) : oracle_(oracle) {}
  std::string name() const override { return oracle_ ? "oracle" : "bag-of-words"; }
  json describe() const override { return {{"kind", name()}}; }
  std::vector<WinogroundScores> score(const WinogroundDataset& dataset) override {
    std::vector<WinogroundScores> out(dataset.examples.size());
    for (std::size_t i = 0; i < out.size(); ++i) {
      const auto& ex = dataset.examples[i];
      auto scenes = scenes_of(dataset, ex, oracle_ ? "oracle" : "bag-of-words");
      for (int c = 0; c < 2; ++c) {
        for (int k = 0; k < 2; ++k) {
          const auto& caption = ex.captions[static_cast<std::size_t>(c)];
          const auto& scene = scenes[static_cast<std::size_t>(k)];
          out[i].s[pair_index(c, k)] =
              oracle_ ? scene_truth(caption, scene) : bag_of_words(caption, scene);
        }
      }
    }
    return out;
  }

 private:
  static double bag_of_words(const std::string& caption, const Scene& scene) {
    auto vocabulary = scene_words(scene);
    std::set<std::string> words(vocabulary.begin(), vocabulary.end());
    auto tokens = split_whitespace(caption);
    if (tokens.empty()) return 0.0;
    std::size_t hits = 0;
    for (const auto& t : tokens)
      hits += words.count(to_lower_ascii(t));
    return static_cast<double>(hits) / static_cast<double>(tokens.size());
  }
  bool oracle_;
};

}  // namespace

std::unique_ptr<Scorer> make_scores_file_scorer(const std::string& file, std::string name) {
  return std::make_unique<ScoresFileScorer>(file, std::move(name));
}

const std::vector<std::string>& baseline_scorer_kinds() {
  static const std::vector<std::string> kKinds = {"random", "bag-of-words", "oracle"};
  return kKinds;
}

std::unique_ptr<Scorer> make_baseline_scorer(const std::string& kind, std::uint64_t seed) {
  if (kind == "random") return std::make_unique<RandomScorer>(seed);
  if (kind == "bag-of-words") return std::make_unique<SceneScorer>(false);
  if (kind == "oracle") return std::make_unique<SceneScorer>(true);
  throw UsageError("unknown scorer '" + kind + "'", "choose random, bag-of-words or oracle");
}

}  // namespace winokit
