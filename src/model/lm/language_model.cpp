// The LM registry: config.json's model_type -> the family's loader.
#include "winokit/model/language_model.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "model/lm/lm_runtime.hpp"
#include "model/runtime/checkpoint.hpp"
#include "winokit/core/error.hpp"

namespace winokit {

namespace {

struct LmFamily {
  const char* model_type;
  std::unique_ptr<LanguageModel> (*load)(const std::filesystem::path&,
                                         const std::filesystem::path&);
};

constexpr LmFamily kLmFamilies[] = {
    {"gpt2", detail::load_gpt2_language_model},
    {"llama", detail::load_llama_language_model},
    {"qwen2", detail::load_llama_language_model},
};

}  // namespace

std::vector<std::string> language_model_types() {
  std::vector<std::string> out;
  for (const LmFamily& f : kLmFamilies)
    out.emplace_back(f.model_type);
  return out;
}

std::unique_ptr<LanguageModel> load_language_model(const std::filesystem::path& model,
                                                   const std::filesystem::path& tokenizer) {
  const std::filesystem::path file = model / "config.json";
  const nlohmann::json config = detail::read_config_json(file, true);
  std::string type;
  if (auto it = config.find("model_type"); it != config.end() && it->is_string()) type = *it;
  std::string known;
  for (const LmFamily& f : kLmFamilies) {
    if (type == f.model_type) return f.load(model, tokenizer);
    known += std::string(known.empty() ? "" : ", ") + f.model_type;
  }
  throw InputError({file.string(), 0, "model_type"},
                   type.empty() ? "no model_type: not a language model's config.json"
                                : "model_type '" + type + "' is not a language model winokit runs",
                   "language models: " + known);
}

std::string perplexity_definition(const LanguageModel& model, bool bos) {
  const std::string nll =
      bos ? "mean negative log-likelihood (nats) of every caption token given the tokens before "
            "it, with " +
                model.start_token_text() + " prepended as a start token"
          : "mean negative log-likelihood (nats) of caption tokens 2..n given the tokens before "
            "each, no start token; " +
                model.reference_class() + "(ids, labels=ids).loss";
  return "mean_nll = " + nll + "; perplexity = exp(mean_nll), the textbook perplexity" +
         (bos ? std::string(" (the evaluate library's perplexity metric)") : std::string()) +
         "; perplexity_exp2 = 2^mean_nll, what the Winoground paper's official "
         "statistics/compute_statistics.py correlates (Table 6, left)";
}

namespace detail {

void score_in_batches(const std::vector<std::vector<int>>& sequences, int context, int vocab,
                      std::size_t budget, const LmOptions& options,
                      const std::function<void(std::size_t, std::size_t)>& batch) {
  for (std::size_t s = 0; s < sequences.size(); ++s) {
    const auto& seq = sequences[s];
    if (seq.size() < 2 || static_cast<long long>(seq.size()) > context) {
      throw UsageError("sequence " + std::to_string(s) + " has " + std::to_string(seq.size()) +
                       " tokens (2 to " + std::to_string(context) + " needed)");
    }
    for (int id : seq) {
      if (id < 0 || id >= vocab) {
        throw UsageError("sequence " + std::to_string(s) + ": token id " + std::to_string(id) +
                         " outside the model's vocabulary of " + std::to_string(vocab));
      }
    }
  }
  budget = std::max<std::size_t>(budget, 1);
  if (options.on_progress && !sequences.empty()) options.on_progress(0, sequences.size());
  for (std::size_t first = 0; first < sequences.size();) {
    std::size_t last = first, tokens = 0;
    while (last < sequences.size() &&
           (last == first || tokens + sequences[last].size() <= budget)) {
      tokens += sequences[last].size();
      ++last;
    }
    batch(first, last);
    first = last;
    if (options.on_progress) options.on_progress(first, sequences.size());
  }
}

SequenceScore sequence_score(std::vector<double> log_probs) {
  SequenceScore sc;
  sc.log_probs = std::move(log_probs);
  double sum = 0;
  for (double lp : sc.log_probs)
    sum += lp;
  sc.mean_nll = -sum / static_cast<double>(sc.log_probs.size());
  sc.perplexity = std::exp(sc.mean_nll);
  return sc;
}

}  // namespace detail
}  // namespace winokit
