// VQAScore (Lin et al., 2024; linzhiqiu/t2v_metrics) for the generative families (SmolVLM,
// LLaVA-OneVision): s(caption, image) = P(answer | image, question(caption)), the next-token
// softmax over the whole vocabulary after the chat template's assistant prefix, at the answer's
// first token. What the families share is here: the options (`--model-option question/answer`)
// and the VlModel adapter around a scorer that turns an image into a KV-cached prompt prefix and
// continues it with each caption's question: each image's prefix is run once, every caption
// paired with it continues from there, batch_size captions per forward, all through the pair
// cache. Scores do not depend on the batch, the pairs beside them or the threads.
//
//   class MyScorer final : public winokit::VqaScorer { ... };
//   return winokit::make_vqascore_model({"llava-onevision", checkpoint, options, signature,
//                                        describe_json, preprocess_json, answer}, scorer);
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/lm/llama_model.hpp"
#include "model/text/hf_tokenizer.hpp"
#include "winokit/io/image_decode.hpp"
#include "winokit/model/vl_model.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(model);

namespace winokit {

struct VqaScoreOptions {
  std::string question = "Does this figure show \"{}\"? Please answer yes or no.";
  std::string answer = "Yes";
  // SmolVLM only. -1: as preprocessor_config.json says; 0: off; 1: on.
  int image_splitting = -1;
};

// `--model-option question=...` and `answer=...` (the registry has checked the keys; others are
// left to the family). UsageError for a question without {} or an empty answer.
void read_vqascore_settings(const ModelOptions& options, VqaScoreOptions& vqa);

// The question with the caption in place of its first {}.
std::string vqascore_question(const std::string& question, const std::string& caption);

// A generative model as VQAScore needs it.
class VqaScorer {
 public:
  virtual ~VqaScorer() = default;
  // The image's part of the prompt run through the text model.
  virtual KvCache image_prefix(const DecodedImage& image) const = 0;
  // P(answer's first token | prefix, question(caption)) per caption, in one batch.
  virtual std::vector<double> answer_probabilities(
      const KvCache& prefix, const std::vector<std::string>& captions) const = 0;
  // The family's engine figures for `winokit bench` (VlModel::engine_bench); none (null) by
  // default.
  virtual nlohmann::json engine_bench(const EngineBenchOptions& /*options*/) const {
    return nullptr;
  }
};

struct VqaScoreModelInfo {
  std::string family;  // the registry's name, family() and describe()'s "kind"
  std::filesystem::path checkpoint;
  ModelOptions options;
  // What a cached score depends on: weights, kernels, config, vocabulary, templates.
  std::string signature;
  nlohmann::json describe;      // the family's record; compute, threads, batch size are added
  std::string preprocess_json;  // part of each pair's cache key
  std::string answer;           // score_name(): P(answer)
};

// What a VQAScore family knows of its loaded checkpoint, for vqascore_model_info.
struct VqaScoreCheckpoint {
  std::string family;  // the registry's name
  std::filesystem::path checkpoint;
  ModelOptions options;
  VqaScoreOptions vqa;
  std::string weights_id;
  nlohmann::json config;
  nlohmann::json preprocess;
  const HfTokenizer* tokenizer = nullptr;
  int answer_token_id = -1;
  std::string prompt;  // the prompt's shape, for describe()'s "score"
};

// The adapter's info from it: the cache signature (FAMILY-vqascore, weights, kernels, config,
// vocabulary, question, answer; the image processor is part of each pair's key) and the
// describe() record every VQAScore family writes.
VqaScoreModelInfo vqascore_model_info(const VqaScoreCheckpoint& c);

std::unique_ptr<VlModel> make_vqascore_model(VqaScoreModelInfo info,
                                             std::shared_ptr<const VqaScorer> scorer);

}  // namespace winokit
