// ViLT as the WinoGAViL game's rival: the prompt "A/An <cue>" is scored jointly with each
// candidate image (the images' patch embeddings are computed once, when the rival is made) and
// the k best are picked, ties broken by candidate order.
//
//   auto rival = winokit::make_vilt_rival(winokit::ViltRuntime::load("vilt-coco", {}), pool);
//   std::vector<std::string> picks = rival->pick("beach", {"sea", "sun", "owl"}, 2);
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "winokit/eval/vilt_scorer.hpp"
#include "winokit/game/game.hpp"
#include "winokit/game/rival.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(game);

namespace winokit {

std::unique_ptr<Rival> make_vilt_rival(const ViltRuntime& runtime,
                                       const std::map<std::string, std::filesystem::path>& pool);

}  // namespace winokit
