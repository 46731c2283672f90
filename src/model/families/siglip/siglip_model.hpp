// SigLIP in-process (Hugging Face SiglipModel): the configuration completed with SigLIP's
// defaults, the image processor, both towers in float32 on winokit's kernels (gemm.hpp), the
// sigmoid-loss score s = exp(logit_scale) * cos(text, image) + logit_bias, and the VlModel /
// DualEncoder adapter the registry opens (tests/fixtures/README_siglip_blip.md lists the
// behaviour copied).
//
//   winokit::SiglipModel m = winokit::SiglipModel::load("siglip-base-patch16-224/");
//   winokit::SiglipTokenizer tok =
//   winokit::SiglipTokenizer::from_directory("siglip-base-patch16-224/"); std::vector<float> px =
//   winokit::siglip_preprocess(image, m.config().preprocess); std::vector<float> img =
//   m.encode_images(px.data(), 1);           // [1, embed_dim] std::vector<float> txt =
//   m.encode_texts({tok.encode("a dog")}, false); double s = m.score(txt.data(), img.data()); // a
//   logit; sigmoid = P
//
//   std::unique_ptr<winokit::VlModel> v = winokit::open_siglip("siglip-base-patch16-224/", {});
//
// Vision: Conv2d patches (with bias, no class token) + position embeddings, pre-LN layers,
// post_layernorm, the multi-head attention pooling head (a learned probe, then x + MLP(LN(x))).
// Text: token + position embeddings (positions 0..63), pre-LN layers without a causal mask,
// final LayerNorm, the state at the LAST position (a pad: ids are always padded to 64), the head
// Linear (hidden -> projection_size). The padding mask is used only when the tokenizer's
// model_input_names lists attention_mask (google's checkpoints: not).
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/text/sentencepiece_tokenizer.hpp"
#include "winokit/io/image_decode.hpp"
#include "winokit/model/vl_model.hpp"

#include "model/runtime/checkpoint.hpp"
#include "winokit/core/layer.hpp"
WINOKIT_LAYER(model);

namespace winokit {

// One tower's transformer ("text_config" / "vision_config"), SigLIP's defaults (not CLIP's).
struct SiglipTowerConfig {
  int hidden = 768, mlp = 3072, layers = 12, heads = 12;
  double eps = 1e-6;
  std::string act = "gelu_pytorch_tanh";  // gelu_pytorch_tanh (= gelu_new), gelu, quick_gelu
};

// SiglipImageProcessor's fields, with its defaults (224 x 224, PIL bicubic (3; bilinear is 2),
// x / 255, mean and std 0.5).
struct SiglipPreprocessConfig : detail::ImageProcessorFields {
  nlohmann::json to_json() const;
};

struct SiglipConfig {
  SiglipTowerConfig text, vision;
  int vocab_size = 32000, max_positions = 64;
  int projection_size = 768;  // text head output; absent: the text hidden size
  int image_size = 224, patch = 16, channels = 3;
  SiglipPreprocessConfig preprocess;
  int patches() const { return (image_size / patch) * (image_size / patch); }
  int embed_dim() const { return vision.hidden; }
  nlohmann::json to_json() const;
};

// config.json's object (only the non-default values, as google's files) completed with SigLIP's
// defaults; `preprocessor` is preprocessor_config.json's object (or empty: the defaults).
// `where` names the file in errors.
SiglipConfig siglip_config_from_json(const nlohmann::json& config,
                                     const nlohmann::json& preprocessor,
                                     const std::string& where = "config.json");
// A folder's config.json + preprocessor_config.json.
SiglipConfig load_siglip_config(const std::filesystem::path& dir);
// google/siglip-base-patch16-224's shapes (for benchmarks with random weights).
SiglipConfig siglip_base_patch16_224_config();

// SiglipImageProcessor (slow, PIL path): convert("RGB") (alpha dropped), resize straight to
// size with PIL's bicubic or bilinear filter on uint8, x * rescale_factor in double rounded to
// float, (x - mean) / std in float. Returns [3, height, width].
std::vector<float> siglip_preprocess(const DecodedImage& image, const SiglipPreprocessConfig& c);
// PIL's Image.resize(size, resample) of an RGB image (resample 2 bilinear or 3 bicubic).
DecodedImage siglip_pil_resize(const DecodedImage& rgb, int width, int height, int resample);

class SiglipModel {
 public:
  // config.json, preprocessor_config.json and the weights (model.safetensors, its sharded index,
  // or pytorch_model.bin; F32 / F16 / BF16). Every tensor's presence and shape is checked. With
  // `hash_index_dir`, the weights' SHA-256 is remembered there.
  static SiglipModel load(const std::filesystem::path& dir,
                          const std::filesystem::path& hash_index_dir = {});
  static SiglipModel random(const SiglipConfig& config, std::uint64_t seed);
  SiglipModel(SiglipModel&&) noexcept;
  SiglipModel& operator=(SiglipModel&&) noexcept;
  ~SiglipModel();

  const SiglipConfig& config() const;
  const std::string& weights_id() const;
  // What computes the embeddings (part of the cache key): the kernels' version.
  std::string compute_signature() const;
  float logit_scale() const;
  float logit_bias() const;

  // pixels: [count, 3, image_size, image_size] -> the pooled features [count, embed_dim]
  // (get_image_features, not normalised).
  std::vector<float> encode_images(const float* pixels, int count) const;
  // Each sequence: exactly max_positions ids -> the text features [n, embed_dim]
  // (get_text_features). `use_mask`: the padding mask (mask 0 keys are not attended).
  std::vector<float> encode_texts(const std::vector<SiglipTokens>& tokens, bool use_mask) const;
  // exp(logit_scale) * cos(text, image) + logit_bias, from two features, in double.
  double score(const float* text, const float* image) const;

 private:
  SiglipModel();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// ---- the registry's hooks ----
// A folder whose config.json model_type is "siglip".
bool is_siglip_checkpoint(const std::filesystem::path& checkpoint);
// The VlModel (PairScores + Embeddings) of a SigLIP checkpoint folder. options.preprocess,
// options.tokenizer and options.head are refused (UsageError naming the flag).
std::unique_ptr<VlModel> open_siglip(const std::filesystem::path& checkpoint,
                                     const ModelOptions& options);

}  // namespace winokit
