// The model runtime: a loaded CLIP with its tokenizer, and the embedding pipeline every command
// uses (eval, embed, retrieval, variants, probes, heat maps, the association solver and the
// game's rival). Images are read, decoded and preprocessed on a second thread while the model
// encodes the previous batch; captions are tokenised and encoded sorted by length; every
// embedding goes through the on-disk cache; non-finite embeddings are an error naming the input.
//
//   winokit::ClipRuntime rt = winokit::ClipRuntime::load("RN50.pt", {});  // or a folder
//   std::vector<float> img = winokit::embed_images(rt, {winokit::image_file_request("a.jpg")});
//   std::vector<float> txt = winokit::embed_texts(rt, {"a photo of a dog"});
//   double s = winokit::clip_score(&txt[0], &img[0], rt.model->config().embed_dim,
//                                  rt.model->logit_scale_exp());
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/families/clip/clip_model.hpp"
#include "winokit/io/image_store.hpp"
#include "winokit/model/embedding_cache.hpp"
#include "winokit/model/tokenizer.hpp"
#include "winokit/model/vl_model.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(model);

namespace winokit {

struct ClipRunOptions {
  int batch_size = 32;
  bool use_cache = true;
  std::filesystem::path cache_dir;                 // empty: default_cache_dir()
  std::optional<PreprocessPipeline> pipeline;      // overrides the checkpoint's
  std::optional<std::filesystem::path> tokenizer;  // file or folder; default: the checkpoint's
  // Called as work progresses: stage ("images" or "captions"), done, total.
  std::function<void(const std::string&, std::size_t, std::size_t)> on_progress;
};

// A loaded model with its tokenizer and run options.
struct ClipRuntime {
  std::shared_ptr<ClipModel> model;
  std::shared_ptr<ClipTokenizer> tokenizer;
  ClipRunOptions options;
  std::string source;  // checkpoint folder, or "random ViT-B/32 (seed N)"

  // A checkpoint folder, or an OpenAI .pt file (its tokenizer: options.tokenizer, else
  // bpe_simple_vocab_16e6.txt.gz beside it, else a UsageError saying what to pass).
  static ClipRuntime load(const std::filesystem::path& dir, ClipRunOptions options);
  // Seeded random weights of the given shapes; the tokenizer must be given (the vocabulary is
  // real even when the weights are not).
  static ClipRuntime random(const ClipConfig& config, std::uint64_t seed,
                            std::shared_ptr<ClipTokenizer> tokenizer, ClipRunOptions options);
  PreprocessConfig preprocess() const;
  nlohmann::json describe() const;
};

// [n, embed_dim] embeddings, in request order. `full`, when given, receives the states that
// `encode` asks for over the whole request (when states are asked for, every input is
// computed, none read from the cache): per-layer states
// (hidden, hidden_mean, hidden_max) as [layers + 1, n, width] whatever the batching.
std::vector<float> embed_images(const ClipRuntime& rt, const std::vector<ImageRequest>& requests,
                                EmbedStats* stats = nullptr, const EncodeOptions& encode = {},
                                TowerOutput* full = nullptr);
std::vector<float> embed_texts(const ClipRuntime& rt, const std::vector<std::string>& captions,
                               EmbedStats* stats = nullptr, const EncodeOptions& encode = {},
                               TowerOutput* full = nullptr);

// s(c, i) = exp(logit_scale) * cos(text c, image i), computed in double from float embeddings.
double clip_score(const float* text, const float* image, int dim, double logit_scale_exp);

}  // namespace winokit
