// Caption perplexity under a language model (GPT-2, Llama, Qwen2: language_model.hpp), shared by
// `perplexity` and `eval --lm`.
#pragma once

#include <string>

#include "shard.hpp"
#include "winokit/data/covariates.hpp"

namespace winokit::cli {

struct LmRequest {
  std::string model, tokenizer, cache_dir;
  bool bos = false, no_cache = false;
  bool quiet_progress = false;  // no progress on stderr
  int threads = 0;
  ShardFlags shard;  // perplexity --shard I/N (eval --lm follows eval's own --shard)
};

struct LmRun {
  std::vector<CaptionPerplexity> values;
  std::string weights_id;
  std::string model_name;  // "GPT-2", "Llama", ...
  std::string definition;  // perplexity_definition of the model and --bos
  std::size_t cached = 0;
  std::string cache_warning;
};

LmRun run_perplexity(const WinogroundDataset& dataset, const LmRequest& req);

}  // namespace winokit::cli
