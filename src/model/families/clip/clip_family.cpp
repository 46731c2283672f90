// CLIP (ViT and ResNet; Hugging Face, OpenCLIP and OpenAI .pt checkpoints) behind the model
// interface: a dual encoder whose embeddings go through ClipRuntime's cache and read-ahead.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <mutex>

#include "model/families/clip/clip_family.hpp"
#include "model/runtime/embedding_runtime.hpp"
#include "winokit/core/error.hpp"
#include "winokit/core/rng.hpp"
#include "winokit/io/image_decode.hpp"
#include "winokit/model/compute.hpp"
#include "winokit/model/preprocess.hpp"

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
  AlignmentMethod alignment_method() const override {
    return {"Word-patch similarity",
            "Each map: cosine similarity between a caption token's final state and each image "
            "patch's final state (both through the final LayerNorm and projection), min-max "
            "scaled per map.",
            "lowest similarity in the map", "highest"};
  }
  std::vector<AlignmentMaps> align(const ImageBytes& image,
                                   const std::vector<std::string>& captions) const override;

 private:
  ClipRuntime rt_;
  std::string name_;
};

std::unique_ptr<PreparedImages> ClipVlModel::prepare_images(
    const std::vector<ImageRequest>& images) const {
  return prepare_embedded_images(*this, images);
}

std::vector<AlignmentMaps> ClipVlModel::align(const ImageBytes& image,
                                              const std::vector<std::string>& captions) const {
  const ClipConfig& c = rt_.model->config();
  const PreprocessConfig pp = rt_.preprocess();
  const WordPatchMaps w = word_patch_maps(rt_, image, captions);
  const int side = c.image_size;
  const std::size_t plane = static_cast<std::size_t>(side) * static_cast<std::size_t>(side);
  std::vector<float> rgb(w.pixels.size());
  for (std::size_t i = 0; i < rgb.size(); ++i)
    rgb[i] = w.pixels[i] * pp.std[i / plane] + pp.mean[i / plane];
  std::vector<AlignmentMaps> out;
  for (std::size_t q = 0; q < captions.size(); ++q) {
    AlignmentMaps& m = out.emplace_back();
    m.width = m.height = side;
    m.rgb = rgb;
    m.grid_h = m.grid_w = w.grid;
    m.region = c.patch;
    m.tokens = w.tokens[q];
    for (const std::vector<float>& sim : w.similarity[q]) {
      // min-max scaled per map
      const auto [lo, hi] = std::minmax_element(sim.begin(), sim.end());
      const float range = *hi - *lo > 0 ? *hi - *lo : 1.0f;
      std::vector<float> scaled(sim.size());
      for (std::size_t p = 0; p < sim.size(); ++p)
        scaled[p] = (sim[p] - *lo) / range;
      m.maps.push_back(std::move(scaled));
    }
  }
  return out;
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

namespace {
std::vector<float> unit(const float* v, int dim) {
  double s = 0;
  for (int k = 0; k < dim; ++k)
    s += static_cast<double>(v[k]) * v[k];
  const double inv = s > 0 ? 1.0 / std::sqrt(s) : 0.0;
  std::vector<float> out(static_cast<std::size_t>(dim));
  for (int k = 0; k < dim; ++k)
    out[static_cast<std::size_t>(k)] = static_cast<float>(v[k] * inv);
  return out;
}
}  // namespace

WordPatchMaps word_patch_maps(const ClipRuntime& rt, const ImageBytes& image,
                              const std::vector<std::string>& captions) {
  const ClipConfig& c = rt.model->config();
  WordPatchMaps out;
  out.grid = c.image_size / c.patch;
  out.pixels = preprocess(decode_image(image), rt.preprocess());
  EncodeOptions o;
  o.token_states = true;
  const TowerOutput img = rt.model->encode_images(out.pixels.data(), 1, o);
  std::vector<std::vector<int>> ids;
  for (const auto& cap : captions)
    ids.push_back(rt.tokenizer->encode(cap, c.context_length));
  const TowerOutput txt = rt.model->encode_texts(ids, o);
  const int e = c.embed_dim, patches = out.grid * out.grid;
  for (std::size_t q = 0; q < captions.size(); ++q) {
    std::vector<std::string> toks;
    std::vector<std::vector<float>> sims;
    // Positions 1 .. end-of-text - 1: the caption's own tokens.
    for (std::size_t t = 1; t + 1 < ids[q].size(); ++t) {
      toks.push_back(rt.tokenizer->token_text(ids[q][t]));
      const auto tv = unit(&txt.tokens[(q * static_cast<std::size_t>(txt.token_count) + t) * e], e);
      std::vector<float> row(static_cast<std::size_t>(patches));
      for (int p = 0; p < patches; ++p) {
        const auto pv = unit(&img.tokens[static_cast<std::size_t>(1 + p) * e],
                             e);  // token 0 is the class token
        double d = 0;
        for (int k = 0; k < e; ++k)
          d += static_cast<double>(tv[static_cast<std::size_t>(k)]) *
               pv[static_cast<std::size_t>(k)];
        row[static_cast<std::size_t>(p)] = static_cast<float>(d);
      }
      sims.push_back(std::move(row));
    }
    out.tokens.push_back(std::move(toks));
    out.similarity.push_back(std::move(sims));
  }
  return out;
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
