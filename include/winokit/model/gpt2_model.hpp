// GPT-2 language model (Radford et al. 2019) on the CLIP text tower's building blocks, for caption
// perplexity (the Winoground paper's Table 6, left): pre-LayerNorm blocks, causal attention, GELU
// with the tanh approximation (`gelu_new`), a final LayerNorm and the output head tied to the token
// embedding. Reads the Hugging Face layout: config.json and model.safetensors (or
// pytorch_model.bin), keys with or without the `transformer.` prefix, Conv1D weights stored
// [in, out], the attention mask buffers ignored, F32/F16/BF16; any size (gpt2 to gpt2-xl,
// distilgpt2).
//
// Commands reach it through the language-model interface (language_model.hpp); directly:
//
//   winokit::Gpt2Model lm = winokit::Gpt2Model::load("gpt2/");
//   winokit::Gpt2Tokenizer tok = winokit::Gpt2Tokenizer::from_directory("gpt2/");
//   std::vector<winokit::SequenceScore> s = lm.score({tok.encode("a dog on a sofa")});
//   s[0].perplexity;   // exp(mean NLL of tokens 2..n given the previous ones)
//
// Perplexity is defined as Hugging Face's GPT2LMHeadModel(ids, labels=ids) computes it: the mean
// negative log-likelihood of every token after the first, given the tokens before it, then exp.
// With `bos`, <|endoftext|> is prepended so that every token of the text is predicted (the
// `evaluate` library's perplexity metric). Sums are accumulated in float64.
//
// Batches pack the sequences back to back (no padding inside a batch); every matrix product runs
// on blocks of a fixed number of rows (the last block padded with zeros) and attention is
// computed per sequence in a fixed order, so a sequence's result does not depend on the batch it
// is in, on the other sequences or on the thread count.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "winokit/core/layer.hpp"
#include "winokit/model/language_model.hpp"
WINOKIT_LAYER(model);

namespace winokit {

enum class Gpt2Activation { GeluTanh, GeluErf };

struct Gpt2Config {
  int layers = 12;
  int heads = 12;
  int width = 768;       // n_embd
  int inner = 3072;      // n_inner (4 * n_embd when null)
  int positions = 1024;  // n_positions
  int vocab_size = 50257;
  double eps = 1e-5;  // layer_norm_epsilon
  Gpt2Activation act = Gpt2Activation::GeluTanh;
  double parameters() const;  // weights, counting the tied head once
};

// Reads `dir/config.json` (Hugging Face GPT2Config); sizes must be positive integers in range.
Gpt2Config load_gpt2_config(const std::filesystem::path& dir);

// The options of score() are every language model's (language_model.hpp).
using Gpt2Options = LmOptions;

class Gpt2Model {
 public:
  static Gpt2Model load(const std::filesystem::path& dir);
  // Seeded random weights of the given shape (benchmarks, tests).
  static Gpt2Model random(const Gpt2Config& config, std::uint64_t seed);
  Gpt2Model(Gpt2Model&&) noexcept;
  Gpt2Model& operator=(Gpt2Model&&) noexcept;
  ~Gpt2Model();

  const Gpt2Config& config() const;
  // SHA-256 of the weight files, or "random:SEED".
  const std::string& weights_id() const;
  // Scores each sequence of token ids (at least 2 tokens, at most n_positions): the log-probs of
  // tokens 2..n. Throws UsageError naming the sequence for a bad length or id.
  std::vector<SequenceScore> score(const std::vector<std::vector<int>>& sequences,
                                   const Gpt2Options& options = {}) const;
  // Seconds spent in matrix products (GEMMs) since the model was made (for benchmarks).
  double gemm_seconds() const;

 private:
  Gpt2Model();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace winokit
