// The WinoGAViL game's rival AI: the interface a round asks for the model's picks, and CLIP
// zero-shot as the default rival (ViLT is in game/vilt_rival.hpp).
//
//   auto rival = winokit::make_clip_rival(runtime, pool, /*random_weights=*/false);
//   std::vector<std::string> picks = rival->pick("beach", {"sea", "sun", "owl"}, 2);
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "winokit/model/embedding_runtime.hpp"

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

// CLIP zero-shot with the prompt "A/An <cue>" over the pool's image embeddings, computed once
// (through the embedding cache) when the rival is made; ties broken by candidate order.
std::unique_ptr<Rival> make_clip_rival(const ClipRuntime& runtime,
                                       const std::map<std::string, std::filesystem::path>& pool,
                                       bool random_weights);

}  // namespace winokit
