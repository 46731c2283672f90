// The pieces the generative VQAScore families (smolvlm_model.cpp, llava_onevision_model.cpp)
// share, implemented in vqascore.cpp: their config readers, the image processors' last steps,
// the image features spliced into the prompt's embeddings, and the answer's probability (their
// SigLIP vision tower is layers/siglip_vision.hpp). Internal to
// src/model.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/kernels/gemm.hpp"
#include "model/layers/siglip_vision.hpp"
#include "model/layers/transformer.hpp"
#include "model/lm/llama_model.hpp"
#include "model/runtime/checkpoint.hpp"
#include "model/text/hf_tokenizer.hpp"
#include "winokit/io/image_decode.hpp"
#include "winokit/io/safetensors.hpp"

namespace winokit::detail {

constexpr int kMaxImageEdge = 1 << 14;

// A JSON object file; absent and not `required`: an empty object. InputError naming the file
// for malformed JSON or a non-object.
nlohmann::json read_json_object(const std::filesystem::path& file, bool required);
// j[name] as an integer in [1, max_value]; absent or null: `fallback`.
int read_positive_int(const nlohmann::json& j, const char* name, int fallback,
                      const std::string& where, int max_value = kMaxImageEdge * 64);
// j[key] as 3 floats into `dst` (absent or null: unchanged).
void read_three_floats(const nlohmann::json& j, const char* key, const std::string& where,
                       std::array<float, 3>& dst);

// The rectangle [x0, x1) x [y0, y1) of an RGB image.
DecodedImage crop_rgb(const DecodedImage& im, int x0, int y0, int x1, int y1);

// transformers' rescale (float64 product, stored as float32) and normalize (float32) of an RGB
// tile, appended channel-first to `out`.
struct PixelNormalization {
  bool do_rescale = true, do_normalize = true;
  double rescale_factor = 1.0 / 255.0;
  std::array<float, 3> mean = {0.5f, 0.5f, 0.5f}, std = {0.5f, 0.5f, 0.5f};
};
void append_normalized(const DecodedImage& tile, const PixelNormalization& p,
                       std::vector<float>& out);

// A checkpoint's tensors for the shared loaders, each released once read.
class SafeTensorsSource final : public TensorSource {
 public:
  explicit SafeTensorsSource(const SafeTensors& st) : st_(st) {}
  std::vector<float> get(const std::string& name, const std::vector<std::int64_t>& shape) override;
  bool has(const std::string& name) const override { return st_.find(name) != nullptr; }

 private:
  const SafeTensors& st_;
};

// The checkpoint's chat template (Jinja source): chat_template.jinja, else the "chat_template"
// string of chat_template.json, else of tokenizer_config.json; nullopt when there is none.
struct ChatTemplateText {
  std::filesystem::path file;
  std::string text;
};
std::optional<ChatTemplateText> read_chat_template(const std::filesystem::path& dir);

// tokenizer.json must hold each of `tokens` as a token (InputError naming the first missing), and
// its <image> must be config.json's `image_field`.
void check_added_tokens(const HfTokenizer& tok, const std::filesystem::path& dir,
                        const std::vector<std::string>& tokens, int image_token_id,
                        const char* image_field);

// The answer's first token id; UsageError when the answer encodes to nothing.
int answer_token(const HfTokenizer& tok, const std::string& answer);
// Opens `dir`'s weights (model.safetensors, else model.safetensors.index.json; IoError naming
// `family` when neither is there), hands them and their content hash to `load`, then checks that
// tokenizer.json's vocabulary fits the text model's vocab_size.
void load_checkpoint_weights(
    const std::filesystem::path& dir, const std::string& family, const HfTokenizer& tok,
    int vocab_size, const std::function<void(const SafeTensors&, const std::string&)>& load);

// The prompt `ids` embedded, the `features` ([image tokens, hidden] in order) in place of the
// rows whose id is `image_token_id`, run through the text model into a KV cache. InputError
// (naming `tokenizer`) when the counts differ.
KvCache run_image_prefix(const LlamaModel& lm, const std::vector<int>& ids, int image_token_id,
                         const std::vector<float>& features, const std::string& tokenizer);

// The last logits after prefix + each continuation's ids, in one batch: [continuations, vocab].
std::vector<float> continuation_logits(const LlamaModel& lm, const KvCache& prefix,
                                       const std::vector<std::vector<int>>& ids);
// P(answer | prefix, continuation) for each continuation's ids, in one batch.
std::vector<double> continuation_probabilities(const LlamaModel& lm, const KvCache& prefix,
                                               const std::vector<std::vector<int>>& ids,
                                               int answer);

}  // namespace winokit::detail
