// ViLT behind the model interface (vl_model.hpp): the runtime (model, tokenizer, options), pair
// scoring with each image embedded once, and the registry's hooks.
//
//   winokit::ViltRuntime rt = winokit::ViltRuntime::load("vilt-b32-finetuned-coco/", {});
//   std::vector<double> s = winokit::vilt_score_pairs(rt, images, captions, {{0, 0}});
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "model/families/vilt/vilt_model.hpp"
#include "model/text/wordpiece.hpp"
#include "winokit/model/vl_model.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(model);

namespace winokit {

struct ViltRunOptions {
  int batch_size = 32;  // pairs per forward
  // Called as work progresses: stage ("pairs"), done, total.
  std::function<void(const std::string&, std::size_t, std::size_t)> on_progress;
};

struct ViltRuntime {
  std::shared_ptr<ViltModel> model;
  std::shared_ptr<WordPieceTokenizer> tokenizer;
  ViltRunOptions options;
  std::string source;

  static ViltRuntime load(const std::filesystem::path& dir, ViltRunOptions options);
  static ViltRuntime random(const ViltConfig& config, std::uint64_t seed,
                            std::shared_ptr<WordPieceTokenizer> tokenizer, ViltRunOptions options);
  std::vector<int> encode(const std::string& caption) const;
  nlohmann::json describe() const;
};

// Scores every (caption, image) pair: images[i] is read, preprocessed and embedded once;
// pairs[p] = (caption index, image index). Results in pair order.
std::vector<double> vilt_score_pairs(const ViltRuntime& rt,
                                     const std::vector<std::function<ImageBytes()>>& images,
                                     const std::vector<std::string>& captions,
                                     const std::vector<std::pair<std::size_t, std::size_t>>& pairs);

std::unique_ptr<VlModel> open_vilt(const std::filesystem::path& checkpoint,
                                   const ModelOptions& options);

}  // namespace winokit
