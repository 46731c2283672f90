// SigLIP: configuration (SigLIP's defaults), image processor, weights (Hugging Face SiglipModel
// layout) and the float32 forward of both towers on winokit's kernels (gemm.hpp), after
// modeling_siglip.py (tests/fixtures/siglip_reference.py is the transcription it follows).
#include "model/families/siglip/siglip_model.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "model/kernels/gemm.hpp"
#include "model/kernels/ops.hpp"
#include "model/layers/siglip_vision.hpp"
#include "model/layers/transformer.hpp"
#include "model/runtime/checkpoint.hpp"
#include "winokit/core/error.hpp"
#include "winokit/core/rng.hpp"
#include "winokit/io/files.hpp"
#include "winokit/io/safetensors.hpp"
#include "winokit/model/compute.hpp"
#include "winokit/model/preprocess.hpp"

namespace winokit {

namespace fs = std::filesystem;
using detail::layer_norm;
using detail::Linear;
using detail::PostOp;

namespace {

// Caps on what a SigLIP config may ask for, far beyond any published checkpoint (so400m:
// width 1152, 27 layers, 384 pixels; vocabularies up to 256k): a bigger value is a broken or
// hostile file, refused naming the field before anything is allocated.
constexpr std::int64_t kMaxSize = 1 << 16;          // widths, layers, heads, text positions
constexpr std::int64_t kMaxVocab = 1 << 20;         // vocabulary rows
constexpr std::int64_t kMaxImageEdge = 2048;        // pixels
constexpr double kSiglipInitLogitScale = 2.302585;  // log(10), SigLIP's initialisation
constexpr double kSiglipInitLogitBias = -10.0;

void read_tower(const detail::ConfigReader& r, SiglipTowerConfig& t) {
  r.integer("hidden_size", t.hidden, 1, kMaxSize);
  r.integer("intermediate_size", t.mlp, 1, kMaxSize);
  r.integer("num_hidden_layers", t.layers, 1, kMaxSize);
  r.integer("num_attention_heads", t.heads, 1, kMaxSize);
  r.positive("layer_norm_eps", t.eps);
  r.one_of("hidden_act", t.act, {"gelu_pytorch_tanh", "gelu_new", "gelu", "quick_gelu"});
  if (t.hidden % t.heads != 0) r.fail("num_attention_heads", "does not divide hidden_size");
}

PostOp post_op(const std::string& act) {
  if (act == "gelu") return PostOp::Gelu;
  if (act == "quick_gelu") return PostOp::QuickGelu;
  return PostOp::GeluTanh;  // gelu_pytorch_tanh and gelu_new: the same tanh approximation
}

nlohmann::json tower_json(const SiglipTowerConfig& t) {
  return {{"hidden_size", t.hidden},       {"intermediate_size", t.mlp},
          {"num_hidden_layers", t.layers}, {"num_attention_heads", t.heads},
          {"layer_norm_eps", t.eps},       {"hidden_act", t.act}};
}

}  // namespace

nlohmann::json SiglipPreprocessConfig::to_json() const {
  return {{"kind", "siglip"},
          {"convert_rgb", "always (alpha dropped, not composited)"},
          {"do_resize", do_resize},
          {"size", {{"height", height}, {"width", width}}},
          {"resample", resample == 2 ? "PIL bilinear" : "PIL bicubic"},
          {"do_rescale", do_rescale},
          {"rescale_factor", rescale_factor},
          {"do_normalize", do_normalize},
          {"image_mean", mean},
          {"image_std", std}};
}

nlohmann::json SiglipConfig::to_json() const {
  return {{"text_config",
           {{"tower", tower_json(text)},
            {"vocab_size", vocab_size},
            {"max_position_embeddings", max_positions},
            {"projection_size", projection_size}}},
          {"vision_config",
           {{"tower", tower_json(vision)},
            {"image_size", image_size},
            {"patch_size", patch},
            {"num_channels", channels}}},
          {"embed_dim", embed_dim()}};
}

SiglipConfig siglip_config_from_json(const nlohmann::json& config,
                                     const nlohmann::json& preprocessor, const std::string& where) {
  if (!config.is_object()) throw InputError({where, 0, ""}, "expected a JSON object");
  SiglipConfig c;
  const detail::ConfigReader r(config, where);
  const detail::ConfigReader tc = r.sub("text_config");
  const detail::ConfigReader vc = r.sub("vision_config");
  read_tower(tc, c.text);
  tc.integer("vocab_size", c.vocab_size, 1, kMaxVocab);
  tc.integer("max_position_embeddings", c.max_positions, 1, kMaxSize);
  c.projection_size = c.text.hidden;  // projection_size absent or null: hidden_size
  tc.integer("projection_size", c.projection_size, 1, kMaxSize);
  read_tower(vc, c.vision);
  vc.integer("image_size", c.image_size, 1, kMaxImageEdge);
  vc.integer("patch_size", c.patch, 1, kMaxImageEdge);
  vc.integer("num_channels", c.channels, 3, 3);
  // Conv2d with stride = kernel = patch and "valid" padding: (image_size // patch)^2 patches, a
  // remainder of pixels on the right and bottom is not seen (so400m: 384 / 14 -> 27 x 27).
  if (c.patch > c.image_size) vc.fail("patch_size", "larger than image_size");
  bool use_head = true;
  vc.flag("vision_use_head", use_head);
  if (!use_head) {
    vc.fail("vision_use_head",
            "a SigLIP vision tower without its attention pooling head has no image embedding "
            "(SiglipModel needs the head)");
  }
  if (c.projection_size != c.vision.hidden) {
    tc.fail("projection_size", "the text embedding (" + std::to_string(c.projection_size) +
                                   ") and the image embedding (vision hidden_size " +
                                   std::to_string(c.vision.hidden) + ") differ in size");
  }
  // preprocessor_config.json (SiglipImageProcessor's defaults for what it does not list).
  const std::string pp_where =
      where == "config.json" ? "preprocessor_config.json"
                             : fs::path(where).parent_path().string() + "/preprocessor_config.json";
  SiglipPreprocessConfig& p = c.preprocess;
  if (preprocessor.is_object()) {
    const detail::ConfigReader q(preprocessor, pp_where);
    detail::read_image_processor(q, p, kMaxImageEdge);
    if (p.resample != 2 && p.resample != 3) {
      q.fail("resample", "only PIL bilinear (2) and bicubic (3) are supported, got " +
                             std::to_string(p.resample));
    }
  }
  if (p.do_resize && (p.height != c.image_size || p.width != c.image_size)) {
    throw InputError({pp_where, 0, "size"},
                     "resizes to " + std::to_string(p.width) + "x" + std::to_string(p.height) +
                         ", but the vision tower takes " + std::to_string(c.image_size) + "x" +
                         std::to_string(c.image_size) + " images");
  }
  return c;
}

SiglipConfig load_siglip_config(const fs::path& dir) {
  const fs::path p = dir / "config.json";
  if (!fs::is_regular_file(p)) throw IoError("no config.json in " + dir.string());
  const nlohmann::json j = detail::read_model_config(p, "siglip", "SigLIP");
  const fs::path pp = dir / "preprocessor_config.json";
  const nlohmann::json q =
      fs::is_regular_file(pp) ? detail::read_config_json(pp, false) : nlohmann::json();
  return siglip_config_from_json(j, q, p.string());
}

SiglipConfig siglip_base_patch16_224_config() {
  return SiglipConfig{};  // the defaults are google/siglip-base-patch16-224's
}

// ---- image processor ----
DecodedImage siglip_pil_resize(const DecodedImage& rgb, int width, int height, int resample) {
  if (rgb.mode != PixelMode::RGB) throw Error("siglip_pil_resize: RGB images only");
  if (resample != 2 && resample != 3) throw Error("siglip_pil_resize: bilinear or bicubic only");
  return pil_resize(rgb, width, height, resample == 2 ? PilFilter::Bilinear : PilFilter::Bicubic);
}

std::vector<float> siglip_preprocess(const DecodedImage& image, const SiglipPreprocessConfig& c) {
  DecodedImage rgb = to_rgb(image);
  if (c.do_resize) {
    // Bicubic through the CLIP pipeline's resampler (the same PIL arithmetic, vectorised).
    rgb = c.resample == 3 ? pil_resize(rgb, c.width, c.height)
                          : siglip_pil_resize(rgb, c.width, c.height, c.resample);
  } else if (rgb.width != c.width || rgb.height != c.height) {
    throw UsageError("an image of " + std::to_string(rgb.width) + "x" + std::to_string(rgb.height) +
                     " with do_resize off: the model takes " + std::to_string(c.width) + "x" +
                     std::to_string(c.height));
  }
  const std::size_t plane = static_cast<std::size_t>(c.width) * static_cast<std::size_t>(c.height);
  std::vector<float> out(3 * plane);
  for (int ch = 0; ch < 3; ++ch) {
    const float m = c.mean[static_cast<std::size_t>(ch)], s = c.std[static_cast<std::size_t>(ch)];
    float* dst = &out[static_cast<std::size_t>(ch) * plane];
    for (std::size_t i = 0; i < plane; ++i) {
      const std::uint8_t v = rgb.pixels[i * 3 + static_cast<std::size_t>(ch)];
      // rescale: float64(x) * factor, then float32; normalize: (x - mean) / std in float32.
      float x = c.do_rescale ? static_cast<float>(static_cast<double>(v) * c.rescale_factor)
                             : static_cast<float>(v);
      if (c.do_normalize) x = (x - m) / s;
      dst[i] = x;
    }
  }
  return out;
}

// ---- model ----
namespace {

// Seeded weights: LayerNorm gains 1, biases small, the rest +-0.02 * sqrt 3, and SigLIP's
// initial logit scale and bias.
detail::RandomInit siglip_random_init(const std::string& name, const std::vector<std::int64_t>&) {
  if (name == "logit_scale") return {0.0, 0.0, static_cast<float>(kSiglipInitLogitScale)};
  if (name == "logit_bias") return {0.0, 0.0, static_cast<float>(kSiglipInitLogitBias)};
  return detail::transformer_init(name, {"norm"});
}

// One pre-LN encoder (SiglipEncoder): its layers and their sizes.
struct Encoder {
  SiglipTowerConfig cfg;
  std::vector<detail::EncoderLayer> layers;

  void build(detail::TensorSource& src, const std::string& prefix, const SiglipTowerConfig& c) {
    cfg = c;
    for (int i = 0; i < c.layers; ++i) {
      layers.push_back(detail::load_encoder_layer(
          src, prefix + "encoder.layers." + std::to_string(i) + ".", detail::kHfClipLayerNames,
          {c.hidden, c.mlp, true, post_op(c.act)}));
    }
  }
};

// Runs `layers` over `seqs` sequences of `len` rows in x [seqs * len, H]. `keys[s]`: how many
// leading rows of sequence s every query attends to (the padding mask); empty: all of them.
void run_encoder(const Encoder& e, std::vector<float>& x, int seqs, int len,
                 const std::vector<int>& keys) {
  const SiglipTowerConfig& c = e.cfg;
  const int H = c.hidden;
  const std::size_t rows = static_cast<std::size_t>(seqs) * static_cast<std::size_t>(len);
  const detail::FixedSequences sequences(seqs, len);
  detail::EncoderRun run{rows, sequences.offsets, sequences.lengths, c.heads, c.eps};
  if (!keys.empty()) {
    const int d = H / c.heads;
    const std::size_t ld3 = 3 * static_cast<std::size_t>(H);
    run.attend = [&](const float* qkv, float* ctx) {
      const float scale = 1.0f / std::sqrt(static_cast<float>(d));
      detail::attend_heads(seqs * c.heads, d, scale, [&](int t) {
        const int s = t / c.heads, h = t % c.heads;
        const std::size_t row0 = static_cast<std::size_t>(s) * static_cast<std::size_t>(len);
        const float* base = qkv + row0 * ld3 + static_cast<std::size_t>(h) * d;
        detail::HeadTask task;
        task.q = base;
        task.ldq = ld3;
        task.queries = len;
        task.k = base + H;
        task.v = base + 2 * static_cast<std::size_t>(H);
        task.ldkv = ld3;
        task.keys = keys[static_cast<std::size_t>(s)];
        task.out = ctx + row0 * H + static_cast<std::size_t>(h) * d;
        task.ldo = static_cast<std::size_t>(H);
        return task;
      });
    };
  }
  detail::run_encoder_layers(e.layers, x, run);
}

}  // namespace

struct SiglipModel::Impl {
  SiglipConfig cfg;
  std::string weights_id;
  // text
  std::vector<float> token_emb, text_pos, final_g, final_b;
  Encoder text;
  Linear text_head;
  // vision: the shared trunk (layers/siglip_vision.hpp), then the attention-pooling head
  detail::SiglipVisionTower vision;
  std::vector<float> probe_q;  // the probe through the head's query projection [H]
  Linear head_kv, head_out, head_fc1, head_fc2;
  std::vector<float> head_ln_g, head_ln_b;
  float logit_scale = 0, logit_bias = 0;

  void build(detail::TensorSource& src) {
    const SiglipConfig& c = cfg;
    const std::int64_t T = c.text.hidden, V = c.vision.hidden;
    token_emb = src.get("text_model.embeddings.token_embedding.weight", {c.vocab_size, T});
    text_pos = src.get("text_model.embeddings.position_embedding.weight", {c.max_positions, T});
    text.build(src, "text_model.", c.text);
    final_g = src.get("text_model.final_layer_norm.weight", {T});
    final_b = src.get("text_model.final_layer_norm.bias", {T});
    text_head = Linear(src.get("text_model.head.weight", {c.projection_size, T}),
                       src.get("text_model.head.bias", {c.projection_size}), c.projection_size,
                       c.text.hidden);
    const SiglipTowerConfig& vt = c.vision;
    vision.load(src, "vision_model.",
                {vt.hidden, vt.mlp, vt.layers, vt.heads, c.image_size, c.patch, vt.eps, vt.act},
                vt.layers, /*post_layernorm=*/true);
    const std::string h = "vision_model.head.";
    const std::vector<float> probe = src.get(h + "probe", {1, 1, V});
    const std::vector<float> in_w = src.get(h + "attention.in_proj_weight", {3 * V, V});
    const std::vector<float> in_b = src.get(h + "attention.in_proj_bias", {3 * V});
    const std::size_t vv = static_cast<std::size_t>(V) * static_cast<std::size_t>(V);
    // The probe is the same for every image: its query (rows [0, V) of in_proj) is computed once.
    Linear q(std::vector<float>(in_w.begin(), in_w.begin() + static_cast<std::ptrdiff_t>(vv)),
             std::vector<float>(in_b.begin(), in_b.begin() + V), c.vision.hidden, c.vision.hidden);
    probe_q.resize(static_cast<std::size_t>(V));
    q.forward(probe.data(), 1, probe_q.data());
    head_kv = Linear(std::vector<float>(in_w.begin() + static_cast<std::ptrdiff_t>(vv), in_w.end()),
                     std::vector<float>(in_b.begin() + V, in_b.end()), 2 * c.vision.hidden,
                     c.vision.hidden);
    head_out =
        Linear(src.get(h + "attention.out_proj.weight", {V, V}),
               src.get(h + "attention.out_proj.bias", {V}), c.vision.hidden, c.vision.hidden);
    head_ln_g = src.get(h + "layernorm.weight", {V});
    head_ln_b = src.get(h + "layernorm.bias", {V});
    const std::int64_t M = c.vision.mlp;
    head_fc1 = Linear(src.get(h + "mlp.fc1.weight", {M, V}), src.get(h + "mlp.fc1.bias", {M}),
                      c.vision.mlp, c.vision.hidden, post_op(c.vision.act));
    head_fc2 = Linear(src.get(h + "mlp.fc2.weight", {V, M}), src.get(h + "mlp.fc2.bias", {V}),
                      c.vision.hidden, c.vision.mlp, PostOp::None, /*accumulate=*/true);
    logit_scale = src.get("logit_scale", {1})[0];
    logit_bias = src.get("logit_bias", {1})[0];
  }
};

SiglipModel::SiglipModel() : impl_(std::make_unique<Impl>()) {}
SiglipModel::SiglipModel(SiglipModel&&) noexcept = default;
SiglipModel& SiglipModel::operator=(SiglipModel&&) noexcept = default;
SiglipModel::~SiglipModel() = default;

const SiglipConfig& SiglipModel::config() const {
  return impl_->cfg;
}
const std::string& SiglipModel::weights_id() const {
  return impl_->weights_id;
}
std::string SiglipModel::compute_signature() const {
  return kernel_version();
}
float SiglipModel::logit_scale() const {
  return impl_->logit_scale;
}
float SiglipModel::logit_bias() const {
  return impl_->logit_bias;
}

SiglipModel SiglipModel::load(const fs::path& dir, const fs::path& hash_index_dir) {
  SiglipModel m;
  m.impl_->cfg = load_siglip_config(dir);
  detail::CheckpointSource src(detail::open_weights(detail::find_weights(dir)));
  m.impl_->weights_id = src.tensors().content_hash(hash_index_dir);
  m.impl_->build(src);
  return m;
}

SiglipModel SiglipModel::random(const SiglipConfig& config, std::uint64_t seed) {
  SiglipModel m;
  m.impl_->cfg = config;
  detail::RandomSource src(seed, siglip_random_init);
  m.impl_->build(src);
  m.impl_->weights_id = "random:" + std::to_string(seed);
  return m;
}

std::vector<float> SiglipModel::encode_images(const float* pixels, int count) const {
  const Impl& m = *impl_;
  const SiglipConfig& c = m.cfg;
  const int H = c.vision.hidden;
  const int N = c.patches();
  std::vector<float> pooled(static_cast<std::size_t>(count) * static_cast<std::size_t>(H));
  if (count <= 0) return pooled;
  const std::size_t rows = static_cast<std::size_t>(count) * static_cast<std::size_t>(N);
  // The trunk: patches, position embeddings, encoder layers, post-LayerNorm.
  const std::vector<float> last = m.vision.forward(pixels, count);
  // The attention pooling head: the probe's query against every patch (keys and values from
  // in_proj rows [V, 3V)), out_proj (no residual), then + MLP(LayerNorm(.)).
  std::vector<float> kv(rows * 2 * H);
  m.head_kv.forward(last.data(), static_cast<int>(rows), kv.data());
  const int heads = c.vision.heads, d = H / heads;
  std::vector<float> ctx(static_cast<std::size_t>(count) * H);
  const std::size_t ld2 = 2 * static_cast<std::size_t>(H);
  detail::attend_heads(count * heads, d, 1.0f / std::sqrt(static_cast<float>(d)), [&](int t) {
    const int img = t / heads, h = t % heads;
    const float* base =
        kv.data() + static_cast<std::size_t>(img) * N * ld2 + static_cast<std::size_t>(h) * d;
    detail::HeadTask task;
    task.q = m.probe_q.data() + static_cast<std::size_t>(h) * d;
    task.ldq = static_cast<std::size_t>(H);
    task.queries = 1;
    task.k = base;
    task.v = base + H;
    task.ldkv = ld2;
    task.keys = N;
    task.out = ctx.data() + static_cast<std::size_t>(img) * H + static_cast<std::size_t>(h) * d;
    task.ldo = static_cast<std::size_t>(H);
    return task;
  });
  m.head_out.forward(ctx.data(), count, pooled.data());
  std::vector<float> normed(static_cast<std::size_t>(count) * H),
      mid(static_cast<std::size_t>(count) * static_cast<std::size_t>(c.vision.mlp));
  layer_norm(pooled.data(), static_cast<std::size_t>(count), H, m.head_ln_g, m.head_ln_b,
             c.vision.eps, normed.data());
  m.head_fc1.forward(normed.data(), count, mid.data());
  m.head_fc2.forward(mid.data(), count, pooled.data());
  return pooled;
}

std::vector<float> SiglipModel::encode_texts(const std::vector<SiglipTokens>& tokens,
                                             bool use_mask) const {
  const Impl& m = *impl_;
  const SiglipConfig& c = m.cfg;
  const int H = c.text.hidden, L = c.max_positions;
  const int n = static_cast<int>(tokens.size());
  std::vector<float> out(static_cast<std::size_t>(n) * static_cast<std::size_t>(c.projection_size));
  if (n == 0) return out;
  const std::size_t rows = static_cast<std::size_t>(n) * static_cast<std::size_t>(L);
  std::vector<float> x(rows * H);
  std::vector<int> keys;
  for (int s = 0; s < n; ++s) {
    const SiglipTokens& t = tokens[static_cast<std::size_t>(s)];
    if (t.ids.size() != static_cast<std::size_t>(L)) {
      throw UsageError("SigLIP: a caption of " + std::to_string(t.ids.size()) +
                       " ids (the text tower pools position " + std::to_string(L - 1) +
                       ": exactly " + std::to_string(L) + " padded ids needed)");
    }
    if (use_mask) {
      if (t.mask.size() != t.ids.size()) throw UsageError("SigLIP: ids and mask differ in length");
      // The padding mask as _prepare_4d_attention_mask gives it: keys with mask 0 get
      // finfo(float32).min added, so exp() makes them exactly 0. The tokenizer's masks are
      // 1...1 0...0; the count of leading ones is what every query attends to.
      int real = 0;
      while (real < L && t.mask[static_cast<std::size_t>(real)] != 0)
        ++real;
      for (int k = real; k < L; ++k) {
        if (t.mask[static_cast<std::size_t>(k)] != 0) {
          throw UsageError("SigLIP: an attention mask with a hole (only right padding)");
        }
      }
      if (real == 0) throw UsageError("SigLIP: an attention mask of zeros");
      keys.push_back(real);
    }
    for (int p = 0; p < L; ++p) {
      const int id = t.ids[static_cast<std::size_t>(p)];
      if (id < 0 || id >= c.vocab_size) {
        throw UsageError("SigLIP: token id " + std::to_string(id) + " outside the vocabulary (" +
                         std::to_string(c.vocab_size) + ")");
      }
      const float* w = &m.token_emb[static_cast<std::size_t>(id) * H];
      const float* pe = &m.text_pos[static_cast<std::size_t>(p) * H];
      float* row = &x[(static_cast<std::size_t>(s) * L + static_cast<std::size_t>(p)) * H];
      for (int k = 0; k < H; ++k)
        row[k] = w[k] + pe[k];
    }
  }
  run_encoder(m.text, x, n, L, keys);
  // final_layer_norm of the last position only (LayerNorm is per row), then the head.
  std::vector<float> last(static_cast<std::size_t>(n) * H);
  for (int s = 0; s < n; ++s) {
    layer_norm(&x[(static_cast<std::size_t>(s) * L + static_cast<std::size_t>(L - 1)) * H], 1, H,
               m.final_g, m.final_b, c.text.eps, &last[static_cast<std::size_t>(s) * H]);
  }
  m.text_head.forward(last.data(), n, out.data());
  return out;
}

double SiglipModel::score(const float* text, const float* image) const {
  const int dim = impl_->cfg.embed_dim();
  double tt = 0, ii = 0, ti = 0;
  for (int k = 0; k < dim; ++k) {
    tt += static_cast<double>(text[k]) * text[k];
    ii += static_cast<double>(image[k]) * image[k];
    ti += static_cast<double>(text[k]) * image[k];
  }
  // exp in float on winokit's kernels (logit_scale is a float32 tensor; the same bits on every
  // CPU), the rest in double.
  const double scale = detail::exp_float(impl_->logit_scale);
  return scale * ti / (std::sqrt(tt) * std::sqrt(ii)) + static_cast<double>(impl_->logit_bias);
}

}  // namespace winokit
