// BLIP ITM / ITC: configuration, weights (Hugging Face BlipForImageTextRetrieval layout), image
// processor and the float32 forward on winokit's kernels (gemm.hpp). The VlModel face is in
// blip_vl_model.cpp.
#include "model/families/blip/blip_model.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <optional>

#include "model/kernels/gemm.hpp"
#include "model/kernels/kernels.hpp"
#include "model/kernels/ops.hpp"
#include "model/kernels/parallel.hpp"
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

const char* to_string(BlipHead head) {
  return head == BlipHead::Itm ? "itm" : "itc";
}

BlipHead parse_blip_head(const std::string& text) {
  if (text == "itm") return BlipHead::Itm;
  if (text == "itc") return BlipHead::Itc;
  throw UsageError("unknown BLIP head '" + text + "' (BLIP's heads: itm, itc)");
}

nlohmann::json BlipConfig::preprocess_json() const {
  return {{"convert_rgb", "PIL convert(\"RGB\") (alpha dropped)"},
          {"resize", do_resize ? nlohmann::json({resize_h, resize_w}) : nlohmann::json(false)},
          {"resample", "PIL bicubic"},
          {"rescale_factor", do_rescale ? nlohmann::json(rescale_factor) : nlohmann::json(false)},
          {"normalize", do_normalize},
          {"mean", mean},
          {"std", std}};
}

nlohmann::json BlipConfig::to_json() const {
  return {{"text",
           {{"hidden_size", text_hidden},
            {"num_hidden_layers", text_layers},
            {"num_attention_heads", text_heads},
            {"intermediate_size", text_mlp},
            {"vocab_size", vocab_size},
            {"max_position_embeddings", max_text_len},
            {"encoder_hidden_size", encoder_hidden},
            {"pad_token_id", pad_id},
            {"layer_norm_eps", text_eps}}},
          {"vision",
           {{"hidden_size", vision_hidden},
            {"num_hidden_layers", vision_layers},
            {"num_attention_heads", vision_heads},
            {"intermediate_size", vision_mlp},
            {"image_size", image_size},
            {"patch_size", patch},
            {"layer_norm_eps", vision_eps}}},
          {"image_text_hidden_size", embed_dim},
          {"preprocess", preprocess_json()}};
}

namespace {

// Caps on what a BLIP config may ask for, far beyond any published checkpoint (BLIP large: width
// 1024, 24 layers, 384 pixels): a bigger value is a broken or hostile file, refused naming the
// field before anything is allocated.
constexpr std::int64_t kMaxBlipSize = 1 << 16;  // widths, layers, vocabulary, text length
constexpr std::int64_t kMaxBlipEdge = 1536;     // pixels: 4x blip-itm-base's 384

}  // namespace

BlipConfig load_blip_config(const fs::path& dir) {
  const fs::path p = dir / "config.json";
  if (!fs::exists(p)) throw IoError("no config.json in " + dir.string());
  const nlohmann::json j = detail::read_model_config(p, "blip", "BLIP");
  BlipConfig c;
  const detail::ConfigReader r(j, p);
  r.integer("image_text_hidden_size", c.embed_dim, 1, kMaxBlipSize);
  const detail::ConfigReader t = r.sub({"text_config", "text_config_dict"});
  const detail::ConfigReader v = r.sub({"vision_config", "vision_config_dict"});
  t.integer("hidden_size", c.text_hidden, 1, kMaxBlipSize);
  t.integer("num_hidden_layers", c.text_layers, 1, kMaxBlipSize);
  t.integer("num_attention_heads", c.text_heads, 1, kMaxBlipSize);
  t.integer("intermediate_size", c.text_mlp, 1, kMaxBlipSize);
  t.integer("vocab_size", c.vocab_size, 1, kMaxBlipSize);
  t.integer("max_position_embeddings", c.max_text_len, 3, kMaxBlipSize);
  t.integer("pad_token_id", c.pad_id, 0, kMaxBlipSize);
  t.positive("layer_norm_eps", c.text_eps);
  std::string act = "gelu";
  t.one_of("hidden_act", act, {"gelu"});
  v.integer("hidden_size", c.vision_hidden, 1, kMaxBlipSize);
  v.integer("num_hidden_layers", c.vision_layers, 1, kMaxBlipSize);
  v.integer("num_attention_heads", c.vision_heads, 1, kMaxBlipSize);
  v.integer("intermediate_size", c.vision_mlp, 1, kMaxBlipSize);
  v.integer("image_size", c.image_size, 1, kMaxBlipEdge);
  v.integer("patch_size", c.patch, 1, kMaxBlipEdge);
  v.positive("layer_norm_eps", c.vision_eps);
  act = "gelu";
  v.one_of("hidden_act", act, {"gelu"});
  int channels = 3;
  v.integer("num_channels", channels, 1, kMaxBlipSize);
  if (channels != 3) v.fail("num_channels", "only 3 is supported");
  // BlipConfig.__init__ sets the text encoder's encoder_hidden_size to the vision width, whatever
  // text_config says (the cross-attention key / value shapes are checked against it).
  c.encoder_hidden = c.vision_hidden;
  if (c.text_hidden % c.text_heads != 0)
    t.fail("num_attention_heads", "does not divide hidden_size");
  if (c.vision_hidden % c.vision_heads != 0) {
    v.fail("num_attention_heads", "does not divide hidden_size");
  }
  if (c.image_size % c.patch != 0) v.fail("patch_size", "does not divide image_size");
  if (c.pad_id >= c.vocab_size) t.fail("pad_token_id", "not below vocab_size");
  c.resize_h = c.resize_w = c.image_size;
  const fs::path pp = dir / "preprocessor_config.json";
  if (fs::exists(pp)) {
    const nlohmann::json qj = detail::read_config_json(pp);
    const detail::ConfigReader q(qj, pp);
    detail::ImageProcessorFields f{c.do_resize,      c.do_rescale, c.do_normalize,
                                   c.resize_h,       c.resize_w,   3,
                                   c.rescale_factor, c.mean,       c.std};
    detail::read_image_processor(q, f, kMaxBlipEdge);
    if (f.resample != 3) q.fail("resample", "only bicubic (3) is supported");
    c.do_resize = f.do_resize;
    c.do_rescale = f.do_rescale;
    c.do_normalize = f.do_normalize;
    c.resize_h = f.height;
    c.resize_w = f.width;
    c.rescale_factor = f.rescale_factor;
    c.mean = f.mean;
    c.std = f.std;
  }
  if (c.do_resize && (c.resize_h != c.image_size || c.resize_w != c.image_size)) {
    throw InputError({pp.string(), 0, "size"},
                     "the processed image is " + std::to_string(c.resize_h) + "x" +
                         std::to_string(c.resize_w) + " but vision_config.image_size is " +
                         std::to_string(c.image_size));
  }
  return c;
}

BlipConfig blip_itm_base_config() {
  BlipConfig c;
  c.text_heads = 12;  // Salesforce/blip-itm-base-coco's config.json lists 12
  c.vocab_size = 30524;
  return c;
}

std::vector<float> blip_preprocess(const DecodedImage& image, const BlipConfig& c) {
  const DecodedImage rgb = to_rgb(image);
  int h = rgb.height, w = rgb.width;
  DecodedImage resized;
  const DecodedImage* r = &rgb;
  if (c.do_resize) {
    resized = pil_resize(rgb, c.resize_w, c.resize_h);
    r = &resized;
    h = c.resize_h;
    w = c.resize_w;
  }
  if (h != c.image_size || w != c.image_size) {
    throw UsageError("BLIP: an image of " + std::to_string(w) + "x" + std::to_string(h) +
                     " with do_resize false (the model takes " + std::to_string(c.image_size) +
                     "x" + std::to_string(c.image_size) + ")");
  }
  const std::size_t plane = static_cast<std::size_t>(h) * static_cast<std::size_t>(w);
  std::vector<float> out(3 * plane);
  for (std::size_t ch = 0; ch < 3; ++ch) {
    const float m = c.mean[ch], s = c.std[ch];
    for (std::size_t i = 0; i < plane; ++i) {
      const std::uint8_t u = r->pixels[i * 3 + ch];
      // float64(x) * rescale_factor -> float32, then (x - mean) / std in float32.
      float x = c.do_rescale ? static_cast<float>(u * c.rescale_factor) : static_cast<float>(u);
      if (c.do_normalize) x = (x - m) / s;
      out[ch * plane + i] = x;
    }
  }
  return out;
}

// ---- model ----
namespace {

using Source = detail::TensorSource;

// BlipEncoderLayer's names: layer_norm1, self_attn.qkv (fused), self_attn.projection, mlp.fc1.
const detail::EncoderLayerNames kBlipVisionLayerNames = {
    "layer_norm1", "layer_norm2", {"self_attn.qkv"}, "self_attn.projection", "mlp.fc1", "mlp.fc2"};

// Seeded weights at BERT's initializer_range 0.02, unit LayerNorm gains, small biases.
detail::RandomInit blip_random_init(const std::string& name, const std::vector<std::int64_t>&) {
  return detail::transformer_init(name, {"LayerNorm", "layer_norm", "layernorm"});
}

std::vector<float> concat(std::vector<float> a, const std::vector<float>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The cross-attention block of a text layer (the rest is the shared post-norm BERT layer).
struct CrossLayer {
  Linear cross_q, cross_kv, cross_out;  // cross_kv: [key; value] from the vision width
  std::vector<float> cross_ln_g, cross_ln_b;
};

// One image's query rows in a batch: rows [row0, row0 + rows) attend to kv ([keys, 2 * width],
// key | value).
struct CrossGroup {
  std::size_t row0 = 0, rows = 0;
  const float* kv = nullptr;
  int keys = 0;
};

// Cross-attention: per (group, head), scores = Q K^T * (1 / sqrt(d)), softmax per row, out = P V,
// on the kernels' attention (ops.hpp: each output element one fixed chain: a row's bits do not
// depend on the other rows of its group, on the groups, or on the thread count).
void cross_attention(const float* q, int width, int heads, const std::vector<CrossGroup>& groups,
                     float* out) {
  const int d = width / heads;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  const std::size_t kv_stride = 2 * static_cast<std::size_t>(width);
  const std::size_t w = static_cast<std::size_t>(width);
  detail::attend_heads(static_cast<int>(groups.size()) * heads, d, scale, [&](int t) {
    const CrossGroup& g = groups[static_cast<std::size_t>(t / heads)];
    const std::size_t h = static_cast<std::size_t>(t % heads);
    const float* kbase = g.kv + h * static_cast<std::size_t>(d);
    detail::HeadTask task;
    task.q = q + g.row0 * w + h * static_cast<std::size_t>(d);
    task.ldq = w;
    task.queries = static_cast<int>(g.rows);
    task.k = kbase;
    task.v = kbase + w;
    task.ldkv = kv_stride;
    task.keys = g.keys;
    task.out = out + g.row0 * w + h * static_cast<std::size_t>(d);
    task.ldo = w;
    return task;
  });
}

// x / max(||x||, 1e-12) (torch.nn.functional.normalize), the norm in double in index order.
void normalize(float* x, int n) {
  double s = 0;
  for (int i = 0; i < n; ++i)
    s += static_cast<double>(x[i]) * x[i];
  const float norm = std::max(static_cast<float>(std::sqrt(s)), 1e-12f);
  for (int i = 0; i < n; ++i)
    x[i] /= norm;
}

}  // namespace

struct BlipModel::Impl {
  BlipConfig cfg;
  std::string weights_id;
  // vision
  std::vector<float> cls, pos;  // [Dv], [tokens, Dv]
  Linear patch;
  std::vector<detail::EncoderLayer> vlayers;
  std::vector<float> post_g, post_b;
  // text
  std::vector<float> word, tpos, emb_g, emb_b;
  std::vector<detail::EncoderLayer> tlayers;  // post-norm BERT layers
  std::vector<CrossLayer> tcross;             // their cross-attention blocks
  // heads
  Linear vision_proj, text_proj, itm;

  void build(Source& src) {
    const BlipConfig& c = cfg;
    const std::int64_t V = c.vision_hidden, T = c.text_hidden, P = c.patch, E = c.encoder_hidden;
    const std::string ve = "vision_model.embeddings.";
    cls = src.get(ve + "class_embedding", {1, 1, V});
    patch = Linear(src.get(ve + "patch_embedding.weight", {V, 3, P, P}),
                   src.get(ve + "patch_embedding.bias", {V}), c.vision_hidden,
                   static_cast<int>(3 * P * P));
    pos = src.get(ve + "position_embedding", {1, c.image_tokens(), V});
    for (int i = 0; i < c.vision_layers; ++i) {
      vlayers.push_back(detail::load_encoder_layer(
          src, "vision_model.encoder.layers." + std::to_string(i) + ".", kBlipVisionLayerNames,
          {c.vision_hidden, c.vision_mlp, true, PostOp::Gelu}));
    }
    post_g = src.get("vision_model.post_layernorm.weight", {V});
    post_b = src.get("vision_model.post_layernorm.bias", {V});

    const std::string te = "text_encoder.embeddings.";
    word = src.get(te + "word_embeddings.weight", {c.vocab_size, T});
    tpos = src.get(te + "position_embeddings.weight", {c.max_text_len, T});
    emb_g = src.get(te + "LayerNorm.weight", {T});
    emb_b = src.get(te + "LayerNorm.bias", {T});
    for (int i = 0; i < c.text_layers; ++i) {
      const std::string l = "text_encoder.encoder.layer." + std::to_string(i) + ".";
      tlayers.push_back(detail::load_encoder_layer(
          src, l, detail::kHfBertLayerNames, {c.text_hidden, c.text_mlp, true, PostOp::Gelu}));
      CrossLayer L;
      const std::string x = l + "crossattention.";
      L.cross_q = Linear(src.get(x + "self.query.weight", {T, T}),
                         src.get(x + "self.query.bias", {T}), c.text_hidden, c.text_hidden);
      L.cross_kv = Linear(
          concat(src.get(x + "self.key.weight", {T, E}), src.get(x + "self.value.weight", {T, E})),
          concat(src.get(x + "self.key.bias", {T}), src.get(x + "self.value.bias", {T})),
          2 * c.text_hidden, c.encoder_hidden);
      L.cross_out =
          Linear(src.get(x + "output.dense.weight", {T, T}), src.get(x + "output.dense.bias", {T}),
                 c.text_hidden, c.text_hidden, PostOp::None, /*accumulate=*/true);
      L.cross_ln_g = src.get(x + "output.LayerNorm.weight", {T});
      L.cross_ln_b = src.get(x + "output.LayerNorm.bias", {T});
      tcross.push_back(std::move(L));
    }
    const std::int64_t D = c.embed_dim;
    vision_proj = Linear(src.get("vision_proj.weight", {D, V}), src.get("vision_proj.bias", {D}),
                         c.embed_dim, c.vision_hidden);
    text_proj = Linear(src.get("text_proj.weight", {D, T}), src.get("text_proj.bias", {D}),
                       c.embed_dim, c.text_hidden);
    itm =
        Linear(src.get("itm_head.weight", {2, T}), src.get("itm_head.bias", {2}), 2, c.text_hidden);
  }

  // The text encoder over the sequences ids[s]; with `images`, cross-attention to images[s]
  // in every layer. Returns the final [CLS] state of each sequence [n, text_hidden].
  std::vector<float> text_forward(const std::vector<const std::vector<int>*>& ids,
                                  const std::vector<const BlipImageEmbeds*>* images) const {
    const BlipConfig& c = cfg;
    const std::size_t T = static_cast<std::size_t>(c.text_hidden);
    const std::size_t n = ids.size();
    std::vector<std::size_t> offsets(n), lengths(n);
    std::size_t rows = 0;
    for (std::size_t s = 0; s < n; ++s) {
      const std::size_t len = ids[s]->size();
      if (len == 0 || len > static_cast<std::size_t>(c.max_text_len)) {
        throw UsageError("BLIP: a caption of " + std::to_string(len) + " tokens (1 to " +
                         std::to_string(c.max_text_len) + " allowed)");
      }
      offsets[s] = rows;
      lengths[s] = len;
      rows += len;
    }
    // Adjacent sequences with the same image form one cross-attention group (its keys packed
    // once per head).
    std::vector<CrossGroup> groups;
    std::vector<const BlipImageEmbeds*> group_image;
    if (images) {
      for (std::size_t s = 0; s < n; ++s) {
        const BlipImageEmbeds* im = (*images)[s];
        if (im->cross_kv.size() != tlayers.size()) {
          throw UsageError("BLIP: ITM needs images encoded with their cross-attention keys");
        }
        if (!groups.empty() && group_image.back() == im) {
          groups.back().rows += lengths[s];
        } else {
          groups.push_back({offsets[s], lengths[s], nullptr, im->tokens});
          group_image.push_back(im);
        }
      }
    }
    // Embeddings: LayerNorm(word + position); no token types. (Padding is never built: each
    // caption is its own sequence, which is what HF's -10000 key mask computes.)
    std::vector<float> x(rows * T), pre(T);
    for (std::size_t s = 0; s < n; ++s) {
      for (std::size_t t = 0; t < lengths[s]; ++t) {
        const int id = (*ids[s])[t];
        if (id < 0 || id >= c.vocab_size) throw UsageError("BLIP: token id out of range");
        const float* w = &word[static_cast<std::size_t>(id) * T];
        const float* p = &tpos[t * T];
        for (std::size_t k = 0; k < T; ++k)
          pre[k] = w[k] + p[k];
        layer_norm(pre.data(), 1, c.text_hidden, emb_g, emb_b, c.text_eps,
                   &x[(offsets[s] + t) * T]);
      }
    }
    // The shared post-norm BERT layers; cross-attention between attention and MLP.
    const int R = static_cast<int>(rows);
    std::vector<float> q(images ? rows * T : 0), ctx(images ? rows * T : 0), tmp;
    detail::EncoderRun run(rows, offsets, lengths, c.text_heads, c.text_eps);
    run.post_norm = true;
    if (images) {
      run.after_attention = [&](int li, float* xs) {
        const CrossLayer& L = tcross[static_cast<std::size_t>(li)];
        L.cross_q.forward(xs, R, q.data());
        for (std::size_t g = 0; g < groups.size(); ++g)
          groups[g].kv = group_image[g]->cross_kv[static_cast<std::size_t>(li)].data();
        cross_attention(q.data(), c.text_hidden, c.text_heads, groups, ctx.data());
        tmp.assign(xs, xs + rows * T);
        L.cross_out.forward(ctx.data(), R, tmp.data());
        layer_norm(tmp.data(), rows, c.text_hidden, L.cross_ln_g, L.cross_ln_b, c.text_eps, xs);
      };
    }
    detail::run_encoder_layers(tlayers, x, run);
    std::vector<float> first(n * T);
    for (std::size_t s = 0; s < n; ++s)
      std::copy_n(&x[offsets[s] * T], T, &first[s * T]);
    return first;
  }
};

BlipModel::BlipModel() : impl_(std::make_unique<Impl>()) {}
BlipModel::BlipModel(BlipModel&&) noexcept = default;
BlipModel& BlipModel::operator=(BlipModel&&) noexcept = default;
BlipModel::~BlipModel() = default;
const BlipConfig& BlipModel::config() const {
  return impl_->cfg;
}
const std::string& BlipModel::weights_id() const {
  return impl_->weights_id;
}

BlipModel BlipModel::load(const fs::path& dir) {
  BlipModel m;
  m.impl_->cfg = load_blip_config(dir);
  detail::CheckpointSource src(detail::open_weights(detail::find_weights(dir)));
  m.impl_->build(src);
  m.impl_->weights_id = src.tensors().content_hash();
  return m;
}

BlipModel BlipModel::random(const BlipConfig& config, std::uint64_t seed) {
  BlipModel m;
  m.impl_->cfg = config;
  detail::RandomSource src(seed, blip_random_init);
  m.impl_->build(src);
  m.impl_->weights_id = "random:" + std::to_string(seed);
  return m;
}

BlipImageEmbeds BlipModel::encode_image(const float* pixels, bool with_cross) const {
  const Impl& m = *impl_;
  const BlipConfig& c = m.cfg;
  const int P = c.patch, S = c.image_size, g = c.grid();
  const std::size_t V = static_cast<std::size_t>(c.vision_hidden);
  const std::size_t patches = static_cast<std::size_t>(g) * static_cast<std::size_t>(g);
  const std::size_t tokens = patches + 1;
  const std::size_t K = 3ull * P * P;
  // im2col in Conv2d's weight order (channel, ky, kx), patches row-major.
  std::vector<float> cols(patches * K);
  for (int gy = 0; gy < g; ++gy) {
    for (int gx = 0; gx < g; ++gx) {
      float* dst = &cols[(static_cast<std::size_t>(gy) * g + gx) * K];
      for (int ch = 0; ch < 3; ++ch) {
        for (int ky = 0; ky < P; ++ky) {
          const float* src =
              &pixels[(static_cast<std::size_t>(ch) * S + static_cast<std::size_t>(gy) * P + ky) *
                          S +
                      static_cast<std::size_t>(gx) * P];
          std::copy_n(src, P, dst + (static_cast<std::size_t>(ch) * P + ky) * P);
        }
      }
    }
  }
  std::vector<float> x(tokens * V);
  m.patch.forward(cols.data(), static_cast<int>(patches), x.data() + V);
  for (std::size_t k = 0; k < V; ++k)
    x[k] = m.cls[k] + m.pos[k];
  for (std::size_t i = V; i < tokens * V; ++i)
    x[i] += m.pos[i];
  const detail::FixedSequences one(1, static_cast<int>(tokens));
  detail::run_encoder_layers(m.vlayers, x,
                             {tokens, one.offsets, one.lengths, c.vision_heads, c.vision_eps});
  const int R = static_cast<int>(tokens);
  BlipImageEmbeds e;
  e.tokens = R;
  e.states.resize(tokens * V);
  layer_norm(x.data(), tokens, c.vision_hidden, m.post_g, m.post_b, c.vision_eps, e.states.data());
  e.feature.resize(static_cast<std::size_t>(c.embed_dim));
  m.vision_proj.forward(e.states.data(), 1, e.feature.data());
  normalize(e.feature.data(), c.embed_dim);
  if (with_cross) {
    for (const CrossLayer& L : m.tcross) {
      std::vector<float> kv(tokens * 2 * static_cast<std::size_t>(c.text_hidden));
      L.cross_kv.forward(e.states.data(), R, kv.data());
      e.cross_kv.push_back(std::move(kv));
    }
  }
  return e;
}

std::vector<BlipImageEmbeds> BlipModel::encode_images(const std::vector<const float*>& pixels,
                                                      bool with_cross) const {
  const int count = static_cast<int>(pixels.size());
  std::vector<BlipImageEmbeds> out(pixels.size());
  const bool by_image = count >= compute_threads() && compute_threads() > 1;
  if (const std::exception_ptr f = detail::for_each_item(count, by_image, [&](int n) {
        out[static_cast<std::size_t>(n)] =
            encode_image(pixels[static_cast<std::size_t>(n)], with_cross);
      })) {
    std::rethrow_exception(f);
  }
  return out;
}

std::vector<float> BlipModel::itm_logits(const std::vector<const std::vector<int>*>& ids,
                                         const std::vector<const BlipImageEmbeds*>& images) const {
  if (ids.size() != images.size()) throw UsageError("BLIP: as many captions as images needed");
  if (ids.empty()) return {};
  const std::vector<float> first = impl_->text_forward(ids, &images);
  std::vector<float> logits(ids.size() * 2);
  impl_->itm.forward(first.data(), static_cast<int>(ids.size()), logits.data());
  return logits;
}

std::vector<float> BlipModel::text_features(const std::vector<const std::vector<int>*>& ids) const {
  if (ids.empty()) return {};
  const int D = impl_->cfg.embed_dim;
  const std::vector<float> first = impl_->text_forward(ids, nullptr);
  std::vector<float> f(ids.size() * static_cast<std::size_t>(D));
  impl_->text_proj.forward(first.data(), static_cast<int>(ids.size()), f.data());
  for (std::size_t s = 0; s < ids.size(); ++s)
    normalize(&f[s * static_cast<std::size_t>(D)], D);
  return f;
}

double blip_itm_probability(const float* logits) {
  float p[2] = {logits[0], logits[1]};
  detail::softmax_inplace(p, 2);
  return p[1];
}

double blip_cosine(const float* a, const float* b, int n) {
  double s = 0;
  for (int i = 0; i < n; ++i)
    s += static_cast<double>(a[i]) * b[i];
  return s;
}

}  // namespace winokit
