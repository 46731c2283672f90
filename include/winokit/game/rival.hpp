// The WinoGAViL game's rival AI: the interface a round asks for the model's picks, and any
// registered model zero-shot as the rival (the prompt "A/An <cue>" scored with each candidate).
//
//   auto rival = winokit::make_model_rival(winokit::open_model(dir, {}), pool, false);
//   std::vector<std::string> picks = rival->pick("beach", {"sea", "sun", "owl"}, 2);
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "winokit/model/vl_model.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(game);

namespace winokit {

// The rival AI: picks k of the candidates for a cue.
class Rival {
 public:
  virtual ~Rival() = default;
  virtual std::vector<std::string> pick(const std::string& cue,
                                        const std::vector<std::string>& candidates, int k) = 0;
  virtual std::string describe() const = 0;
  virtual bool random_weights() const = 0;
};

// The model zero-shot with the prompt "A/An <cue>": the pool's images are encoded once when the
// rival is made (VlModel::prepare_images: a dual encoder's embeddings through the cache, a
// cross-encoder's image encodings in memory); each pick scores the prompt with the candidates,
// one pick at a time; ties broken by candidate order. The rival owns the model.
std::unique_ptr<Rival> make_model_rival(std::unique_ptr<VlModel> model,
                                        const std::map<std::string, std::filesystem::path>& pool,
                                        bool random_weights);

}  // namespace winokit
