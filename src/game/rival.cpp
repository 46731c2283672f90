// CLIP zero-shot as the game's rival (see winokit/game/rival.hpp).
#include "winokit/game/rival.hpp"

#include <algorithm>
#include <cmath>
#include <mutex>

#include "winokit/eval/association_solver.hpp"

namespace winokit {

namespace {

class ClipRival final : public Rival {
 public:
  ClipRival(const ClipRuntime& rt, const std::map<std::string, std::filesystem::path>& pool,
            bool random_weights)
      : rt_(rt), random_(random_weights) {
    std::vector<ImageRequest> requests;
    std::vector<std::string> names;
    for (const auto& [name, path] : pool) {
      requests.push_back(image_file_request(path.string(), name));
      names.push_back(name);
    }
    const auto embeds = embed_images(rt_, requests);
    dim_ = rt_.model->config().embed_dim;
    for (std::size_t i = 0; i < names.size(); ++i) {
      images_[names[i]].assign(embeds.begin() + static_cast<std::ptrdiff_t>(i * dim_),
                               embeds.begin() + static_cast<std::ptrdiff_t>((i + 1) * dim_));
    }
  }
  std::vector<std::string> pick(const std::string& cue, const std::vector<std::string>& candidates,
                                int k) override {
    // One short prompt straight through the text tower (a row's bits do not depend on its
    // batch, so the embedding equals the batched path's).
    const std::vector<int> ids =
        rt_.tokenizer->encode(cue_prompt(cue, "{A} {cue}"), rt_.model->config().context_length);
    const EncodeOptions enc;
    std::vector<float> text;
    {
      std::lock_guard<std::mutex> lock(mutex_);  // one forward pass at a time
      text = rt_.model->encode_texts({ids}, enc).embeds;
    }
    std::vector<double> scores;
    for (const auto& c : candidates) {
      const auto it = images_.find(c);
      scores.push_back(it == images_.end() ? -INFINITY
                                           : clip_score(text.data(), it->second.data(), dim_, 1.0));
    }
    return select_top_k(candidates, scores, k);
  }
  std::string describe() const override { return rt_.source; }
  bool random_weights() const override { return random_; }

 private:
  ClipRuntime rt_;
  bool random_;
  int dim_ = 0;
  std::map<std::string, std::vector<float>> images_;
  std::mutex mutex_;
};

}  // namespace

std::unique_ptr<Rival> make_clip_rival(const ClipRuntime& runtime,
                                       const std::map<std::string, std::filesystem::path>& pool,
                                       bool random_weights) {
  return std::make_unique<ClipRival>(runtime, pool, random_weights);
}

}  // namespace winokit
