// BLIP image-text matching in-process (Hugging Face BlipForImageTextRetrieval, e.g.
// Salesforce/blip-itm-base-coco): BLIP's image processor, the ViT vision encoder (pre-LN, fused
// qkv), the BERT text encoder (post-LN) with cross-attention to the image in every layer, and both
// retrieval heads:
//   itm: softmax(itm_head(h[CLS]))[1], the probability of "match" (text encoder WITH the image);
//   itc: <normalize(vision_proj(image [CLS])), normalize(text_proj(h[CLS]))>, a cosine (text
//        encoder WITHOUT cross-attention, no logit scale).
// Captions are tokenised as HF's BlipProcessor does ([CLS] first, not LAVIS's [ENC]). The
// VlModel (registry) face is open_blip(): pairs batched, each image encoded once, pair cache.
//
//   winokit::BlipModel m = winokit::BlipModel::load("blip-itm-base-coco/");
//   auto tok = winokit::WordPieceTokenizer::load("blip-itm-base-coco/");
//   std::vector<float> px = winokit::blip_preprocess(winokit::decode_image(bytes), m.config());
//   winokit::BlipImageEmbeds im = m.encode_image(px.data());   // once per image
//   std::vector<int> ids = tok.encode("a dog", m.config().max_text_len);
//   std::vector<float> logits = m.itm_logits({&ids}, {&im});  // [1, 2]
//   std::unique_ptr<winokit::VlModel> vl = winokit::open_blip("blip-itm-base-coco/", {});
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "winokit/io/image_decode.hpp"
#include "winokit/model/vl_model.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(model);

namespace winokit {

enum class BlipHead { Itm, Itc };
const char* to_string(BlipHead head);
// "itm" or "itc"; UsageError naming both otherwise.
BlipHead parse_blip_head(const std::string& text);

// Hugging Face BlipConfig (configuration_blip.py): the defaults are what a config.json that
// omits a value means (BlipTextConfig: vocab 30524, 8 heads, eps 1e-12; BlipVisionConfig: 384
// pixels, eps 1e-5).
struct BlipConfig {
  // text_config
  int text_hidden = 768, text_layers = 12, text_heads = 8, text_mlp = 3072;
  int vocab_size = 30524, max_text_len = 512, pad_id = 0;
  int encoder_hidden = 768;  // cross-attention K/V input width: always the vision width (HF)
  double text_eps = 1e-12;
  // vision_config
  int vision_hidden = 768, vision_layers = 12, vision_heads = 12, vision_mlp = 3072;
  int image_size = 384, patch = 16;
  double vision_eps = 1e-5;
  // BlipConfig
  int embed_dim = 256;  // image_text_hidden_size: vision_proj / text_proj output
  // The image processor (preprocessor_config.json, BlipImageProcessor): convert("RGB"), resize
  // straight to resize_h x resize_w with PIL bicubic, x * rescale_factor, (x - mean) / std.
  bool do_resize = true, do_rescale = true, do_normalize = true;
  int resize_h = 384, resize_w = 384;
  double rescale_factor = 1.0 / 255.0;
  std::array<float, 3> mean = {0.48145466f, 0.4578275f, 0.40821073f};
  std::array<float, 3> std = {0.26862954f, 0.26130258f, 0.27577711f};

  int grid() const { return image_size / patch; }
  int image_tokens() const { return 1 + grid() * grid(); }
  nlohmann::json to_json() const;
  nlohmann::json preprocess_json() const;
};

// True when the folder's config.json model_type is "blip" (checkpoint_model_type).
bool is_blip_checkpoint(const std::filesystem::path& checkpoint);
// config.json (+ preprocessor_config.json when present); InputError naming file and field for
// what is not supported or out of range.
BlipConfig load_blip_config(const std::filesystem::path& dir);
// Salesforce/blip-itm-base-coco's shapes (ViT-B/16 at 384, BERT-base text), for benchmarks.
BlipConfig blip_itm_base_config();

// [3, resize_h, resize_w] float32, normalised (slow BlipImageProcessor, PIL-exact).
std::vector<float> blip_preprocess(const DecodedImage& image, const BlipConfig& config);

// What one image contributes to every pair, computed once.
struct BlipImageEmbeds {
  int tokens = 0;              // 1 + patches
  std::vector<float> states;   // [tokens, vision_hidden]: image_embeds (post_layernorm)
  std::vector<float> feature;  // [embed_dim]: normalize(vision_proj(states[0])) (ITC)
  std::vector<std::vector<float>> cross_kv;  // per text layer [tokens, 2 * text_hidden]: key |
                                             // value of its cross-attention (ITM; empty for ITC)
};

class BlipModel {
 public:
  // config.json, weights (model.safetensors, a sharded model.safetensors.index.json, or
  // pytorch_model.bin; F32/F16/BF16), every tensor's presence and shape checked (InputError
  // naming the tensor). text_encoder.embeddings.position_ids is ignored.
  static BlipModel load(const std::filesystem::path& dir);
  // Seeded random weights of the given shapes (benchmarks).
  static BlipModel random(const BlipConfig& config, std::uint64_t seed);
  BlipModel(BlipModel&&) noexcept;
  BlipModel& operator=(BlipModel&&) noexcept;
  ~BlipModel();

  const BlipConfig& config() const;
  const std::string& weights_id() const;

  // pixels: [3, image_size, image_size] (blip_preprocess). `with_cross`: also the
  // cross-attention keys / values of every text layer (what ITM needs).
  BlipImageEmbeds encode_image(const float* pixels, bool with_cross = true) const;
  // encode_image of each of several images. With at least as many images as compute threads,
  // each thread runs whole images (every product on itself: no joins inside a layer, about 20%
  // faster on 2 cores at blip-itm-base's shapes); otherwise one by one. The same bits either way.
  std::vector<BlipImageEmbeds> encode_images(const std::vector<const float*>& pixels,
                                             bool with_cross = true) const;
  // ITM logits [n, 2] for pairs (*ids[p], *images[p]) (images encoded with_cross). Pairs that
  // share an image should be adjacent (their cross-attention keys are packed once); the result
  // of a pair never depends on the others. ids: [CLS] ... [SEP], 1 to max_text_len long.
  std::vector<float> itm_logits(const std::vector<const std::vector<int>*>& ids,
                                const std::vector<const BlipImageEmbeds*>& images) const;
  // ITC text features [n, embed_dim]: normalize(text_proj(h[CLS])) without cross-attention.
  std::vector<float> text_features(const std::vector<const std::vector<int>*>& ids) const;

 private:
  BlipModel();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// P(match) = softmax(logits)[1] of one pair's two ITM logits (float32, as HF).
double blip_itm_probability(const float* logits);
// The ITC score: the dot product of two normalised features, in double, in index order.
double blip_cosine(const float* a, const float* b, int n);

// ---- the registry's face ----
// The "blip" family: PairScores only; heads itm (default: the published Winoground BLIP scores
// use it) and itc. options.head selects; options.preprocess / options.tokenizer are refused.
std::unique_ptr<VlModel> open_blip(const std::filesystem::path& checkpoint,
                                   const ModelOptions& options);

}  // namespace winokit
