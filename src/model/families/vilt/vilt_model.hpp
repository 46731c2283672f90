// ViLT in-process (Hugging Face ViltForImageAndTextRetrieval, or ViltModel with the pretraining
// ITM head of ViLT's original repository): the BERT tokenizer, ViLT's image processor, the
// single-stream pre-LN transformer over [text; image] in float32 on winokit's kernels (gemm.hpp),
// the ranking head (a logit) or the ITM head (the softmax probability of "match"). The pair scorer
// and the word-patch alignment maps are in vilt_scorer.hpp.
//
//   winokit::ViltModel m = winokit::ViltModel::load("vilt-b32-finetuned-coco/");
//   winokit::ViltImage im = winokit::vilt_preprocess(winokit::decode_image(bytes), m.config());
//   winokit::ViltImageEmbeds e = m.embed_image(im);                     // once per image
//   std::vector<double> s = m.score({tokenizer.encode("a dog", 40)}, {&e}).scores;
//
// Patches: ViLT's processor keeps every patch unless the config's max_image_length > 0, in which
// case transformers samples that many patches at random; winokit always keeps every patch, in
// row-major order (the transformer is order-invariant over patches), and says so in describe().
// Images are processed one at a time at their own size, so no padding is ever needed and the
// pixel mask is all ones; vilt_pad() reproduces the processor's batch padding and mask.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/text/wordpiece.hpp"
#include "winokit/io/image_decode.hpp"
#include "winokit/io/image_store.hpp"
#include "winokit/model/preprocess.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(model);

namespace winokit {

enum class ViltHead { Rank, Itm };
const char* to_string(ViltHead head);

struct ViltConfig {
  int hidden = 768, layers = 12, heads = 12, mlp = 3072;
  double eps = 1e-12;
  int vocab_size = 30522, max_text_len = 40, type_vocab = 2, modality_types = 2;
  int image_size = 384, patch = 32, channels = 3;
  int max_image_length = -1;  // as configured; winokit keeps every patch whatever it says
  bool qkv_bias = true;
  ViltHead head = ViltHead::Rank;
  // The image processor (preprocessor_config.json).
  int shortest_edge = 384, size_divisor = 32;
  std::array<float, 3> mean = {0.5f, 0.5f, 0.5f}, std = {0.5f, 0.5f, 0.5f};
  int pos_grid() const { return image_size / patch; }
  nlohmann::json to_json() const;
};

// True when dir/config.json says "model_type": "vilt".
bool is_vilt_checkpoint(const std::filesystem::path& dir);
// config.json (+ preprocessor_config.json when present). The head is found from the weights
// (rank_output.* or itm_score.fc.*) by ViltModel::load.
ViltConfig load_vilt_config(const std::filesystem::path& dir);
// ViLT-B/32's shapes (dandelin/vilt-b32-*), for benchmarks with random weights.
ViltConfig vilt_b32_config();

// ---- image processor ----
// get_resize_output_image_size: shorter side to `shorter`, the longer side capped at
// int(1333 / 800 * shorter), rounded half up, then both down to multiples of size_divisor.
std::pair<int, int> vilt_resize_size(int height, int width, int shorter, int size_divisor);

struct ViltImage {
  int height = 0, width = 0;
  std::vector<float> pixels;  // [3, height, width], normalised
};
// convert("RGB"), PIL bicubic resize, x * (1/255) in double rounded to float, (x - mean) / std.
ViltImage vilt_preprocess(const DecodedImage& image, const ViltConfig& config);

struct ViltPadded {
  int count = 0, height = 0, width = 0;
  std::vector<float> pixels;       // [count, 3, height, width], zero padded bottom / right
  std::vector<std::uint8_t> mask;  // [count, height, width], 1 on the image's own pixels
};
ViltPadded vilt_pad(const std::vector<ViltImage>& images);

// ---- model ----
// The image side of a pair, computed once per image: [class token; patches] with the
// interpolated position embeddings and the image token type added.
struct ViltImageEmbeds {
  int grid_h = 0, grid_w = 0;  // patches per column / row
  std::vector<float> tokens;   // [1 + grid_h * grid_w, hidden], patches row-major
  int count() const { return 1 + grid_h * grid_w; }
};

struct ViltOutput {
  std::vector<double> scores;  // per pair: the rank logit, or P(match) of the ITM head
  std::vector<float> logits;   // per pair: 1 (rank) or 2 (ITM) logits
  // When requested: per pair, the final (layer-normed) states [text_len + image tokens, hidden].
  std::vector<std::vector<float>> states;
};

class ViltModel {
 public:
  // Loads config, weights (model.safetensors, sharded index, or pytorch_model.bin) and checks
  // every tensor's presence and shape; the head is rank_output.* or itm_score.fc.*.
  static ViltModel load(const std::filesystem::path& dir);
  static ViltModel random(const ViltConfig& config, std::uint64_t seed);
  ViltModel(ViltModel&&) noexcept;
  ViltModel& operator=(ViltModel&&) noexcept;
  ~ViltModel();

  const ViltConfig& config() const;
  const std::string& weights_id() const;

  ViltImageEmbeds embed_image(const ViltImage& image) const;
  // Pairs (ids[p], *images[p]); ids are [CLS] ... [SEP], at most max_text_len long.
  ViltOutput score(const std::vector<std::vector<int>>& ids,
                   const std::vector<const ViltImageEmbeds*>& images,
                   bool keep_states = false) const;

 private:
  ViltModel();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace winokit
