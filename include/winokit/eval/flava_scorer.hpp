// FLAVA as a pair scorer with either head: ITM (4 multimodal forward passes per Winoground
// example, the image and text encoders run once per image and caption) or contrastive (a dual
// encoder's dot products, scaled by exp(logit_scale) as FlavaForPreTraining's
// contrastive_logits_per_image).
//
//   winokit::FlavaRuntime rt = winokit::FlavaRuntime::load("flava-full/", std::nullopt, {});
//   auto scorer = winokit::make_flava_scorer(rt, "flava-itm");   // rt.head: itm by default
//   auto scores = scorer->score(dataset);
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "winokit/eval/association_solver.hpp"
#include "winokit/eval/retrieval.hpp"
#include "winokit/eval/scorer.hpp"
#include "winokit/io/image_store.hpp"
#include "winokit/model/flava_model.hpp"
#include "winokit/model/wordpiece.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(eval);

namespace winokit {

struct FlavaRunOptions {
  int batch_size = 32;  // pairs per multimodal forward
  int image_batch = 8;  // images per image-encoder forward
  // Called as work progresses: stage ("images", "pairs"), done, total.
  std::function<void(const std::string&, std::size_t, std::size_t)> on_progress;
};

struct FlavaRuntime {
  std::shared_ptr<FlavaModel> model;
  std::shared_ptr<WordPieceTokenizer> tokenizer;
  FlavaRunOptions options;
  std::string source;
  FlavaHead head = FlavaHead::Itm;
  std::string head_reason;  // why this head (asked for, or the default and why)

  // `head` unset: ITM when the checkpoint has the ITM head (FlavaForPreTraining), else
  // contrastive; asking for ITM on a checkpoint without it is a UsageError.
  static FlavaRuntime load(const std::filesystem::path& dir, std::optional<FlavaHead> head,
                           FlavaRunOptions options);
  std::vector<int> encode(const std::string& caption) const;
  nlohmann::json describe() const;
};

// Scores (caption, image) pairs with rt.head: pairs[p] = (caption index, image index). Every
// image is read, preprocessed and encoded once, every caption encoded once.
std::vector<double> flava_score_pairs(
    const FlavaRuntime& rt, const std::vector<std::function<ImageBytes()>>& images,
    const std::vector<std::string>& captions,
    const std::vector<std::pair<std::size_t, std::size_t>>& pairs);

std::unique_ptr<Scorer> make_flava_scorer(const FlavaRuntime& runtime, std::string name);

// WinoGAViL: the cue prompt scored with each candidate image; the k best selected.
SolveResult flava_solve_with_images(const FlavaRuntime& rt, const AssociationDataset& ds,
                                    const std::map<std::string, std::filesystem::path>& images,
                                    const AssociationSolveOptions& options);

// Every caption with every image (2N x 2N) with rt.head.
ScoreMatrix flava_score_matrix(const FlavaRuntime& rt, const WinogroundDataset& dataset);

}  // namespace winokit
