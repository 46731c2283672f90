#include "winokit/game/flava_rival.hpp"

#include <cmath>
#include <mutex>

#include "winokit/eval/association_solver.hpp"
#include "winokit/io/files.hpp"

namespace winokit {

namespace {

class FlavaRival final : public Rival {
 public:
  FlavaRival(const FlavaRuntime& rt, const std::map<std::string, std::filesystem::path>& pool)
      : rt_(rt) {
    for (const auto& [name, path] : pool) {
      ImageBytes b;
      b.name = name;
      b.source = path.string();
      b.bytes = read_file(path);
      const FlavaImage im = flava_preprocess(decode_image(b), rt_.model->config());
      images_.emplace(name, std::move(rt_.model->embed_images({&im})[0]));
    }
  }
  std::vector<std::string> pick(const std::string& cue, const std::vector<std::string>& candidates,
                                int k) override {
    const std::vector<int> ids = rt_.encode(cue_prompt(cue, "{A} {cue}"));
    std::vector<double> scores(candidates.size(), -INFINITY);
    std::lock_guard<std::mutex> lock(mutex_);  // one forward pass at a time
    const FlavaEmbeds text = std::move(rt_.model->embed_texts({ids})[0]);
    std::vector<const FlavaEmbeds*> ts, is;
    std::vector<std::size_t> slot;
    for (std::size_t c = 0; c < candidates.size(); ++c) {
      const auto it = images_.find(candidates[c]);
      if (it == images_.end()) continue;
      if (rt_.head == FlavaHead::Contrastive) {
        scores[c] = rt_.model->contrastive(it->second, text);
        continue;
      }
      slot.push_back(c);
      ts.push_back(&text);
      is.push_back(&it->second);
    }
    if (!slot.empty()) {
      const FlavaItmOutput o = rt_.model->itm(ts, is);
      for (std::size_t p = 0; p < slot.size(); ++p)
        scores[slot[p]] = o.probabilities[p];
    }
    return select_top_k(candidates, scores, k);
  }
  std::string describe() const override {
    return rt_.source + " (FLAVA, " + to_string(rt_.head) + " head)";
  }
  bool random_weights() const override { return false; }

 private:
  FlavaRuntime rt_;
  std::map<std::string, FlavaEmbeds> images_;
  std::mutex mutex_;
};

}  // namespace

std::unique_ptr<Rival> make_flava_rival(const FlavaRuntime& runtime,
                                        const std::map<std::string, std::filesystem::path>& pool) {
  return std::make_unique<FlavaRival>(runtime, pool);
}

}  // namespace winokit
