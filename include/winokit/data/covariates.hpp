// Numeric covariates to correlate with a model's scores and correctness (e.g. caption
// perplexity). A covariate file is a table (CSV or white-space separated; leading lines starting
// with '#' are comments) with an `id` column, an optional caption column (`caption`,
// `caption_index`: 0 or 1) for per-caption values, and one or more numeric columns; each numeric
// column is one covariate. Per-caption values are kept per caption (for the correlation with the
// raw image-caption scores, the Winoground paper's Table 6) and averaged over an example's two
// captions for the correlation with per-example correctness (both must be given).
//
//   auto covs = winokit::load_covariates("perplexity.csv", dataset);
//   winokit::Covariate len = winokit::caption_length_covariate(dataset);
//   auto ppl = winokit::caption_perplexities(dataset, *winokit::load_language_model("gpt2/"), {});
//   std::string csv = winokit::perplexity_csv(dataset, ppl);   // a plain CSV, no comment line
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "winokit/data/winoground.hpp"
#include "winokit/model/embedding_cache.hpp"
#include "winokit/model/language_model.hpp"
#include "winokit/model/tokenizer.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(data);

namespace winokit {

struct Covariate {
  std::string name;
  std::string source;                         // file, or "built-in"
  std::string sha256;                         // of the file; empty for built-ins
  std::vector<std::optional<double>> values;  // aligned with dataset.examples
  // Per-caption values (caption 0 and 1 of each example); empty for a per-example covariate.
  std::vector<std::array<std::optional<double>, 2>> caption_values = {};
  std::size_t ignored_ids = 0;  // ids of the file not in the dataset (a subset run)
  bool per_caption() const { return !caption_values.empty(); }
};

// Number of white-space separated words of each caption (per caption; its per-example value is
// the mean of the two captions; the Winoground paper's Table 6, right).
Covariate caption_length_covariate(const WinogroundDataset& dataset);

// A file for a larger set than the dataset (the official 400-id table on a subset) is read when
// it covers every example of the dataset: its other ids are ignored and counted in each
// covariate's `ignored_ids`. Ids not in the dataset while examples of the dataset are missing
// mean another dataset: an InputError at the first unknown id.
std::vector<Covariate> load_covariates(const std::string& file, const WinogroundDataset& dataset);

// ---- caption perplexity under a language model: GPT-2 in the Winoground paper's Table 6, left;
// any model of language_model.hpp ----
struct PerplexityOptions {
  bool bos = false;  // prepend the model's start token so that every caption token is predicted
  LmOptions engine;
};

struct CaptionPerplexity {
  std::size_t example = 0;  // index into dataset.examples
  int caption = 0;          // 0 or 1
  int tokens = 0;           // the model's tokens of the caption (without the start token)
  double mean_nll = 0;      // mean negative log-likelihood of the predicted tokens, in nats
  double perplexity = 0;    // exp(mean_nll): the textbook perplexity
  // 2^mean_nll (nats, not bits): the quantity the Winoground paper's official
  // statistics/compute_statistics.py correlates with the pair scores (Table 6, left). Monotone in
  // mean_nll like the textbook one, so Spearman's rho is the same and Pearson's r is not.
  double perplexity_exp2 = 0;
};

// The covariate names of the two perplexities (columns of perplexity_csv, rows of Table 6 left).
inline constexpr const char* kPerplexityOfficial = "perplexity_exp2";
inline constexpr const char* kPerplexityTextbook = "perplexity";

// Every caption of the dataset, in example order then caption order. With a cache, per-token
// log-probs are stored under the model's weights id and the token ids (bit-exact: a cached run
// gives the same figures). Throws UsageError naming the example for a one-token caption without
// `bos`, or a caption longer than the model's context.
std::vector<CaptionPerplexity> caption_perplexities(const WinogroundDataset& dataset,
                                                    const LanguageModel& model,
                                                    const PerplexityOptions& options,
                                                    EmbeddingCache* cache = nullptr,
                                                    std::size_t* cached = nullptr);
// A plain CSV (no comment lines: the definition is perplexity_definition, which the command
// writes to its sidecar and prints): "id,caption,tokens,mean_nll,perplexity,perplexity_exp2".
std::string perplexity_csv(const WinogroundDataset& dataset,
                           const std::vector<CaptionPerplexity>& values);
// The two covariates: perplexity_exp2 (the official computation, first) and perplexity.
std::vector<Covariate> perplexity_covariates(const WinogroundDataset& dataset,
                                             const std::vector<CaptionPerplexity>& values,
                                             const std::string& source);

}  // namespace winokit
