#include "winokit/eval/model_scorer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <set>

#include "winokit/core/error.hpp"

namespace winokit {

DatasetItems dataset_items(const WinogroundDataset& dataset, const ImageStore& store) {
  DatasetItems items;
  for (const auto& ex : dataset.examples) {
    for (std::size_t k = 0; k < 2; ++k) {
      const std::string image = ex.images[k];
      items.images.push_back({image, [&store, image] { return store.read(image); },
                              [&store, image] { return store.file_of(image); }});
      items.captions.push_back(ex.captions[k]);
    }
  }
  return items;
}

nlohmann::json embed_stats_json(const EmbedStats& s) {
  nlohmann::json j = {{"images_computed", s.images_computed},  {"images_cached", s.images_cached},
                      {"captions_computed", s.texts_computed}, {"captions_cached", s.texts_cached},
                      {"image_seconds", s.image_seconds},      {"caption_seconds", s.text_seconds}};
  if (s.pairs_computed + s.pairs_cached > 0) {
    j["pairs_computed"] = s.pairs_computed;
    j["pairs_cached"] = s.pairs_cached;
    j["pair_seconds"] = s.pair_seconds;
  }
  return j;
}

namespace {

class ModelScorer final : public Scorer {
 public:
  ModelScorer(const VlModel& model, std::string name) : model_(model), name_(std::move(name)) {}
  std::string name() const override { return name_; }
  nlohmann::json describe() const override {
    nlohmann::json d = model_.describe();
    d["embeddings"] = embed_stats_json(stats_);
    return d;
  }
  std::vector<WinogroundScores> score(const WinogroundDataset& dataset) override {
    ImageStore store = ImageStore::open(dataset.root, dataset.images);
    std::vector<ImageRequest> images;
    std::vector<std::string> captions;
    std::map<std::string, std::size_t> image_index, caption_index;
    for (const auto& ex : dataset.examples) {
      for (std::size_t k = 0; k < 2; ++k) {
        const std::string n = ex.images[k];
        if (image_index.emplace(n, images.size()).second) {
          images.push_back(
              {n, [&store, n] { return store.read(n); }, [&store, n] { return store.file_of(n); }});
        }
        if (caption_index.emplace(ex.captions[k], captions.size()).second) {
          captions.push_back(ex.captions[k]);
        }
      }
    }
    // The four pairs of each example; a pair shared by two examples is scored once.
    std::map<PairIndex, std::size_t> pair_slot;
    std::vector<PairIndex> pairs;
    auto key = [&](const WinogroundExample& ex, int c, int i) {
      return PairIndex{caption_index.at(ex.captions[static_cast<std::size_t>(c)]),
                       image_index.at(ex.images[static_cast<std::size_t>(i)])};
    };
    for (const auto& ex : dataset.examples)
      for (int c = 0; c < 2; ++c)
        for (int i = 0; i < 2; ++i)
          if (pair_slot.emplace(key(ex, c, i), pairs.size()).second) pairs.push_back(key(ex, c, i));
    stats_ = {};
    const std::vector<double> s = model_.score_pairs(images, captions, pairs, &stats_);
    std::vector<WinogroundScores> out(dataset.examples.size());
    std::vector<double> flat;  // example-major, for the check below
    for (std::size_t e = 0; e < dataset.examples.size(); ++e)
      for (int c = 0; c < 2; ++c)
        for (int i = 0; i < 2; ++i) {
          out[e].s[pair_index(c, i)] = s[pair_slot.at(key(dataset.examples[e], c, i))];
          flat.push_back(out[e].s[pair_index(c, i)]);
        }
    require_finite(model_, flat, [&](std::size_t k) {
      return "example " + dataset.examples[k / 4].id + " (caption " + std::to_string(k / 2 % 2) +
             ", image " + std::to_string(k % 2) + ")";
    });
    return out;
  }

 private:
  const VlModel& model_;
  std::string name_;
  EmbedStats stats_;
};

}  // namespace

namespace {

// Row-wise (by_rows) or column-wise top-k indices of a matrix; ties by index.
std::vector<std::vector<int>> top_k(const ScoreMatrix& m, int k, bool by_rows) {
  const int lines = by_rows ? m.captions : m.images, items = by_rows ? m.images : m.captions;
  std::vector<std::vector<int>> out(static_cast<std::size_t>(lines));
  for (int l = 0; l < lines; ++l) {
    std::vector<int> idx(static_cast<std::size_t>(items));
    for (int i = 0; i < items; ++i)
      idx[static_cast<std::size_t>(i)] = i;
    auto at = [&](int i) { return by_rows ? m.at(l, i) : m.at(i, l); };
    std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) { return at(a) > at(b); });
    idx.resize(static_cast<std::size_t>(std::min(k, items)));
    out[static_cast<std::size_t>(l)] = std::move(idx);
  }
  return out;
}

// The re-ranked matrix of one direction: each line's top-k entries get
// (the line's best candidate score + 1 + the dense rank of their ITM score), the others keep
// their candidate score, so every re-scored entry ranks above every other, in ITM order.
ScoreMatrix reranked(const ScoreMatrix& cand, const std::vector<std::vector<int>>& top,
                     const std::map<std::pair<int, int>, double>& itm, bool by_rows) {
  ScoreMatrix out = cand;
  for (std::size_t l = 0; l < top.size(); ++l) {
    const int line = static_cast<int>(l);
    auto cell = [&](int i) -> float& {
      const int c = by_rows ? line : i, im = by_rows ? i : line;
      return out.scores[static_cast<std::size_t>(c) * cand.images + im];
    };
    float best = -INFINITY;
    const int items = by_rows ? cand.images : cand.captions;
    for (int i = 0; i < items; ++i)
      best = std::max(best, by_rows ? cand.at(line, i) : cand.at(i, line));
    std::set<double> values;
    for (int i : top[l])
      values.insert(itm.at(by_rows ? std::make_pair(line, i) : std::make_pair(i, line)));
    const std::vector<double> sorted(values.begin(), values.end());
    for (int i : top[l]) {
      const double v = itm.at(by_rows ? std::make_pair(line, i) : std::make_pair(i, line));
      const auto rank = std::lower_bound(sorted.begin(), sorted.end(), v) - sorted.begin();
      cell(i) = best + 1.0f + static_cast<float>(rank);
    }
  }
  return out;
}

}  // namespace

RerankedRetrieval rerank_retrieval(const VlModel& model, const ScoreMatrix& cand, int k,
                                   const WinogroundDataset& ds, EmbedStats* stats) {
  if (k < 1) throw UsageError("--rerank K: K must be at least 1");
  // The pairs in either direction's top K, scored once each by the re-scoring model.
  const auto rows = top_k(cand, k, true), cols = top_k(cand, k, false);
  std::set<std::pair<int, int>> wanted;
  for (std::size_t c = 0; c < rows.size(); ++c)
    for (int i : rows[c])
      wanted.emplace(static_cast<int>(c), i);
  for (std::size_t i = 0; i < cols.size(); ++i)
    for (int c : cols[i])
      wanted.emplace(c, static_cast<int>(i));
  ImageStore store = ImageStore::open(ds.root, ds.images);
  DatasetItems items = dataset_items(ds, store);
  std::vector<PairIndex> pairs;
  for (const auto& [c, i] : wanted)
    pairs.emplace_back(static_cast<std::size_t>(c), static_cast<std::size_t>(i));
  const std::vector<double> s = model.score_pairs(items.images, items.captions, pairs, stats);
  require_finite(model, s, [&](std::size_t bad) {
    return "caption '" + items.captions[pairs[bad].first] + "' with image " +
           items.images[pairs[bad].second].name;
  });
  std::map<std::pair<int, int>, double> itm;
  for (std::size_t p = 0; p < pairs.size(); ++p)
    itm[{static_cast<int>(pairs[p].first), static_cast<int>(pairs[p].second)}] = s[p];
  RerankedRetrieval r;
  r.text_to_image = reranked(cand, rows, itm, true);
  r.image_to_text = reranked(cand, cols, itm, false);
  r.pairs_scored = pairs.size();
  return r;
}

std::unique_ptr<Scorer> make_model_scorer(const VlModel& model, std::string name) {
  return std::make_unique<ModelScorer>(model, std::move(name));
}

ScoreMatrix model_score_matrix(const VlModel& model, const WinogroundDataset& dataset,
                               EmbedStats* stats) {
  ImageStore store = ImageStore::open(dataset.root, dataset.images);
  DatasetItems items = dataset_items(dataset, store);
  const int n = static_cast<int>(items.captions.size());
  if (const DualEncoder* enc = model.dual_encoder()) {
    // Cosines of the embeddings: the ranking every dual encoder's score gives (its scale and
    // bias do not reorder), as retrieval has always reported for CLIP.
    const auto t = enc->embed_texts(items.captions, stats);
    const auto im = enc->embed_images(items.images, stats);
    return matrix_from_embeddings(t, im, n, n, enc->embed_dim());
  }
  std::vector<PairIndex> pairs;
  for (std::size_t c = 0; c < items.captions.size(); ++c)
    for (std::size_t i = 0; i < items.images.size(); ++i)
      pairs.emplace_back(c, i);
  const std::vector<double> s = model.score_pairs(items.images, items.captions, pairs, stats);
  require_finite(model, s, [&](std::size_t bad) {
    return "caption '" + items.captions[pairs[bad].first] + "' with image " +
           items.images[pairs[bad].second].name;
  });
  ScoreMatrix m;
  m.captions = static_cast<int>(items.captions.size());
  m.images = static_cast<int>(items.images.size());
  m.scores.assign(s.begin(), s.end());
  return m;
}

}  // namespace winokit
