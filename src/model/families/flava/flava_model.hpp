// FLAVA in-process (Hugging Face FlavaForPreTraining or FlavaModel checkpoints, e.g.
// facebook/flava-full): FLAVA's image processor, the ViT image encoder, the BERT-tokenised text
// encoder (pre-LN, as modeling_flava.py), the multimodal encoder over [CLS; image; text], and
// both scores the Winoground paper reports:
//   contrastive: exp(logit_scale) * <normalize(image_projection(image [CLS])),
//                                    normalize(text_projection(text [CLS]))>
//                (FlavaForPreTraining's contrastive_logits_per_image: the scale is applied);
//   itm: softmax(itm_head(multimodal states))[match], the probability of label 1.
// The pair scorer is in flava_scorer.hpp.
//
//   winokit::FlavaModel m = winokit::FlavaModel::load("flava-full/");
//   winokit::FlavaImage im = winokit::flava_preprocess(winokit::decode_image(bytes), m.config());
//   auto img = m.embed_images({&im});                   // once per image (both heads use it)
//   auto txt = m.embed_texts({tokenizer.encode("a dog", 512)});
//   double c = m.contrastive(img[0], txt[0]);
//   double p = m.itm({&txt[0]}, {&img[0]}).probabilities[0];
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "winokit/io/image_decode.hpp"
#include "winokit/model/preprocess.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(model);

namespace winokit {

enum class FlavaHead { Itm, Contrastive };
const char* to_string(FlavaHead head);
// "itm" or "contrastive"; UsageError otherwise.
FlavaHead parse_flava_head(const std::string& text);

struct FlavaEncoderConfig {
  int hidden = 768, layers = 12, heads = 12, mlp = 3072;
  double eps = 1e-12;
  bool qkv_bias = true;
};

struct FlavaConfig {
  FlavaEncoderConfig image, text, multimodal = {768, 6, 12, 3072, 1e-12, true};
  int image_size = 224, patch = 16;
  int vocab_size = 30522, max_text_len = 512, type_vocab = 2;
  bool multimodal_cls = true;
  int projection_dim = 768;
  // The image processor (preprocessor_config.json): resize to resize_h x resize_w (PIL bicubic),
  // centre crop to crop_h x crop_w, rescale 1/255, normalise.
  int resize_h = 224, resize_w = 224, crop_h = 224, crop_w = 224;
  bool center_crop = true;
  std::array<float, 3> mean = {0.48145466f, 0.4578275f, 0.40821073f};
  std::array<float, 3> std = {0.26862954f, 0.26130258f, 0.27577711f};
  int grid() const { return image_size / patch; }
  int image_tokens() const { return 1 + grid() * grid(); }
  nlohmann::json to_json() const;
};

// True when dir/config.json says "model_type": "flava".
bool is_flava_checkpoint(const std::filesystem::path& dir);
// config.json (image_config / text_config / multimodal_config) and preprocessor_config.json
// when present. Throws InputError naming the file and field for what is not supported.
FlavaConfig load_flava_config(const std::filesystem::path& dir);

struct FlavaImage {
  int height = 0, width = 0;
  std::vector<float> pixels;  // [3, height, width], normalised
};
// convert("RGB"), PIL bicubic resize, centre crop (top = (h - ch) / 2, left = (w - cw) / 2),
// x * (1/255) in double rounded to float, (x - mean) / std in float.
FlavaImage flava_preprocess(const DecodedImage& image, const FlavaConfig& config);

// What one image (or one caption) contributes to every score, computed once.
struct FlavaEmbeds {
  std::vector<float> embedding;  // [projection_dim]: the normalised projected [CLS] state
  std::vector<float> mm;         // [tokens, multimodal hidden]: *_to_mm_projection of the last
                                 // encoder layer's states (before the final layernorm)
  int tokens = 0;
};

struct FlavaItmOutput {
  std::vector<float> logits;          // per pair: (no match, match)
  std::vector<double> probabilities;  // per pair: softmax probability of "match"
};

class FlavaModel {
 public:
  // Loads config, weights (model.safetensors, sharded index, or pytorch_model.bin; names with
  // the "flava." prefix of FlavaForPreTraining or without it, as FlavaModel) and checks every
  // tensor's presence and shape. The ITM head (itm_head.*) exists only in FlavaForPreTraining.
  static FlavaModel load(const std::filesystem::path& dir);
  FlavaModel(FlavaModel&&) noexcept;
  FlavaModel& operator=(FlavaModel&&) noexcept;
  ~FlavaModel();

  const FlavaConfig& config() const;
  const std::string& weights_id() const;
  bool has_itm() const;
  std::string layout() const;  // "FlavaForPreTraining" or "FlavaModel"
  float logit_scale() const;   // as stored; contrastive() multiplies by exp() of it

  // Images of exactly crop_h x crop_w = image_size (FLAVA's processor output).
  std::vector<FlavaEmbeds> embed_images(const std::vector<const FlavaImage*>& images) const;
  // Each caption: [CLS] ... [SEP] ids, 1 to max_text_len long.
  std::vector<FlavaEmbeds> embed_texts(const std::vector<std::vector<int>>& ids) const;
  double contrastive(const FlavaEmbeds& image, const FlavaEmbeds& text) const;
  // Pairs (*texts[p], *images[p]) through the multimodal encoder and the ITM head. UsageError
  // when the checkpoint has no ITM head.
  FlavaItmOutput itm(const std::vector<const FlavaEmbeds*>& texts,
                     const std::vector<const FlavaEmbeds*>& images) const;

 private:
  FlavaModel();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace winokit
