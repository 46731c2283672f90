// FLAVA as a pair scorer (ITM or contrastive head).
#include "winokit/eval/flava_scorer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <set>

#include "winokit/core/error.hpp"
#include "winokit/io/files.hpp"
#include "winokit/model/clip_model.hpp"
#include "winokit/model/compute.hpp"

namespace winokit {

namespace fs = std::filesystem;

namespace {

class FlavaScorer final : public Scorer {
 public:
  FlavaScorer(FlavaRuntime rt, std::string name) : rt_(std::move(rt)), name_(std::move(name)) {}
  std::string name() const override { return name_; }
  nlohmann::json describe() const override {
    nlohmann::json d = rt_.describe();
    d["embeddings"] = {{"images_computed", images_},     {"images_cached", 0},
                       {"captions_computed", captions_}, {"captions_cached", 0},
                       {"pairs_scored", pairs_},         {"seconds", seconds_}};
    return d;
  }
  std::vector<WinogroundScores> score(const WinogroundDataset& dataset) override {
    const auto start = std::chrono::steady_clock::now();
    ImageStore store = ImageStore::open(dataset.root, dataset.images);
    std::vector<std::string> image_names, captions;
    std::map<std::string, std::size_t> image_index, caption_index;
    for (const auto& ex : dataset.examples) {
      for (std::size_t k = 0; k < 2; ++k) {
        if (image_index.emplace(ex.images[k], image_names.size()).second) {
          image_names.push_back(ex.images[k]);
        }
        if (caption_index.emplace(ex.captions[k], captions.size()).second) {
          captions.push_back(ex.captions[k]);
        }
      }
    }
    std::vector<std::function<ImageBytes()>> images;
    for (const auto& n : image_names)
      images.emplace_back([&store, n] { return store.read(n); });
    std::map<std::pair<std::size_t, std::size_t>, std::size_t> pair_slot;
    std::vector<std::pair<std::size_t, std::size_t>> pairs;
    for (const auto& ex : dataset.examples) {
      for (std::size_t c = 0; c < 2; ++c) {
        for (std::size_t i = 0; i < 2; ++i) {
          const std::pair<std::size_t, std::size_t> key = {caption_index[ex.captions[c]],
                                                           image_index[ex.images[i]]};
          if (pair_slot.emplace(key, pairs.size()).second) pairs.push_back(key);
        }
      }
    }
    const std::vector<double> s = flava_score_pairs(rt_, images, captions, pairs);
    std::vector<WinogroundScores> out(dataset.examples.size());
    for (std::size_t e = 0; e < dataset.examples.size(); ++e) {
      const auto& ex = dataset.examples[e];
      for (int c = 0; c < 2; ++c) {
        for (int i = 0; i < 2; ++i) {
          const std::size_t p = pair_slot[{caption_index[ex.captions[static_cast<std::size_t>(c)]],
                                           image_index[ex.images[static_cast<std::size_t>(i)]]}];
          out[e].s[pair_index(c, i)] = s[p];
        }
      }
    }
    images_ = image_names.size();
    captions_ = captions.size();
    pairs_ = pairs.size();
    seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out;
  }

 private:
  FlavaRuntime rt_;
  std::string name_;
  std::size_t images_ = 0, captions_ = 0, pairs_ = 0;
  double seconds_ = 0;
};

}  // namespace

std::unique_ptr<Scorer> make_flava_scorer(const FlavaRuntime& runtime, std::string name) {
  return std::make_unique<FlavaScorer>(runtime, std::move(name));
}

SolveResult flava_solve_with_images(const FlavaRuntime& rt, const AssociationDataset& ds,
                                    const std::map<std::string, fs::path>& images,
                                    const AssociationSolveOptions& options) {
  std::vector<std::function<ImageBytes()>> readers;
  std::map<std::string, std::size_t> image_index;
  for (const auto& [name, path] : images) {
    image_index[name] = readers.size();
    readers.emplace_back([name = name, path = path] {
      ImageBytes b;
      b.name = name;
      b.source = path.string();
      b.bytes = read_file(path);
      return b;
    });
  }
  std::vector<std::string> prompts;
  std::vector<std::pair<std::size_t, std::size_t>> pairs;
  for (std::size_t q = 0; q < ds.instances.size(); ++q) {
    const auto& inst = ds.instances[q];
    prompts.push_back(cue_prompt(inst.cue, options.prompt_template));
    for (const auto& c : inst.candidates) {
      auto it = image_index.find(c);
      if (it == image_index.end()) throw UsageError("candidate '" + c + "' has no image");
      pairs.emplace_back(q, it->second);
    }
  }
  const auto start = std::chrono::steady_clock::now();
  const std::vector<double> s = flava_score_pairs(rt, readers, prompts, pairs);
  SolveResult r;
  std::size_t p = 0;
  for (const auto& inst : ds.instances) {
    std::vector<double> scores(s.begin() + static_cast<std::ptrdiff_t>(p),
                               s.begin() + static_cast<std::ptrdiff_t>(p + inst.candidates.size()));
    p += inst.candidates.size();
    r.predictions.push_back(select_top_k(inst.candidates, scores, inst.k()));
    r.scores.push_back(std::move(scores));
  }
  r.stats.images_computed = images.size();
  r.stats.texts_computed = prompts.size();
  r.stats.image_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

ScoreMatrix flava_score_matrix(const FlavaRuntime& rt, const WinogroundDataset& dataset) {
  ImageStore store = ImageStore::open(dataset.root, dataset.images);
  std::vector<std::function<ImageBytes()>> images;
  std::vector<std::string> captions;
  for (const auto& ex : dataset.examples) {
    for (std::size_t k = 0; k < 2; ++k) {
      const std::string n = ex.images[k];
      images.emplace_back([&store, n] { return store.read(n); });
      captions.push_back(ex.captions[k]);
    }
  }
  std::vector<std::pair<std::size_t, std::size_t>> pairs;
  for (std::size_t c = 0; c < captions.size(); ++c)
    for (std::size_t i = 0; i < images.size(); ++i)
      pairs.emplace_back(c, i);
  const std::vector<double> s = flava_score_pairs(rt, images, captions, pairs);
  ScoreMatrix m;
  m.captions = static_cast<int>(captions.size());
  m.images = static_cast<int>(images.size());
  m.scores.assign(s.begin(), s.end());
  return m;
}

}  // namespace winokit
