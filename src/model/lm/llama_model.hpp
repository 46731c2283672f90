// A decoder-only language model of the Llama / Qwen2 family (Hugging Face LlamaForCausalLM,
// Qwen2ForCausalLM; the text model of Idefics3 / SmolVLM) on winokit's kernels: token
// embeddings, pre-RMSNorm layers with rotary position embeddings (rotate_half layout, base
// rope_theta), grouped-query causal attention (num_key_value_heads), the SwiGLU MLP
// down(silu(gate(x)) * up(x)), a final RMSNorm and the lm_head (tied to the embeddings or not).
// Qwen2's q/k/v biases and Llama's attention_bias / mlp_bias are read when the config says so.
// Weights F32, F16 or BF16 (computed in float32), one model.safetensors or shards through
// model.safetensors.index.json.
//
//   winokit::LlamaModel lm = winokit::LlamaModel::load("SmolLM2-135M/");
//   std::vector<float> x = lm.embed({1, 2, 3});                 // [3, hidden]
//   winokit::KvCache cache;
//   lm.forward({{x.data(), 3, nullptr, &cache}}, winokit::LogitRows::None);   // the prefix
//   std::vector<float> y = lm.embed({4});
//   std::vector<float> logits = lm.forward({{y.data(), 1, &cache, nullptr}}); // [1, vocab]
//
// Every sequence of a batch attends only to its own past (a KvCache) and its own rows: a row's
// bits do not depend on the batch, its composition, the thread count or the CPU, and a
// continuation over a cache gives the bits of one forward over prefix + continuation
// (CONTRIBUTING, "Results that do not depend on the CPU").
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(model);

namespace winokit {

class SafeTensors;

struct LlamaConfig {
  std::string model_type = "llama";  // llama or qwen2
  int vocab_size = 32000;
  int hidden = 4096;         // hidden_size
  int intermediate = 11008;  // intermediate_size
  int layers = 32;           // num_hidden_layers
  int heads = 32;            // num_attention_heads
  int kv_heads = 32;         // num_key_value_heads (absent: num_attention_heads)
  int head_dim = 128;        // head_dim (absent: hidden_size / num_attention_heads)
  int max_positions = 2048;  // max_position_embeddings
  double rms_eps = 1e-6;     // rms_norm_eps
  double rope_theta = 10000.0;
  bool tie_embeddings = false;  // tie_word_embeddings
  bool qkv_bias = false;        // qwen2: always; llama: attention_bias
  bool o_bias = false;          // llama: attention_bias
  bool mlp_bias = false;        // llama: mlp_bias
  nlohmann::json to_json() const;
};

// A text config object (config.json, or Idefics3's "text_config") completed with the family's
// defaults. Throws InputError naming `where` and the field for bad or unsupported values
// (rope_scaling other than none/"default", hidden_act other than silu, sliding windows).
LlamaConfig llama_config_from_json(const nlohmann::json& config, const std::string& where);

// The keys and values of a sequence's positions so far: per layer [length, kv_heads * head_dim].
struct KvCache {
  int length = 0;
  std::vector<std::vector<float>> k, v;
  std::size_t bytes() const;
};

// One sequence of a forward: `length` rows of input embeddings (embed(), or embeddings with
// image features spliced in), after the positions `past` holds (none: from position 0). `store`,
// when given, receives past + these rows (it may be the same object as `past`).
struct LlamaSequence {
  const float* embeds = nullptr;  // [length, hidden]
  int length = 0;
  const KvCache* past = nullptr;
  KvCache* store = nullptr;
};

enum class LogitRows { None, Last, All };

class LlamaModel {
 public:
  // config.json + model.safetensors (or model.safetensors.index.json) in `dir`; tensors under
  // "model." and "lm_head.weight".
  static LlamaModel load(const std::filesystem::path& dir);
  // From opened weights: `prefix` is where the text model's tensors sit ("model." for
  // LlamaForCausalLM, "model.text_model." for Idefics3), `head` the lm_head's name (unused when
  // tied), `weights_id` what weights_id() returns.
  static LlamaModel load(const SafeTensors& weights, const LlamaConfig& config,
                         const std::string& prefix, const std::string& head,
                         const std::string& weights_id);
  LlamaModel(LlamaModel&&) noexcept;
  LlamaModel& operator=(LlamaModel&&) noexcept;
  ~LlamaModel();

  const LlamaConfig& config() const;
  // SHA-256 of the weight files.
  const std::string& weights_id() const;
  // The input embeddings of `ids`: [ids.size(), hidden]. UsageError for an id outside the
  // vocabulary.
  std::vector<float> embed(const std::vector<int>& ids) const;
  // Runs the sequences; returns the logits of the rows asked for, sequence after sequence
  // (Last: [sequences, vocab]; All: [total rows, vocab]). UsageError when a sequence would pass
  // max_position_embeddings.
  std::vector<float> forward(const std::vector<LlamaSequence>& sequences,
                             LogitRows rows = LogitRows::Last) const;

 private:
  LlamaModel();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace winokit
