// LLaVA-OneVision (Li et al., 2024; Hugging Face LlavaOnevisionForConditionalGeneration,
// model_type "llava_onevision", e.g. llava-hf/llava-onevision-qwen2-0.5b-ov-hf) in-process,
// scored by VQAScore (vqascore.hpp): P("Yes") after the question
// `Does this figure show "{caption}"? Please answer yes or no.`.
//
// The pieces, as transformers' code does them (tests/fixtures/make_llava_onevision_golden.py
// transcribes them in PyTorch):
// - the image processor (preprocessor_config.json; LlavaOnevisionImageProcessor, the PIL one):
//   convert("RGB"); anyres: select_best_resolution of the image's (height, width) over
//   image_grid_pinpoints, the image resized into that pinpoint keeping its aspect
//   (get_patch_output_size, PIL BICUBIC) and zero-padded centred to it, cut into tiles of
//   size x size row by row, after the whole image resized to one tile (the base tile);
//   x * rescale_factor, (x - mean) / std;
// - the vision tower (SigLIP layers: hidden_states[vision_feature_layer], no post-LayerNorm, no
//   head), the projector (linear_1, gelu, linear_2) on every tile's patches, then
//   pack_image_features: the base tile's features, then the other tiles' laid out as one
//   (rows * side) x (cols * side) grid, cropped to the image's aspect (unpad_image), bilinearly
//   downscaled when larger than anyres_max_N tiles' worth by over 10%, image_newline after each
//   row; these replace the <image> tokens' input embeddings;
// - the prompt: the checkpoint's chat template for one user turn (image, then the question) and
//   the generation prompt: `<|im_start|>user\n` + the image's tokens + `\n` + question +
//   `<|im_end|>\n<|im_start|>assistant\n`, the processor's <image> repeated as many times as
//   the features (LlavaOnevisionProcessor._get_number_of_features; a checkpoint where the two
//   disagree is refused, as transformers refuses it);
// - the Qwen2 text model (llama_model.hpp).
// The image's part of the prompt is run once and kept as a KV cache; each caption's question
// continues from it.
//
//   auto m = winokit::LlavaOnevisionModel::load("llava-onevision-qwen2-0.5b-ov-hf/");
//   winokit::KvCache c = m.image_prefix(winokit::decode_image(bytes));
//   std::vector<double> p = m.answer_probabilities(c, {"a dog", "a cat"});
#pragma once

#include <array>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/lm/llama_model.hpp"
#include "model/runtime/vqascore.hpp"
#include "model/text/hf_tokenizer.hpp"
#include "winokit/io/image_decode.hpp"
#include "winokit/model/vl_model.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(model);

namespace winokit {

struct LlavaOnevisionPreprocessConfig {
  bool do_resize = true, do_rescale = true, do_normalize = true, do_convert_rgb = true;
  int size = 384;    // size.height == size.width (or shortest_edge): one tile's edge
  int resample = 3;  // PIL BICUBIC (the only one supported)
  std::vector<std::pair<int, int>> pinpoints;  // image_grid_pinpoints, (height, width)
  double rescale_factor = 1.0 / 255.0;
  std::array<float, 3> mean = {0.48145466f, 0.4578275f, 0.40821073f},
                       std = {0.26862954f, 0.26130258f, 0.27577711f};
  nlohmann::json to_json() const;
};

struct LlavaOnevisionConfig {
  LlamaConfig text;  // text_config (qwen2)
  // vision_config (siglip_vision_model), SiglipVisionConfig's defaults
  int vision_hidden = 768, vision_mlp = 3072, vision_layers = 12, vision_heads = 12;
  int image_size = 224, patch = 16;
  double vision_eps = 1e-6;
  std::string vision_act = "gelu_pytorch_tanh";
  int image_token_id = 151646;    // image_token_index
  int vision_feature_layer = -1;  // an index into hidden_states (embeddings, layer 1, ...)
  std::string select_strategy = "full";
  std::string aspect_ratio = "anyres_max_9";
  int max_num_patches = 9;  // from aspect_ratio
  std::string projector_act = "gelu";
  bool projector_bias = true;                  // multimodal_projector_bias
  std::vector<std::pair<int, int>> pinpoints;  // image_grid_pinpoints, (height, width)
  LlavaOnevisionPreprocessConfig preprocess;
  nlohmann::json to_json() const;
};

// config.json and preprocessor_config.json of a folder.
LlavaOnevisionConfig load_llava_onevision_config(const std::filesystem::path& dir);

// transformers' select_best_resolution: the pinpoint (height, width) for an image.
std::pair<int, int> llava_best_resolution(int height, int width,
                                          const std::vector<std::pair<int, int>>& pinpoints);

// An image as the processor hands it to the vision tower: `count` tiles of 3 x size x size
// floats (the base tile, then the pinpoint's rows x cols tiles row by row), the image's size
// and the pinpoint chosen.
struct LlavaOnevisionTiles {
  int height = 0, width = 0;   // the image's
  int grid_h = 0, grid_w = 0;  // the pinpoint's
  int count = 0, size = 0;
  std::vector<float> pixels;
};
LlavaOnevisionTiles llava_onevision_preprocess(const DecodedImage& image,
                                               const LlavaOnevisionPreprocessConfig& config);

// The packed features' layout for an image of height x width: the base tile's tokens, then
// `rows` rows of `cols` grid tokens and a newline each; `downscaled` when interpolated.
struct LlavaFeatureLayout {
  int base = 0, rows = 0, cols = 0;
  int grid_rows = 0, grid_cols = 0;  // before the crop and the downscale
  int crop_top = 0, crop_left = 0, crop_rows = 0, crop_cols = 0;
  bool downscaled = false;
  int tokens() const { return base + rows * (cols + 1); }
};
LlavaFeatureLayout llava_onevision_layout(const LlavaOnevisionConfig& config, int height,
                                          int width);
// LlavaOnevisionProcessor._get_number_of_features: how many <image> tokens the processor puts in
// the prompt.
int llava_onevision_processor_tokens(const LlavaOnevisionConfig& config, int height, int width);

class LlavaOnevisionModel {
 public:
  static LlavaOnevisionModel load(const std::filesystem::path& dir,
                                  const VqaScoreOptions& options = {});
  LlavaOnevisionModel(LlavaOnevisionModel&&) noexcept;
  LlavaOnevisionModel& operator=(LlavaOnevisionModel&&) noexcept;
  ~LlavaOnevisionModel();

  const LlavaOnevisionConfig& config() const;
  const HfTokenizer& tokenizer() const;
  const LlamaModel& text_model() const;
  const std::string& weights_id() const;
  const VqaScoreOptions& options() const;
  // The packed image features: [tokens, text hidden].
  std::vector<float> image_features(const LlavaOnevisionTiles& tiles) const;
  // The prompt's ids up to the image's last token.
  std::vector<int> prefix_ids(const LlavaOnevisionTiles& tiles) const;
  // The ids after the image: the template's text before the question, the question, the end of
  // the turn and the generation prompt.
  std::vector<int> question_ids(const std::string& caption) const;
  KvCache image_prefix(const LlavaOnevisionTiles& tiles) const;
  KvCache image_prefix(const DecodedImage& image) const;
  // P(answer's first token | prefix, question(caption)) for each caption, batched.
  std::vector<double> answer_probabilities(const KvCache& prefix,
                                           const std::vector<std::string>& captions) const;
  // The last position's logits for each caption: [captions, vocab].
  std::vector<float> answer_logits(const KvCache& prefix,
                                   const std::vector<std::string>& captions) const;
  int answer_id() const;

 private:
  LlavaOnevisionModel();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

bool is_llava_onevision_checkpoint(const std::filesystem::path& checkpoint);
std::unique_ptr<VlModel> open_llava_onevision(const std::filesystem::path& checkpoint,
                                              const ModelOptions& options);

}  // namespace winokit
