// What every language model of the LM registry shares (language_model.cpp): the checks and the
// batching of score(), the SequenceScore of a sequence's log-probs, and each family's loader.
// Internal to src/model.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <vector>

#include "winokit/model/language_model.hpp"

namespace winokit::detail {

// Checks every sequence (2 to `context` tokens, ids in [0, vocab): UsageError naming the
// sequence), then calls batch(first, last) over consecutive groups of sequences of at most
// `budget` tokens (at least one sequence each), reporting progress after each.
void score_in_batches(const std::vector<std::vector<int>>& sequences, int context, int vocab,
                      std::size_t budget, const LmOptions& options,
                      const std::function<void(std::size_t, std::size_t)>& batch);

// The score of one sequence from its log-probs: the float64 sum in order, mean_nll, exp.
SequenceScore sequence_score(std::vector<double> log_probs);

// The families' loaders (the LM registry's lines).
std::unique_ptr<LanguageModel> load_gpt2_language_model(const std::filesystem::path& model,
                                                        const std::filesystem::path& tokenizer);
std::unique_ptr<LanguageModel> load_llama_language_model(const std::filesystem::path& model,
                                                         const std::filesystem::path& tokenizer);

}  // namespace winokit::detail
