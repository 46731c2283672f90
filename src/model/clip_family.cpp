// CLIP (ViT and ResNet; Hugging Face, OpenCLIP and OpenAI .pt checkpoints) behind the model
// interface: a dual encoder whose embeddings go through ClipRuntime's cache and read-ahead.
#include <cmath>
#include <mutex>

#include "winokit/core/error.hpp"
#include "winokit/model/clip_family.hpp"
#include "winokit/model/compute.hpp"
#include "winokit/model/embedding_runtime.hpp"

namespace winokit {

namespace fs = std::filesystem;

namespace {

class ClipVlModel final : public VlModel, public DualEncoder {
 public:
  ClipVlModel(ClipRuntime rt, std::string name) : rt_(std::move(rt)), name_(std::move(name)) {}

  std::string family() const override { return "clip"; }
  std::string name() const override { return name_; }
  std::vector<Ability> abilities() const override {
    return {Ability::PairScores, Ability::Embeddings, Ability::States, Ability::Alignment};
  }
  nlohmann::json describe() const override {
    nlohmann::json d = rt_.describe();
    d["family"] = "clip";
    d["score"] = "exp(logit_scale) * cosine (CLIPModel's logits_per_image)";
    d["logit_scale_exp"] = rt_.model->logit_scale_exp();
    return d;
  }
  std::vector<double> score_pairs(const std::vector<ImageRequest>& images,
                                  const std::vector<std::string>& captions,
                                  const std::vector<PairIndex>& pairs,
                                  EmbedStats* stats) const override {
    return dual_encoder_pair_scores(*this, images, captions, pairs, stats);
  }
  const DualEncoder* dual_encoder() const override { return this; }
  const ClipRuntime* clip_runtime() const { return &rt_; }

  int embed_dim() const override { return rt_.model->config().embed_dim; }
  std::vector<float> embed_images(const std::vector<ImageRequest>& images, EmbedStats* stats,
                                  const EncodeOptions& encode, TowerOutput* full) const override {
    return winokit::embed_images(rt_, images, stats, encode, full);
  }
  std::vector<float> embed_texts(const std::vector<std::string>& texts, EmbedStats* stats,
                                 const EncodeOptions& encode, TowerOutput* full) const override {
    return winokit::embed_texts(rt_, texts, stats, encode, full);
  }
  double score(const float* text, const float* image) const override {
    return clip_score(text, image, embed_dim(), rt_.model->logit_scale_exp());
  }
  std::unique_ptr<PreparedImages> prepare_images(
      const std::vector<ImageRequest>& images) const override;

 private:
  ClipRuntime rt_;
  std::string name_;
};

std::unique_ptr<PreparedImages> ClipVlModel::prepare_images(
    const std::vector<ImageRequest>& images) const {
  return prepare_embedded_images(*this, images);
}

ClipRunOptions clip_options(const ModelOptions& o) {
  ClipRunOptions c;
  c.batch_size = o.batch_size;
  c.use_cache = o.use_cache;
  c.cache_dir = o.cache_dir;
  if (!o.preprocess.empty()) {
    if (o.preprocess == "hf") {
      c.pipeline = PreprocessPipeline::Hf;
    } else if (o.preprocess == "openai") {
      c.pipeline = PreprocessPipeline::OpenAi;
    } else {
      throw UsageError("--preprocess: '" + o.preprocess + "' is not a CLIP pipeline (hf, openai)");
    }
  }
  if (!o.tokenizer.empty()) c.tokenizer = fs::path(o.tokenizer);
  c.on_progress = o.on_progress;
  return c;
}

}  // namespace

const ClipRuntime* clip_runtime_of(const VlModel& model) {
  const auto* clip = dynamic_cast<const ClipVlModel*>(&model);
  return clip ? clip->clip_runtime() : nullptr;
}

bool is_clip_checkpoint(const fs::path& checkpoint) {
  // CLIP is what the other families are not: a Hugging Face folder with model_type "clip" (or
  // none), an OpenCLIP folder, an OpenAI .pt archive. ClipRuntime::load says what is missing.
  const std::string type = checkpoint_model_type(checkpoint);
  return type.empty() || type == "clip";
}

std::unique_ptr<VlModel> open_clip(const fs::path& checkpoint, const ModelOptions& options) {
  if (!options.head.empty()) {
    throw UsageError(
        "--head: CLIP has one score (exp(logit_scale) * cosine); --head is for "
        "models with several heads");
  }
  return std::make_unique<ClipVlModel>(ClipRuntime::load(checkpoint, clip_options(options)),
                                       checkpoint_name(checkpoint));
}

std::unique_ptr<VlModel> random_demo_model(std::uint64_t seed, const ModelOptions& options) {
  return std::make_unique<ClipVlModel>(
      ClipRuntime::random(vit_b32_config(), seed,
                          std::make_shared<ClipTokenizer>(ClipTokenizer::byte_level()),
                          clip_options(options)),
      "clip-random-vit-b32");
}

std::unique_ptr<VlModel> wrap_clip_runtime(ClipRuntime runtime, std::string name) {
  return std::make_unique<ClipVlModel>(std::move(runtime), std::move(name));
}

}  // namespace winokit
