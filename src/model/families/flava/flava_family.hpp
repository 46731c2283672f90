// FLAVA behind the model interface (vl_model.hpp): the runtime (model, tokenizer, head,
// options), pair scoring with either head, and the registry's hooks.
//
//   winokit::FlavaRuntime rt = winokit::FlavaRuntime::load("flava-full/", std::nullopt, {});
//   std::vector<double> s = winokit::flava_score_pairs(rt, images, captions, {{0, 0}});
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/families/flava/flava_model.hpp"
#include "model/text/wordpiece.hpp"
#include "winokit/model/vl_model.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(model);

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

std::unique_ptr<VlModel> open_flava(const std::filesystem::path& checkpoint,
                                    const ModelOptions& options);

}  // namespace winokit
