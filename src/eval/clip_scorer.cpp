#include "winokit/eval/clip_scorer.hpp"

#include <cmath>
#include <map>

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

namespace {

class ClipScorer final : public Scorer {
 public:
  ClipScorer(ClipRuntime rt, std::string name) : rt_(std::move(rt)), name_(std::move(name)) {}
  std::string name() const override { return name_; }
  nlohmann::json describe() const override {
    nlohmann::json d = rt_.describe();
    d["embeddings"] = {
        {"images_computed", stats_.images_computed},  {"images_cached", stats_.images_cached},
        {"captions_computed", stats_.texts_computed}, {"captions_cached", stats_.texts_cached},
        {"image_seconds", stats_.image_seconds},      {"caption_seconds", stats_.text_seconds}};
    return d;
  }
  std::vector<WinogroundScores> score(const WinogroundDataset& dataset) override {
    ImageStore store = ImageStore::open(dataset.root, dataset.images);
    std::vector<std::string> image_names, captions;
    std::map<std::string, std::size_t> image_index, caption_index;
    for (const auto& ex : dataset.examples) {
      for (int k = 0; k < 2; ++k) {
        const auto& n = ex.images[static_cast<std::size_t>(k)];
        if (image_index.emplace(n, image_names.size()).second) image_names.push_back(n);
        const auto& c = ex.captions[static_cast<std::size_t>(k)];
        if (caption_index.emplace(c, captions.size()).second) captions.push_back(c);
      }
    }
    std::vector<ImageRequest> requests;
    for (const auto& n : image_names) {
      requests.push_back(
          {n, [&store, n] { return store.read(n); }, [&store, n] { return store.file_of(n); }});
    }
    stats_ = {};
    const auto text = embed_texts(rt_, captions, &stats_);
    const auto images = embed_images(rt_, requests, &stats_);
    const int dim = rt_.model->config().embed_dim;
    const double scale = rt_.model->logit_scale_exp();
    std::vector<WinogroundScores> out(dataset.examples.size());
    for (std::size_t e = 0; e < dataset.examples.size(); ++e) {
      const auto& ex = dataset.examples[e];
      for (int c = 0; c < 2; ++c) {
        for (int i = 0; i < 2; ++i) {
          const float* t = &text[caption_index[ex.captions[static_cast<std::size_t>(c)]] * dim];
          const float* im = &images[image_index[ex.images[static_cast<std::size_t>(i)]] * dim];
          const double s = clip_score(t, im, dim, scale);
          if (!std::isfinite(s)) {
            throw InputError({rt_.source, 0, ""},
                             "non-finite score for example " + ex.id + " (caption " +
                                 std::to_string(c) + ", image " + std::to_string(i) +
                                 "; exp(logit_scale) = " + std::to_string(scale) + ")",
                             "the checkpoint's weights or logit_scale are broken");
          }
          out[e].s[pair_index(c, i)] = s;
        }
      }
    }
    return out;
  }
  const EmbedStats& stats() const { return stats_; }

 private:
  ClipRuntime rt_;
  std::string name_;
  EmbedStats stats_;
};

}  // namespace

std::unique_ptr<Scorer> make_clip_scorer(const ClipRuntime& runtime, std::string name) {
  return std::make_unique<ClipScorer>(runtime, std::move(name));
}

}  // namespace winokit
