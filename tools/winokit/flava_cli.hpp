// The FLAVA branches of the model commands: a --model folder whose config.json says
// "model_type": "flava" is scored with the ITM or the contrastive head (eval --head, score,
// winogavil --images, retrieval --head); commands that need CLIP's towers refuse it
// (ModelFlags::load), and so does heatmap (no word-region alignment for FLAVA). serve takes
// FLAVA as the rival (flava_rival.hpp).
#pragma once

#include <string>
#include <vector>

#include "common.hpp"
#include "winokit/data/winogavil.hpp"
#include "winokit/eval/association.hpp"
#include "winokit/eval/flava_scorer.hpp"

namespace winokit::cli {

bool is_flava_model(const ModelFlags& flags);
// `head`: "itm", "contrastive" or empty (the default: ITM when the checkpoint has the head).
FlavaRuntime load_flava(const ModelFlags& flags, const std::string& head);
[[noreturn]] void refuse_flava(const std::string& dir);

// Both heads' scores of each caption with the image (the ITM column when the head exists).
int run_flava_score(const ModelFlags& flags, const std::string& image,
                    const std::vector<std::string>& captions);
ScoreMatrix flava_retrieval_matrix(const ModelFlags& flags, const std::string& head,
                                   const WinogroundDataset& dataset, nlohmann::json& source);
std::vector<std::vector<std::string>> flava_winogavil(const ModelFlags& flags,
                                                      const AssociationDataset& ds,
                                                      const std::string& images,
                                                      const std::string& captions, bool supervised,
                                                      const std::string& prompt_template,
                                                      nlohmann::json& source);

}  // namespace winokit::cli
