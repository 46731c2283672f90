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
//   auto ppl = winokit::caption_perplexities(dataset, gpt2, tokenizer, {});   // GPT-2
//   std::string csv = winokit::perplexity_csv(dataset, ppl, false);
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "winokit/data/winoground.hpp"
#include "winokit/model/embedding_cache.hpp"
#include "winokit/model/gpt2_model.hpp"
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
  bool per_caption() const { return !caption_values.empty(); }
};

// Number of white-space separated words of each caption (per caption; its per-example value is
// the mean of the two captions; the Winoground paper's Table 6, right).
Covariate caption_length_covariate(const WinogroundDataset& dataset);

std::vector<Covariate> load_covariates(const std::string& file, const WinogroundDataset& dataset);

// ---- caption perplexity under GPT-2 (the Winoground paper's Table 6, left) ----
struct PerplexityOptions {
  bool bos = false;  // prepend <|endoftext|> so that every caption token is predicted
  Gpt2Options engine;
};

struct CaptionPerplexity {
  std::size_t example = 0;  // index into dataset.examples
  int caption = 0;          // 0 or 1
  int tokens = 0;           // GPT-2 tokens of the caption (without <|endoftext|>)
  double perplexity = 0;
};

// Every caption of the dataset, in example order then caption order. With a cache, per-token
// log-probs are stored under the model's weights id and the token ids (bit-exact: a cached run
// gives the same figures). Throws UsageError naming the example for a one-token caption without
// `bos`, or a caption longer than the model's context.
std::vector<CaptionPerplexity> caption_perplexities(const WinogroundDataset& dataset,
                                                    const Gpt2Model& model,
                                                    const Gpt2Tokenizer& tokenizer,
                                                    const PerplexityOptions& options,
                                                    EmbeddingCache* cache = nullptr,
                                                    std::size_t* cached = nullptr);
// "id,caption,tokens,perplexity" after a "# " comment line stating the definition.
std::string perplexity_csv(const WinogroundDataset& dataset,
                           const std::vector<CaptionPerplexity>& values, bool bos);
Covariate perplexity_covariate(const WinogroundDataset& dataset,
                               const std::vector<CaptionPerplexity>& values, std::string source);

}  // namespace winokit
