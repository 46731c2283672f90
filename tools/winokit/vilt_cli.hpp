// The ViLT branches of the model commands: a --model folder whose config.json says
// "model_type": "vilt" is a ViLT pair scorer (eval, score, winogavil, retrieval, heatmap);
// commands that need a dual encoder's embeddings refuse it (ModelFlags::load).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common.hpp"
#include "winokit/data/winogavil.hpp"
#include "winokit/eval/association.hpp"
#include "winokit/eval/vilt_scorer.hpp"

namespace winokit::cli {

bool is_vilt_model(const ModelFlags& flags);
// Throws UsageError for flags that only mean something for CLIP (--preprocess, --tokenizer).
ViltRuntime load_vilt(const ModelFlags& flags);
// The error for commands that need embeddings.
[[noreturn]] void refuse_vilt(const std::string& dir);

int run_vilt_score(const ModelFlags& flags, const std::string& image,
                   const std::vector<std::string>& captions);
ScoreMatrix vilt_retrieval_matrix(const ModelFlags& flags, const WinogroundDataset& dataset,
                                  nlohmann::json& source);
std::vector<std::vector<std::string>> vilt_winogavil(const ModelFlags& flags,
                                                     const AssociationDataset& ds,
                                                     const std::string& images,
                                                     const std::string& captions, bool supervised,
                                                     const std::string& prompt_template,
                                                     nlohmann::json& source);
// retrieval --rerank K for the ITM models (ViLT, FLAVA): a dual encoder's top K images per
// caption and top K captions per image are re-scored with the ITM model and ranked first, in
// ITM order (ties kept); the rest keep the dual encoder's order below them. The candidates come
// from `candidates` (a CLIP folder), or, for FLAVA when it is empty, from FLAVA's own
// contrastive head. Two matrices, one per direction (a pair can be in one direction's top K
// and not in the other's).
struct RerankedRetrieval {
  ScoreMatrix text_to_image, image_to_text;
  nlohmann::json source;
};
RerankedRetrieval rerank_retrieval(const ModelFlags& flags, const std::string& head,
                                   const std::string& candidates, int k,
                                   const WinogroundDataset& dataset);

int run_vilt_heatmap(const ModelFlags& flags, const WinogroundDataset& dataset,
                     const std::vector<std::size_t>& chosen, const std::string& html,
                     const std::string& out_dir);

}  // namespace winokit::cli
