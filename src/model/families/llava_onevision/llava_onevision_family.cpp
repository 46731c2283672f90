// LLaVA-OneVision as a VlModel (the registry's "llava-onevision" family): VQAScore pair scores
// through the shared adapter (vqascore.hpp: each image's prompt prefix run once into a KV cache,
// every caption paired with it continued from there, all through the pair cache).
#include <memory>

#include "model/families/llava_onevision/llava_onevision_model.hpp"
#include "model/runtime/vqascore.hpp"
#include "winokit/core/error.hpp"

namespace winokit {

namespace fs = std::filesystem;

bool is_llava_onevision_checkpoint(const fs::path& checkpoint) {
  return checkpoint_model_type(checkpoint) == "llava_onevision";
}

std::unique_ptr<VlModel> open_llava_onevision(const fs::path& checkpoint,
                                              const ModelOptions& options) {
  if (!options.head.empty()) {
    throw UsageError("--head: LLaVA-OneVision has one score (VQAScore), no heads to choose from");
  }
  VqaScoreOptions vqa;
  read_vqascore_settings(options, vqa);
  auto model = std::make_shared<LlavaOnevisionModel>(LlavaOnevisionModel::load(checkpoint, vqa));
  VqaScoreModelInfo info = vqascore_model_info(
      {"llava-onevision", checkpoint, options, vqa, model->weights_id(), model->config().to_json(),
       model->config().preprocess.to_json(), &model->tokenizer(), model->answer_id(),
       "<|im_start|>user\\n<image tokens>\\nQUESTION<|im_end|>\\n<|im_start|>assistant\\n"});
  // The scorer is the model's Impl; the shared_ptr keeps the model alive beside it.
  struct Scorer final : VqaScorer {
    std::shared_ptr<const LlavaOnevisionModel> m;
    explicit Scorer(std::shared_ptr<const LlavaOnevisionModel> model) : m(std::move(model)) {}
    KvCache image_prefix(const DecodedImage& image) const override {
      return m->image_prefix(image);
    }
    std::vector<double> answer_probabilities(
        const KvCache& prefix, const std::vector<std::string>& captions) const override {
      return m->answer_probabilities(prefix, captions);
    }
  };
  return make_vqascore_model(std::move(info), std::make_shared<Scorer>(model));
}

}  // namespace winokit
