// Any model zero-shot as the game's rival (see winokit/game/rival.hpp).
#include "winokit/game/rival.hpp"

#include <cmath>

#include "winokit/eval/association_solver.hpp"

namespace winokit {

namespace {

class ModelRival final : public Rival {
 public:
  ModelRival(std::unique_ptr<VlModel> model,
             const std::map<std::string, std::filesystem::path>& pool, bool random_weights)
      : model_(std::move(model)), random_(random_weights) {
    std::vector<ImageRequest> requests;
    for (const auto& [name, path] : pool) {
      index_[name] = requests.size();
      requests.push_back(image_file_request(path.string(), name));
    }
    images_ = model_->prepare_images(requests);
    const nlohmann::json d = model_->describe();
    source_ = d.contains("model") && d["model"].is_string() ? d["model"].get<std::string>()
                                                            : model_->name();
  }
  std::vector<std::string> pick(const std::string& cue, const std::vector<std::string>& candidates,
                                int k) override {
    std::vector<PairIndex> pairs;
    std::vector<std::size_t> slot(candidates.size(), SIZE_MAX);
    for (std::size_t c = 0; c < candidates.size(); ++c) {
      const auto it = index_.find(candidates[c]);
      if (it == index_.end()) continue;  // not in the pool: never picked before one that is
      slot[c] = pairs.size();
      pairs.emplace_back(0, it->second);
    }
    const std::vector<double> s = images_->score({cue_prompt(cue, "{A} {cue}")}, pairs);
    std::vector<double> scores;
    for (std::size_t c = 0; c < candidates.size(); ++c)
      scores.push_back(slot[c] == SIZE_MAX ? -INFINITY : s[slot[c]]);
    return select_top_k(candidates, scores, k);
  }
  // Where the model comes from (a checkpoint path, or "random weights (seed N)"): the server's
  // status shows its last component.
  std::string describe() const override { return source_; }
  bool random_weights() const override { return random_; }

 private:
  std::unique_ptr<VlModel> model_;
  bool random_;
  std::map<std::string, std::size_t> index_;
  std::unique_ptr<PreparedImages> images_;
  std::string source_;
};

}  // namespace

std::unique_ptr<Rival> make_model_rival(std::unique_ptr<VlModel> model,
                                        const std::map<std::string, std::filesystem::path>& pool,
                                        bool random_weights) {
  return std::make_unique<ModelRival>(std::move(model), pool, random_weights);
}

}  // namespace winokit
