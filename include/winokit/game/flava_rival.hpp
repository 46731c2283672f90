// FLAVA as the WinoGAViL game's rival: the prompt "A/An <cue>" is scored with each candidate
// image with the runtime's head (ITM: a multimodal pass per candidate; contrastive: dot
// products), the images encoded once when the rival is made; the k best are picked, ties broken
// by candidate order.
//
//   auto rival = winokit::make_flava_rival(winokit::FlavaRuntime::load("flava-full", {}, {}),
//   pool); std::vector<std::string> picks = rival->pick("beach", {"sea", "sun", "owl"}, 2);
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "winokit/eval/flava_scorer.hpp"
#include "winokit/game/game.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(game);

namespace winokit {

std::unique_ptr<Rival> make_flava_rival(const FlavaRuntime& runtime,
                                        const std::map<std::string, std::filesystem::path>& pool);

}  // namespace winokit
