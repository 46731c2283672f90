// CLIP (ViT and ResNet; Hugging Face, OpenCLIP and OpenAI .pt checkpoints) behind the model
// interface: a dual encoder whose embeddings go through ClipRuntime's cache and read-ahead.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <mutex>

#include "winokit/core/error.hpp"
#include "winokit/core/rng.hpp"
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
  nlohmann::json engine_bench(const EngineBenchOptions& options) const override;

 private:
  ClipRuntime rt_;
  std::string name_;
};

std::unique_ptr<PreparedImages> ClipVlModel::prepare_images(
    const std::vector<ImageRequest>& images) const {
  return prepare_embedded_images(*this, images);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// The towers on raw tensors: the image tower on batches of normalised pixels (no decoding or
// resizing), its share of the GEMM peak, and the text tower on Winoground-length captions, up to
// the longest end-of-text and over all 77 positions.
nlohmann::json ClipVlModel::engine_bench(const EngineBenchOptions& o) const {
  using clock = std::chrono::steady_clock;
  const ClipConfig& c = rt_.model->config();
  const int batch = o.batch_size;
  const std::size_t per_image = 3ull * c.image_size * c.image_size;
  std::vector<float> pixels(per_image * static_cast<std::size_t>(batch));
  Rng rng(1);
  for (auto& p : pixels)
    p = static_cast<float>(rng.uniform() * 2 - 1);
  // Warm-up, then timed runs of whole batches.
  rt_.model->encode_images(pixels.data(), batch);
  std::vector<double> per_image_ms;
  const int batches = std::max(1, o.images / batch);
  for (int r = 0; r < o.runs; ++r) {
    auto t0 = clock::now();
    for (int b = 0; b < batches; ++b)
      rt_.model->encode_images(pixels.data(), batch);
    per_image_ms.push_back(std::chrono::duration<double, std::milli>(clock::now() - t0).count() /
                           (batches * batch));
  }
  const double img_ms = median(per_image_ms);
  const double gflops = c.vision_gflop() / (img_ms / 1000.0);
  // GEMM peak: the vision MLP's first GEMM at this batch, alone. A ResNet has no such GEMM:
  // its reference is ViT-B/32's ([batch * 50, 768] x [768, 3072]), a fixed machine figure.
  constexpr int kVitB32Tokens = 50, kVitB32Mlp = 3072, kVitB32Width = 768;
  const double peak =
      c.vision_arch == VisionArch::ResNet
          ? gemm_gflops(batch * kVitB32Tokens, kVitB32Mlp, kVitB32Width, std::max(5, o.runs))
          : gemm_gflops(batch * c.vision_tokens(), c.vision.mlp, c.vision.width,
                        std::max(5, o.runs));
  // Token counts (with start and end) of Winoground captions under the real CLIP BPE, e.g.
  // "an old person kisses a young person" -> 9, the ponytail caption -> 14; ids drawn at random.
  static constexpr int kLengths[] = {9, 9, 9, 9, 14};
  std::vector<std::vector<int>> ids;
  for (int i = 0; i < o.captions; ++i) {
    std::vector<int> seq(static_cast<std::size_t>(kLengths[i % 5]));
    seq.front() = rt_.tokenizer->start_id();
    for (std::size_t k = 1; k + 1 < seq.size(); ++k)
      seq[k] =
          static_cast<int>(rng.below(static_cast<std::uint64_t>(std::max(1, c.vocab_size - 2))));
    seq.back() = rt_.tokenizer->end_id();
    ids.push_back(std::move(seq));
  }
  auto time_text = [&](bool full) {
    EncodeOptions eo;
    eo.full_context = full;
    std::vector<double> t;
    for (int r = 0; r < o.runs; ++r) {
      auto t0 = clock::now();
      for (std::size_t b = 0; b < ids.size(); b += 128) {
        std::vector<std::vector<int>> chunk(
            ids.begin() + static_cast<std::ptrdiff_t>(b),
            ids.begin() + static_cast<std::ptrdiff_t>(std::min(ids.size(), b + 128)));
        rt_.model->encode_texts(chunk, eo);
      }
      t.push_back(std::chrono::duration<double, std::milli>(clock::now() - t0).count());
    }
    return median(t);
  };
  const double text_ms = time_text(false), text_full_ms = time_text(true);
  return {{"image_ms_per_image_median", img_ms},
          {"architecture", c.vision_arch == VisionArch::ResNet ? "resnet" : "vit"},
          {"image_size", c.image_size},
          {"image_gflop_per_image", c.vision_gflop()},
          {"image_gflops", gflops},
          {"gemm_peak_gflops", peak},
          {"share_of_gemm_peak", gflops / peak},
          {"captions", o.captions},
          {"text_ms_until_longest_eot", text_ms},
          {"text_ms_all_77_positions", text_full_ms},
          {"text_speedup", text_full_ms / text_ms}};
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
