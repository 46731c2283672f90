// The language-model interface: a causal language model that scores token sequences, whatever
// its family (GPT-2; Llama, Qwen2 and SmolLM on the Llama decoder). `winokit perplexity` and
// `eval --lm` reach every family through it; the LM registry (src/model/lm/language_model.cpp)
// picks the family from config.json's model_type.
//
//   auto lm = winokit::load_language_model("gpt2/");
//   std::vector<winokit::SequenceScore> s = lm->score({lm->encode("a dog on a sofa")});
//   s[0].perplexity;   // exp(mean NLL of tokens 2..n given the tokens before each)
//
// Every family computes a token's log-probability the same way (the kernels' log-softmax: the
// max subtracted, the kernels' exp, the sum in float64 in a fixed order) from logits whose bits do
// not depend on the batch or the threads, so neither do the scores.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(model);

namespace winokit {

struct SequenceScore {
  std::vector<double> log_probs;  // log P(token t | tokens < t), for each predicted token
  double mean_nll = 0;            // -mean(log_probs)
  double perplexity = 0;          // exp(mean_nll)
};

struct LmOptions {
  int batch_tokens = 4096;  // tokens per forward batch (memory bound); results do not depend on it
  // Called after each forward batch with the sequences scored so far and the total.
  std::function<void(std::size_t, std::size_t)> on_progress;
};

class LanguageModel {
 public:
  virtual ~LanguageModel() = default;
  // What messages call the model: "GPT-2", "Llama", "Qwen2".
  virtual std::string display_name() const = 0;
  // SHA-256 of the weight files (or "random:SEED").
  virtual const std::string& weights_id() const = 0;
  // The most tokens a sequence may have (max_position_embeddings, n_positions).
  virtual int context() const = 0;
  virtual int vocab_size() const = 0;
  // The text's token ids, without special tokens.
  virtual std::vector<int> encode(const std::string& text) const = 0;
  // The start token `--bos` prepends (GPT-2: <|endoftext|>; the Llama decoder: config.json's
  // bos_token_id), or none; and its text ("<|endoftext|>", "<s>").
  virtual std::optional<int> start_token() const = 0;
  virtual std::string start_token_text() const = 0;
  // The transformers class whose (ids, labels=ids).loss is the mean NLL computed here:
  // "GPT2LMHeadModel", "LlamaForCausalLM", "Qwen2ForCausalLM".
  virtual std::string reference_class() const = 0;
  // Scores each sequence of token ids (at least 2 tokens, at most context()): the log-probs of
  // tokens 2..n. Throws UsageError naming the sequence for a bad length or id.
  virtual std::vector<SequenceScore> score(const std::vector<std::vector<int>>& sequences,
                                           const LmOptions& options = {}) const = 0;
};

// The model folder's family from config.json's model_type (gpt2; llama, qwen2), its weights and
// its tokenizer: GPT-2's vocab.json + merges.txt (or encoder.json + vocab.bpe), the Llama
// decoder's tokenizer.json; `tokenizer` is another folder (or tokenizer.json file) to read it
// from (default: the model folder). InputError naming the file for an unknown model_type.
std::unique_ptr<LanguageModel> load_language_model(const std::filesystem::path& model,
                                                   const std::filesystem::path& tokenizer = {});
// The model_type values load_language_model reads.
std::vector<std::string> language_model_types();

// The definition stated in every perplexity output, for this model and start-token choice.
std::string perplexity_definition(const LanguageModel& model, bool bos);

}  // namespace winokit
