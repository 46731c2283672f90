// FLAVA: configuration, weights (Hugging Face layouts), image processor and the float32 forward
// of its three pre-LN encoders on winokit's kernels (gemm.hpp), after modeling_flava.py.

#include <algorithm>
#include <cmath>
#include <optional>

#include "model/families/flava/flava_model.hpp"
#include "model/kernels/gemm.hpp"
#include "model/layers/transformer.hpp"
#include "model/runtime/checkpoint.hpp"
#include "winokit/core/error.hpp"
#include "winokit/io/files.hpp"
#include "winokit/io/safetensors.hpp"

namespace winokit {

namespace fs = std::filesystem;
using detail::layer_norm;
using detail::Linear;
using detail::PostOp;

const char* to_string(FlavaHead head) {
  return head == FlavaHead::Itm ? "itm" : "contrastive";
}

FlavaHead parse_flava_head(const std::string& text) {
  if (text == "itm") return FlavaHead::Itm;
  if (text == "contrastive") return FlavaHead::Contrastive;
  throw UsageError("--head: '" + text + "' is not a FLAVA head (itm or contrastive)");
}

namespace {

nlohmann::json encoder_json(const FlavaEncoderConfig& e) {
  return {{"hidden_size", e.hidden},        {"num_hidden_layers", e.layers},
          {"num_attention_heads", e.heads}, {"intermediate_size", e.mlp},
          {"layer_norm_eps", e.eps},        {"qkv_bias", e.qkv_bias}};
}

// Caps on what a FLAVA config may ask for, far beyond facebook/flava-full (width 768, 12
// layers, 224 pixels): a bigger value is a broken or hostile file, refused naming the field
// before anything is allocated.
constexpr std::int64_t kMaxFlavaSize = detail::kMaxConfigSize;
constexpr std::int64_t kMaxFlavaEdge = detail::kMaxConfigPixels;

void read_encoder(const detail::ConfigReader& r, FlavaEncoderConfig& e) {
  r.integer("hidden_size", e.hidden, 1, kMaxFlavaSize);
  r.integer("num_hidden_layers", e.layers, 1, kMaxFlavaSize);
  r.integer("num_attention_heads", e.heads, 1, kMaxFlavaSize);
  r.integer("intermediate_size", e.mlp, 1, kMaxFlavaSize);
  r.positive("layer_norm_eps", e.eps);
  r.flag("qkv_bias", e.qkv_bias);
  std::string act = "gelu";
  r.one_of("hidden_act", act, {"gelu"});
  if (e.hidden % e.heads != 0) r.fail("num_attention_heads", "does not divide hidden_size");
}

}  // namespace

nlohmann::json FlavaConfig::to_json() const {
  return {{"image", encoder_json(image)},
          {"text", encoder_json(text)},
          {"multimodal", encoder_json(multimodal)},
          {"image_size", image_size},
          {"patch_size", patch},
          {"vocab_size", vocab_size},
          {"max_position_embeddings", max_text_len},
          {"multimodal_cls_token", multimodal_cls},
          {"projection_dim", projection_dim},
          {"preprocess",
           {{"resize", {resize_h, resize_w}},
            {"resample", "PIL bicubic"},
            {"center_crop", center_crop ? nlohmann::json({crop_h, crop_w}) : nlohmann::json(false)},
            {"mean", mean},
            {"std", std}}}};
}

bool is_flava_checkpoint(const fs::path& dir) {
  const fs::path p = dir / "config.json";
  if (!fs::is_regular_file(p)) return false;
  try {
    const auto j = nlohmann::json::parse(read_file(p));
    return j.is_object() && j.value("model_type", std::string()) == "flava";
  } catch (const std::exception&) {
    return false;
  }
}

FlavaConfig load_flava_config(const fs::path& dir) {
  const fs::path p = dir / "config.json";
  if (!fs::exists(p)) throw IoError("no config.json in " + dir.string());
  const nlohmann::json j = detail::read_model_config(p, "flava", "FLAVA");
  FlavaConfig c;
  const detail::ConfigReader r(j, p);
  r.integer("projection_dim", c.projection_dim, 1, kMaxFlavaSize);
  const detail::ConfigReader ic = r.sub({"image_config", "image_config_dict"});
  const detail::ConfigReader tc = r.sub({"text_config", "text_config_dict"});
  const detail::ConfigReader mc = r.sub({"multimodal_config", "multimodal_config_dict"});
  read_encoder(ic, c.image);
  read_encoder(tc, c.text);
  read_encoder(mc, c.multimodal);
  ic.integer("image_size", c.image_size, 1, kMaxFlavaEdge);
  ic.integer("patch_size", c.patch, 1, kMaxFlavaEdge);
  int channels = 3;
  ic.integer("num_channels", channels, 1, kMaxFlavaSize);
  if (channels != 3) ic.fail("num_channels", "only 3 is supported");
  if (c.image_size % c.patch != 0) ic.fail("patch_size", "does not divide image_size");
  tc.integer("vocab_size", c.vocab_size, 1, detail::kMaxConfigVocab);
  tc.integer("max_position_embeddings", c.max_text_len, 3, kMaxFlavaSize);
  tc.integer("type_vocab_size", c.type_vocab, 1, kMaxFlavaSize);
  std::string pos = "absolute";
  tc.one_of("position_embedding_type", pos, {"absolute"});
  mc.flag("use_cls_token", c.multimodal_cls);
  c.resize_h = c.resize_w = c.crop_h = c.crop_w = c.image_size;
  const fs::path pp = dir / "preprocessor_config.json";
  if (fs::exists(pp)) {
    const nlohmann::json qj = detail::read_config_json(pp);
    const detail::ConfigReader q(qj, pp);
    for (const char* flag : {"do_resize", "do_rescale", "do_normalize"}) {
      bool on = true;
      q.flag(flag, on);
      if (!on) q.fail(flag, "only true is supported");
    }
    detail::read_image_size(q, "size", c.resize_h, c.resize_w, kMaxFlavaEdge);
    q.flag("do_center_crop", c.center_crop);
    c.crop_h = c.resize_h;
    c.crop_w = c.resize_w;
    if (c.center_crop) detail::read_image_size(q, "crop_size", c.crop_h, c.crop_w, kMaxFlavaEdge);
    int resample = 3;
    q.integer("resample", resample, 0, 5);
    if (resample != 3) q.fail("resample", "only bicubic (3) is supported");
    double rescale = 1.0 / 255.0;
    q.number("rescale_factor", rescale);
    if (std::abs(rescale - 1.0 / 255.0) >= 1e-12)
      q.fail("rescale_factor", "only 1/255 is supported");
    q.triple("image_mean", c.mean);
    q.triple("image_std", c.std);
    if (c.crop_h > c.resize_h || c.crop_w > c.resize_w) {
      q.fail("crop_size", "larger than size (the processor would pad; not supported)");
    }
  }
  if (c.crop_h != c.image_size || c.crop_w != c.image_size) {
    throw InputError({(dir / "preprocessor_config.json").string(), 0, "crop_size"},
                     "the processed image is " + std::to_string(c.crop_h) + "x" +
                         std::to_string(c.crop_w) + " but image_config.image_size is " +
                         std::to_string(c.image_size));
  }
  return c;
}

FlavaImage flava_preprocess(const DecodedImage& image, const FlavaConfig& c) {
  const DecodedImage rgb = to_rgb(image);
  const DecodedImage r = pil_resize(rgb, c.resize_w, c.resize_h);
  const int top = (c.resize_h - c.crop_h) / 2, left = (c.resize_w - c.crop_w) / 2;
  FlavaImage out;
  out.height = c.crop_h;
  out.width = c.crop_w;
  out.pixels.resize(3ull * c.crop_h * c.crop_w);
  constexpr double kRescale = 1.0 / 255.0;
  for (int ch = 0; ch < 3; ++ch) {
    const float m = c.mean[static_cast<std::size_t>(ch)], s = c.std[static_cast<std::size_t>(ch)];
    for (int y = 0; y < c.crop_h; ++y) {
      for (int x = 0; x < c.crop_w; ++x) {
        const std::size_t src = (static_cast<std::size_t>(top + y) * c.resize_w + (left + x)) * 3 +
                                static_cast<std::size_t>(ch);
        const auto v = static_cast<float>(r.pixels[src] * kRescale);
        out.pixels[(static_cast<std::size_t>(ch) * c.crop_h + y) * c.crop_w + x] = (v - m) / s;
      }
    }
  }
  return out;
}

// ---- model ----
namespace {

// Row buffers are rounded up to a multiple of this many rows (zero rows; a row's bits never
// depend on the others, gemm.hpp): 1, no padding.
constexpr std::size_t kRowQuantum = 1;
constexpr double kNormalizeEps = 1e-12;  // F.normalize's default eps

std::size_t padded_rows(std::size_t rows) {
  return (rows + kRowQuantum - 1) / kRowQuantum * kRowQuantum;
}

using WeightSource = detail::CheckpointSource;

// One FlavaEncoder (pre-LN layers) and the layernorm after it.
struct Tower {
  FlavaEncoderConfig cfg;
  std::vector<detail::EncoderLayer> layers;
  std::vector<float> ln_g, ln_b;

  void build(WeightSource& src, const std::string& prefix, const FlavaEncoderConfig& c) {
    cfg = c;
    const std::int64_t H = c.hidden;
    for (int i = 0; i < c.layers; ++i) {
      layers.push_back(detail::load_encoder_layer(
          src, prefix + "encoder.layer." + std::to_string(i) + ".", detail::kHfVitLayerNames,
          {c.hidden, c.mlp, c.qkv_bias, PostOp::Gelu}));
    }
    ln_g = src.get(prefix + "layernorm.weight", {H});
    ln_b = src.get(prefix + "layernorm.bias", {H});
  }

  // x: [padded, hidden] with `rows` real rows; sequences at offsets / lengths. In place: the
  // last layer's output (before the final layernorm).
  void run(std::vector<float>& x, std::size_t rows, const std::vector<std::size_t>& offsets,
           const std::vector<std::size_t>& lengths) const {
    detail::run_encoder_layers(layers, x, {rows, offsets, lengths, cfg.heads, cfg.eps});
  }
};

std::vector<float> normalized(std::vector<float> v) {
  double s = 0;
  for (float x : v)
    s += static_cast<double>(x) * x;
  // F.normalize: x / max(||x||, eps), a division per element.
  const auto norm = static_cast<float>(std::max(std::sqrt(s), kNormalizeEps));
  for (float& x : v)
    x /= norm;
  return v;
}

}  // namespace

struct FlavaModel::Impl {
  FlavaConfig cfg;
  std::string weights_id, prefix;
  bool itm = false;
  float logit_scale = 0;
  // image
  std::vector<float> img_cls, img_pos;
  Linear patch;
  Tower image, text, mm;
  // text
  std::vector<float> word, text_pos, text_type, text_ln_g, text_ln_b;
  // projections and heads
  Linear image_projection, text_projection, image_to_mm, text_to_mm;
  std::vector<float> mm_cls;
  Linear itm_pooler, itm_out;

  void build(WeightSource& src) {
    const FlavaConfig& c = cfg;
    const std::string& f = prefix;
    const std::int64_t HI = c.image.hidden, HT = c.text.hidden, HM = c.multimodal.hidden,
                       P = c.patch, D = c.projection_dim;
    const std::string ie = f + "image_model.embeddings.";
    img_cls = src.get(ie + "cls_token", {1, 1, HI});
    img_pos = src.get(ie + "position_embeddings", {1, c.image_tokens(), HI});
    patch = Linear(src.get(ie + "patch_embeddings.projection.weight", {HI, 3, P, P}),
                   src.get(ie + "patch_embeddings.projection.bias", {HI}), c.image.hidden,
                   static_cast<int>(3 * P * P));
    image.build(src, f + "image_model.", c.image);
    const std::string te = f + "text_model.embeddings.";
    word = src.get(te + "word_embeddings.weight", {c.vocab_size, HT});
    text_pos = src.get(te + "position_embeddings.weight", {c.max_text_len, HT});
    text_type = src.get(te + "token_type_embeddings.weight", {c.type_vocab, HT});
    text_ln_g = src.get(te + "LayerNorm.weight", {HT});
    text_ln_b = src.get(te + "LayerNorm.bias", {HT});
    text.build(src, f + "text_model.", c.text);
    if (c.multimodal_cls) mm_cls = src.get(f + "multimodal_model.cls_token", {1, 1, HM});
    mm.build(src, f + "multimodal_model.", c.multimodal);
    image_projection =
        Linear(src.get(f + "image_projection.weight", {D, HI}),
               src.get(f + "image_projection.bias", {D}), c.projection_dim, c.image.hidden);
    text_projection =
        Linear(src.get(f + "text_projection.weight", {D, HT}),
               src.get(f + "text_projection.bias", {D}), c.projection_dim, c.text.hidden);
    image_to_mm = Linear(src.get(f + "image_to_mm_projection.weight", {HM, HI}),
                         src.get(f + "image_to_mm_projection.bias", {HM}), c.multimodal.hidden,
                         c.image.hidden);
    text_to_mm =
        Linear(src.get(f + "text_to_mm_projection.weight", {HM, HT}),
               src.get(f + "text_to_mm_projection.bias", {HM}), c.multimodal.hidden, c.text.hidden);
    const TensorView& scale = src.tensors().get(f + "logit_scale");
    if (scale.numel() != 1) {
      throw InputError({scale.file, 0, f + "logit_scale"},
                       "expected shape [] or [1], found " + shape_text(scale.shape));
    }
    logit_scale = src.get(f + "logit_scale", scale.shape)[0];
    if (itm) {
      itm_pooler = Linear(src.get("itm_head.pooler.dense.weight", {HM, HM}),
                          src.get("itm_head.pooler.dense.bias", {HM}), c.multimodal.hidden,
                          c.multimodal.hidden);
      itm_out = Linear(src.get("itm_head.seq_relationship.weight", {2, HM}),
                       src.get("itm_head.seq_relationship.bias", {2}), 2, c.multimodal.hidden);
    }
  }

  // The final layernorm of row `row` of x, through `projection`, normalised.
  static std::vector<float> project_cls(const Tower& t, const float* row,
                                        const Linear& projection) {
    std::vector<float> normed(static_cast<std::size_t>(t.cfg.hidden)),
        out(static_cast<std::size_t>(projection.n()));
    layer_norm(row, 1, t.cfg.hidden, t.ln_g, t.ln_b, t.cfg.eps, normed.data());
    projection.forward(normed.data(), 1, out.data());
    return normalized(std::move(out));
  }

  // Runs `tower` over the sequences already written into x, then fills each FlavaEmbeds.
  std::vector<FlavaEmbeds> finish(const Tower& tower, std::vector<float>& x, std::size_t rows,
                                  const std::vector<std::size_t>& offsets,
                                  const std::vector<std::size_t>& lengths, const Linear& projection,
                                  const Linear& to_mm) const {
    tower.run(x, rows, offsets, lengths);
    const std::size_t padded = x.size() / static_cast<std::size_t>(tower.cfg.hidden);
    const auto HM = static_cast<std::size_t>(cfg.multimodal.hidden);
    std::vector<float> mm_all(padded * HM);
    to_mm.forward(x.data(), static_cast<int>(padded), mm_all.data());
    std::vector<FlavaEmbeds> out(offsets.size());
    for (std::size_t s = 0; s < offsets.size(); ++s) {
      out[s].tokens = static_cast<int>(lengths[s]);
      out[s].embedding = project_cls(
          tower, &x[offsets[s] * static_cast<std::size_t>(tower.cfg.hidden)], projection);
      out[s].mm.assign(
          mm_all.begin() + static_cast<std::ptrdiff_t>(offsets[s] * HM),
          mm_all.begin() + static_cast<std::ptrdiff_t>((offsets[s] + lengths[s]) * HM));
    }
    return out;
  }
};

FlavaModel::FlavaModel() : impl_(std::make_unique<Impl>()) {}
FlavaModel::FlavaModel(FlavaModel&&) noexcept = default;
FlavaModel& FlavaModel::operator=(FlavaModel&&) noexcept = default;
FlavaModel::~FlavaModel() = default;
const FlavaConfig& FlavaModel::config() const {
  return impl_->cfg;
}
const std::string& FlavaModel::weights_id() const {
  return impl_->weights_id;
}
bool FlavaModel::has_itm() const {
  return impl_->itm;
}
std::string FlavaModel::layout() const {
  return impl_->prefix.empty() ? "FlavaModel" : "FlavaForPreTraining";
}
float FlavaModel::logit_scale() const {
  return impl_->logit_scale;
}

FlavaModel FlavaModel::load(const fs::path& dir) {
  FlavaModel m;
  m.impl_->cfg = load_flava_config(dir);
  const fs::path weights = detail::find_weights(dir);
  WeightSource src(detail::open_weights(weights));
  if (src.has("flava.logit_scale")) {
    m.impl_->prefix = "flava.";
  } else if (src.has("logit_scale")) {
    m.impl_->prefix = "";
  } else {
    throw InputError({weights.string(), 0, "flava.logit_scale"},
                     "neither flava.logit_scale (FlavaForPreTraining) nor logit_scale "
                     "(FlavaModel) is in this checkpoint: not FLAVA's weights");
  }
  m.impl_->itm = src.has("itm_head.seq_relationship.weight");
  m.impl_->build(src);
  m.impl_->weights_id = src.tensors().content_hash();
  return m;
}

std::vector<FlavaEmbeds> FlavaModel::embed_images(
    const std::vector<const FlavaImage*>& images) const {
  const Impl& m = *impl_;
  const FlavaConfig& c = m.cfg;
  const int P = c.patch, H = c.image.hidden, g = c.grid();
  const auto T = static_cast<std::size_t>(c.image_tokens());
  const std::size_t n = images.size();
  if (n == 0) return {};
  const std::size_t patches = static_cast<std::size_t>(g) * g;
  const std::size_t K = 3ull * P * P;
  std::vector<float> cols(padded_rows(n * patches) * K, 0.0f);
  for (std::size_t i = 0; i < n; ++i) {
    const FlavaImage& im = *images[i];
    if (im.height != c.image_size || im.width != c.image_size) {
      throw UsageError("FLAVA: an image of " + std::to_string(im.width) + "x" +
                       std::to_string(im.height) + " (the model takes " +
                       std::to_string(c.image_size) + "x" + std::to_string(c.image_size) + ")");
    }
    for (int gy = 0; gy < g; ++gy) {
      for (int gx = 0; gx < g; ++gx) {
        float* dst = &cols[(i * patches + static_cast<std::size_t>(gy) * g + gx) * K];
        for (int ch = 0; ch < 3; ++ch) {
          for (int ky = 0; ky < P; ++ky) {
            const float* s = &im.pixels[(static_cast<std::size_t>(ch) * im.height +
                                         static_cast<std::size_t>(gy) * P + ky) *
                                            im.width +
                                        static_cast<std::size_t>(gx) * P];
            std::copy_n(s, P, dst + (static_cast<std::size_t>(ch) * P + ky) * P);
          }
        }
      }
    }
  }
  std::vector<float> pe(cols.size() / K * H);
  m.patch.forward(cols.data(), static_cast<int>(cols.size() / K), pe.data());
  const std::size_t rows = n * T;
  std::vector<float> x(padded_rows(rows) * H, 0.0f);
  std::vector<std::size_t> offsets(n), lengths(n, T);
  for (std::size_t i = 0; i < n; ++i) {
    offsets[i] = i * T;
    float* base = &x[offsets[i] * H];
    for (int k = 0; k < H; ++k)
      base[k] = m.img_cls[static_cast<std::size_t>(k)] + m.img_pos[static_cast<std::size_t>(k)];
    for (std::size_t p = 0; p < patches; ++p) {
      const float* src = &pe[(i * patches + p) * H];
      const float* pos = &m.img_pos[(1 + p) * H];
      float* dst = base + (1 + p) * H;
      for (int k = 0; k < H; ++k)
        dst[k] = src[k] + pos[k];
    }
  }
  return m.finish(m.image, x, rows, offsets, lengths, m.image_projection, m.image_to_mm);
}

std::vector<FlavaEmbeds> FlavaModel::embed_texts(const std::vector<std::vector<int>>& ids) const {
  const Impl& m = *impl_;
  const FlavaConfig& c = m.cfg;
  const int H = c.text.hidden;
  const std::size_t n = ids.size();
  if (n == 0) return {};
  std::vector<std::size_t> offsets(n), lengths(n);
  std::size_t rows = 0;
  for (std::size_t s = 0; s < n; ++s) {
    if (ids[s].empty() || ids[s].size() > static_cast<std::size_t>(c.max_text_len)) {
      throw UsageError("FLAVA: a caption of " + std::to_string(ids[s].size()) + " tokens (1 to " +
                       std::to_string(c.max_text_len) + " allowed)");
    }
    offsets[s] = rows;
    lengths[s] = ids[s].size();
    rows += lengths[s];
  }
  std::vector<float> x(padded_rows(rows) * H, 0.0f), pre(static_cast<std::size_t>(H));
  // LayerNorm((word + token type 0) + position)
  for (std::size_t s = 0; s < n; ++s) {
    for (std::size_t t = 0; t < ids[s].size(); ++t) {
      const int id = ids[s][t];
      if (id < 0 || id >= c.vocab_size) throw UsageError("FLAVA: token id out of range");
      const float* w = &m.word[static_cast<std::size_t>(id) * H];
      const float* pe = &m.text_pos[t * H];
      for (int k = 0; k < H; ++k)
        pre[static_cast<std::size_t>(k)] =
            (w[k] + m.text_type[static_cast<std::size_t>(k)]) + pe[k];
      layer_norm(pre.data(), 1, H, m.text_ln_g, m.text_ln_b, c.text.eps, &x[(offsets[s] + t) * H]);
    }
  }
  return m.finish(m.text, x, rows, offsets, lengths, m.text_projection, m.text_to_mm);
}

double FlavaModel::contrastive(const FlavaEmbeds& image, const FlavaEmbeds& text) const {
  if (image.embedding.size() != text.embedding.size()) {
    throw UsageError("FLAVA: embeddings of different sizes");
  }
  double dot = 0;
  for (std::size_t k = 0; k < image.embedding.size(); ++k)
    dot += static_cast<double>(image.embedding[k]) * text.embedding[k];
  return dot * static_cast<double>(std::exp(impl_->logit_scale));
}

FlavaItmOutput FlavaModel::itm(const std::vector<const FlavaEmbeds*>& texts,
                               const std::vector<const FlavaEmbeds*>& images) const {
  const Impl& m = *impl_;
  if (!m.itm) {
    throw UsageError("this FLAVA checkpoint (" + layout() +
                     " layout) has no ITM head (itm_head.*, FlavaForPreTraining only): use "
                     "--head contrastive");
  }
  if (texts.size() != images.size()) throw UsageError("FLAVA: as many captions as images needed");
  const int H = m.cfg.multimodal.hidden;
  const std::size_t n = texts.size();
  FlavaItmOutput out;
  if (n == 0) return out;
  const std::size_t cls = m.cfg.multimodal_cls ? 1 : 0;
  std::vector<std::size_t> offsets(n), lengths(n);
  std::size_t rows = 0;
  for (std::size_t p = 0; p < n; ++p) {
    offsets[p] = rows;
    lengths[p] = cls + static_cast<std::size_t>(images[p]->tokens + texts[p]->tokens);
    rows += lengths[p];
  }
  std::vector<float> x(padded_rows(rows) * H, 0.0f);
  for (std::size_t p = 0; p < n; ++p) {
    auto dst = x.begin() + static_cast<std::ptrdiff_t>(offsets[p] * H);
    if (cls) dst = std::copy(m.mm_cls.begin(), m.mm_cls.end(), dst);
    dst = std::copy(images[p]->mm.begin(), images[p]->mm.end(), dst);
    std::copy(texts[p]->mm.begin(), texts[p]->mm.end(), dst);
  }
  m.mm.run(x, rows, offsets, lengths);
  // Final layernorm of the first token, the ITM head's pooler (tanh) and seq_relationship.
  std::vector<float> first(n * H), pooled(n * H);
  for (std::size_t p = 0; p < n; ++p)
    layer_norm(&x[offsets[p] * H], 1, H, m.mm.ln_g, m.mm.ln_b, m.cfg.multimodal.eps, &first[p * H]);
  m.itm_pooler.forward(first.data(), static_cast<int>(n), pooled.data());
  for (auto& v : pooled)
    v = std::tanh(v);
  out.logits.resize(n * 2);
  m.itm_out.forward(pooled.data(), static_cast<int>(n), out.logits.data());
  for (std::size_t p = 0; p < n; ++p) {
    const double a = out.logits[p * 2], b = out.logits[p * 2 + 1];
    out.probabilities.push_back(1.0 / (1.0 + std::exp(a - b)));
  }
  return out;
}

}  // namespace winokit
