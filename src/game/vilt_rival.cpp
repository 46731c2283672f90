#include "winokit/game/vilt_rival.hpp"

#include <mutex>

#include "winokit/association_solver.hpp"
#include "winokit/files.hpp"

namespace winokit {

namespace {

class ViltRival final : public Rival {
 public:
  ViltRival(const ViltRuntime& rt, const std::map<std::string, std::filesystem::path>& pool)
      : rt_(rt) {
    for (const auto& [name, path] : pool) {
      ImageBytes b;
      b.name = name;
      b.source = path.string();
      b.bytes = read_file(path);
      images_.emplace(
          name, rt_.model->embed_image(vilt_preprocess(decode_image(b), rt_.model->config())));
    }
  }
  std::vector<std::string> pick(const std::string& cue, const std::vector<std::string>& candidates,
                                int k) override {
    const std::vector<int> ids = rt_.encode(cue_prompt(cue, "{A} {cue}"));
    std::vector<std::vector<int>> batch;
    std::vector<const ViltImageEmbeds*> ims;
    std::vector<std::size_t> slot(candidates.size(), SIZE_MAX);
    for (std::size_t c = 0; c < candidates.size(); ++c) {
      const auto it = images_.find(candidates[c]);
      if (it == images_.end()) continue;
      slot[c] = batch.size();
      batch.push_back(ids);
      ims.push_back(&it->second);
    }
    ViltOutput o;
    {
      std::lock_guard<std::mutex> lock(mutex_);  // one forward pass at a time
      o = rt_.model->score(batch, ims);
    }
    std::vector<double> scores;
    for (std::size_t c = 0; c < candidates.size(); ++c)
      scores.push_back(slot[c] == SIZE_MAX ? -INFINITY : o.scores[slot[c]]);
    return select_top_k(candidates, scores, k);
  }
  std::string describe() const override { return rt_.source; }
  bool random_weights() const override { return false; }

 private:
  ViltRuntime rt_;
  std::map<std::string, ViltImageEmbeds> images_;
  std::mutex mutex_;
};

}  // namespace

std::unique_ptr<Rival> make_vilt_rival(const ViltRuntime& runtime,
                                       const std::map<std::string, std::filesystem::path>& pool) {
  return std::make_unique<ViltRival>(runtime, pool);
}

}  // namespace winokit
