// SmolVLM / Idefics3 (Hugging Face Idefics3ForConditionalGeneration, SmolVLMForConditional-
// Generation) in-process, scored by VQAScore (Lin et al., 2024; linzhiqiu/t2v_metrics):
// s(caption, image) = P(answer | image, question) with the question
// `Does this figure show "{caption}"? Please answer yes or no.` and the answer `Yes`: the
// next-token softmax over the whole vocabulary after the assistant prefix, at the answer's first
// token.
//
// The pieces, as transformers' code does them (tests/fixtures/make_smolvlm_golden.py transcribes
// them in PyTorch):
// - the image processor (preprocessor_config.json): convert("RGB"), the longest edge resized to
//   size.longest_edge (PIL LANCZOS, even short edge), then with image splitting both edges up to
//   multiples of max_image_size.longest_edge, cut into rows x cols tiles plus the whole image
//   resized to one tile (the "global" image); without splitting the image squared to one tile;
//   x * rescale_factor, (x - mean) / std;
// - the prompt (the checkpoint's chat template, user turn = image then question, then the
//   generation prompt): `<|im_start|>User:` + the image's tokens + question +
//   `<end_of_utterance>\nAssistant:`, the image's tokens being, per tile,
//   `<fake_token_around_image><row_r_col_c>` + image_seq_len x `<image>` (a newline after each
//   row), then `\n<fake_token_around_image><global-img>` + image_seq_len x `<image>` +
//   `<fake_token_around_image>` (unsplit: only the global part, without the leading newline);
// - the vision tower (SigLIP layers, no pooling head), the connector (pixel shuffle by
//   scale_factor, then modality_projection), the features replacing the `<image>` tokens' input
//   embeddings, and the Llama text model (llama_model.hpp).
// The image's part of the prompt is run once and kept as a KV cache; each caption's question
// continues from it. Scores do not depend on the batch, the pairs beside them or the threads.
//
//   winokit::SmolVlmModel m = winokit::SmolVlmModel::load("SmolVLM-256M-Instruct/");
//   winokit::KvCache c = m.image_prefix(winokit::decode_image(bytes));
//   std::vector<double> p = m.answer_probabilities(c, {"a dog", "a cat"});
#pragma once

#include <array>
#include <filesystem>
#include <memory>
#include <string>
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

struct SmolVlmPreprocessConfig {
  bool do_resize = true, do_image_splitting = true, do_rescale = true, do_normalize = true;
  int longest_edge = 4 * 364;  // size.longest_edge
  int max_image_size = 364;    // max_image_size.longest_edge: one tile's edge
  int upper_bound = 4096;      // the processor's cap after the resize (Idefics3: 1820)
  int resample = 1;            // PIL LANCZOS (the only one supported)
  double rescale_factor = 1.0 / 255.0;
  std::array<float, 3> mean = {0.5f, 0.5f, 0.5f}, std = {0.5f, 0.5f, 0.5f};
  nlohmann::json to_json() const;
};

struct SmolVlmConfig {
  std::string model_type = "idefics3";  // idefics3 or smolvlm
  LlamaConfig text;
  int vision_hidden = 1152, vision_mlp = 3072, vision_layers = 12, vision_heads = 16;
  int image_size = 224, patch = 32;
  double vision_eps = 1e-6;
  std::string vision_act = "gelu_pytorch_tanh";
  int scale_factor = 2;
  int image_token_id = 128257;
  int image_seq_len = 0;  // processor_config.json, else (image_size / patch)^2 / scale_factor^2
  SmolVlmPreprocessConfig preprocess;
  nlohmann::json to_json() const;
};

// config.json, preprocessor_config.json and processor_config.json of a folder.
SmolVlmConfig load_smolvlm_config(const std::filesystem::path& dir);

// An image as the processor hands it to the vision tower: `count` tiles of 3 x size x size
// floats (the split tiles row by row, then the global image), and the split's rows and columns
// (0, 0: not split).
struct SmolVlmTiles {
  int rows = 0, cols = 0, count = 0, size = 0;
  std::vector<float> pixels;
};
SmolVlmTiles smolvlm_preprocess(const DecodedImage& image, const SmolVlmPreprocessConfig& config);
// PIL's Image.resize(size, LANCZOS) of an RGB image (8-bit fixed-point coefficients, as
// Pillow's Resample.c).
DecodedImage pil_resize_lanczos(const DecodedImage& rgb, int width, int height);
// The image's part of the prompt (see above).
std::string smolvlm_image_prompt(int rows, int cols, int image_seq_len);

class SmolVlmModel {
 public:
  static SmolVlmModel load(const std::filesystem::path& dir, const VqaScoreOptions& options = {});
  SmolVlmModel(SmolVlmModel&&) noexcept;
  SmolVlmModel& operator=(SmolVlmModel&&) noexcept;
  ~SmolVlmModel();

  const SmolVlmConfig& config() const;
  const HfTokenizer& tokenizer() const;
  const LlamaModel& text_model() const;
  const std::string& weights_id() const;
  const VqaScoreOptions& options() const;
  // The connector's output for the tiles: [tiles * image_seq_len, text hidden].
  std::vector<float> image_features(const SmolVlmTiles& tiles) const;
  // The prompt's ids before the question (`<|im_start|>User:` and the image's tokens).
  std::vector<int> prefix_ids(const SmolVlmTiles& tiles) const;
  // The ids after the image: question + `<end_of_utterance>\nAssistant:`.
  std::vector<int> question_ids(const std::string& caption) const;
  // The image's prefix run through the text model (KV cache), from the image's tiles.
  KvCache image_prefix(const SmolVlmTiles& tiles) const;
  KvCache image_prefix(const DecodedImage& image) const;
  // The same from the tiles' image_features, computed beforehand (the phases timed apart:
  // bench/bench_smolvlm.cpp, the family's engine_bench); the same bits.
  KvCache image_prefix(const SmolVlmTiles& tiles, const std::vector<float>& features) const;
  // P(answer's first token | prefix, question(caption)) for each caption, batched.
  std::vector<double> answer_probabilities(const KvCache& prefix,
                                           const std::vector<std::string>& captions) const;
  int answer_id() const;

 private:
  SmolVlmModel();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

bool is_smolvlm_checkpoint(const std::filesystem::path& checkpoint);
// ModelOptions::preprocess: "" (as the checkpoint says), "split" or "no-split".
std::unique_ptr<VlModel> open_smolvlm(const std::filesystem::path& checkpoint,
                                      const ModelOptions& options);

}  // namespace winokit
