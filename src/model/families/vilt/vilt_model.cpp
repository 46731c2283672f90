// ViLT: configuration, weights (Hugging Face layout), image processor and the float32 forward.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

#include "model/families/vilt/vilt_model.hpp"
#include "model/kernels/gemm.hpp"
#include "model/layers/transformer.hpp"
#include "model/runtime/checkpoint.hpp"
#include "winokit/core/error.hpp"
#include "winokit/core/rng.hpp"
#include "winokit/io/files.hpp"
#include "winokit/io/safetensors.hpp"

namespace winokit {

namespace fs = std::filesystem;
using detail::layer_norm;
using detail::Linear;
using detail::PostOp;

const char* to_string(ViltHead head) {
  return head == ViltHead::Rank ? "rank" : "itm";
}

nlohmann::json ViltConfig::to_json() const {
  return {{"hidden_size", hidden},
          {"num_hidden_layers", layers},
          {"num_attention_heads", heads},
          {"intermediate_size", mlp},
          {"layer_norm_eps", eps},
          {"vocab_size", vocab_size},
          {"max_position_embeddings", max_text_len},
          {"image_size", image_size},
          {"patch_size", patch},
          {"max_image_length", max_image_length},
          {"head", to_string(head)},
          {"preprocess",
           {{"shortest_edge", shortest_edge},
            {"longest_edge", static_cast<int>(1333.0 / 800.0 * shortest_edge)},
            {"size_divisor", size_divisor},
            {"resample", "PIL bicubic"},
            {"mean", mean},
            {"std", std},
            {"patches", "all, row-major (max_image_length sampling not applied)"}}}};
}

bool is_vilt_checkpoint(const fs::path& dir) {
  const fs::path p = dir / "config.json";
  if (!fs::is_regular_file(p)) return false;
  try {
    const auto j = nlohmann::json::parse(read_file(p));
    return j.is_object() && j.value("model_type", std::string()) == "vilt";
  } catch (const std::exception&) {
    return false;
  }
}

// Caps on what a ViLT config may ask for, far beyond any published checkpoint (ViLT-B/32:
// hidden 768, 12 layers, images resized to a 384-pixel shorter side): a bigger value is a broken
// or hostile file, refused with exit 2 naming the field before anything is allocated.
constexpr std::int64_t kMaxViltSize = 1 << 16;  // widths, layers, vocabulary, text length
constexpr std::int64_t kMaxViltEdge = 1536;     // pixels: 4x the reference's 384; the longer side
                                                // is then at most 2559, about 3,800 patches of 32

ViltConfig load_vilt_config(const fs::path& dir) {
  const fs::path p = dir / "config.json";
  if (!fs::exists(p)) throw IoError("no config.json in " + dir.string());
  const nlohmann::json j = detail::read_model_config(p, "vilt", "ViLT");
  ViltConfig c;
  // Every size is checked against its cap before it becomes an int (a huge value wrapped or
  // allocated gigabytes; issue 23).
  const detail::ConfigReader r(j, p);
  r.integer("hidden_size", c.hidden, 1, kMaxViltSize);
  r.integer("num_hidden_layers", c.layers, 1, kMaxViltSize);
  r.integer("num_attention_heads", c.heads, 1, kMaxViltSize);
  r.integer("intermediate_size", c.mlp, 1, kMaxViltSize);
  r.integer("vocab_size", c.vocab_size, 1, kMaxViltSize);
  r.integer("max_position_embeddings", c.max_text_len, 3, kMaxViltSize);
  r.integer("type_vocab_size", c.type_vocab, 1, kMaxViltSize);
  r.integer("modality_type_vocab_size", c.modality_types, 2, kMaxViltSize);
  r.integer("image_size", c.image_size, 1, kMaxViltEdge);
  r.integer("patch_size", c.patch, 1, kMaxViltEdge);
  r.integer("num_channels", c.channels, 3, kMaxViltSize);
  // Not used (every patch is kept); recorded as the checkpoint says.
  r.integer("max_image_length", c.max_image_length, -1, kMaxViltSize * kMaxViltSize);
  r.positive("layer_norm_eps", c.eps);
  r.flag("qkv_bias", c.qkv_bias);
  if (c.channels != 3) r.fail("num_channels", "only 3 is supported");
  if (c.hidden % c.heads != 0) r.fail("num_attention_heads", "does not divide hidden_size");
  if (c.image_size % c.patch != 0) r.fail("patch_size", "does not divide image_size");
  std::string act = "gelu";
  r.one_of("hidden_act", act, {"gelu"});
  const fs::path pp = dir / "preprocessor_config.json";
  if (fs::exists(pp)) {
    const nlohmann::json qj = detail::read_config_json(pp);
    const detail::ConfigReader q(qj, pp);
    // The resized image's shorter side (its longer one is at most 1333/800 of it), capped at
    // kMaxViltEdge: a 12,000-pixel edge asked for gigabytes before anything was checked.
    if (q.has("size")) {
      if (qj["size"].is_object() && qj["size"].contains("shortest_edge")) {
        q.sub("size").integer("shortest_edge", c.shortest_edge, 1, kMaxViltEdge);
      } else if (qj["size"].is_number()) {
        q.integer("size", c.shortest_edge, 1, kMaxViltEdge);
      } else {
        q.fail("size", "expected {\"shortest_edge\": N}");
      }
    }
    q.integer("size_divisor", c.size_divisor, 1, kMaxViltEdge);
    q.triple("image_mean", c.mean);
    q.triple("image_std", c.std);
    int resample = 3;
    q.integer("resample", resample, 0, 5);
    if (resample != 3) q.fail("resample", "only bicubic (3) is supported");
    if (c.shortest_edge < c.size_divisor) {
      q.fail("size", "shortest_edge must be >= size_divisor >= 1");
    }
  }
  return c;
}

ViltConfig vilt_b32_config() {
  return ViltConfig{};
}

// ---- image processor ----
std::pair<int, int> vilt_resize_size(int height, int width, int shorter, int size_divisor) {
  const double min_size = shorter;
  const double max_size = static_cast<int>(1333.0 / 800.0 * shorter);
  double scale = min_size / std::min(height, width);
  double nh, nw;
  if (height < width) {
    nh = min_size;
    nw = scale * width;
  } else {
    nh = scale * height;
    nw = min_size;
  }
  if (std::max(nh, nw) > max_size) {
    scale = max_size / std::max(nh, nw);
    nh = scale * nh;
    nw = scale * nw;
  }
  int h = static_cast<int>(nh + 0.5), w = static_cast<int>(nw + 0.5);
  h = h / size_divisor * size_divisor;
  w = w / size_divisor * size_divisor;
  return {h, w};
}

ViltImage vilt_preprocess(const DecodedImage& image, const ViltConfig& c) {
  const DecodedImage rgb = to_rgb(image);
  const auto [h, w] = vilt_resize_size(rgb.height, rgb.width, c.shortest_edge, c.size_divisor);
  if (h < c.patch || w < c.patch) {
    throw UsageError("image of " + std::to_string(rgb.width) + "x" + std::to_string(rgb.height) +
                     " is too elongated for ViLT (resized to " + std::to_string(w) + "x" +
                     std::to_string(h) + ")");
  }
  const DecodedImage r = pil_resize(rgb, w, h);
  ViltImage out;
  out.height = h;
  out.width = w;
  out.pixels.resize(3ull * h * w);
  constexpr double kRescale = 1.0 / 255.0;
  for (int ch = 0; ch < 3; ++ch) {
    const float m = c.mean[static_cast<std::size_t>(ch)], s = c.std[static_cast<std::size_t>(ch)];
    for (std::size_t i = 0; i < static_cast<std::size_t>(h) * w; ++i) {
      const auto x = static_cast<float>(r.pixels[i * 3 + static_cast<std::size_t>(ch)] * kRescale);
      out.pixels[static_cast<std::size_t>(ch) * h * w + i] = (x - m) / s;
    }
  }
  return out;
}

ViltPadded vilt_pad(const std::vector<ViltImage>& images) {
  ViltPadded p;
  p.count = static_cast<int>(images.size());
  for (const auto& im : images) {
    p.height = std::max(p.height, im.height);
    p.width = std::max(p.width, im.width);
  }
  const std::size_t plane = static_cast<std::size_t>(p.height) * p.width;
  p.pixels.assign(images.size() * 3 * plane, 0.0f);
  p.mask.assign(images.size() * plane, 0);
  for (std::size_t n = 0; n < images.size(); ++n) {
    const auto& im = images[n];
    for (int ch = 0; ch < 3; ++ch) {
      for (int y = 0; y < im.height; ++y) {
        std::copy_n(&im.pixels[(static_cast<std::size_t>(ch) * im.height + y) * im.width], im.width,
                    &p.pixels[(n * 3 + static_cast<std::size_t>(ch)) * plane +
                              static_cast<std::size_t>(y) * p.width]);
      }
    }
    for (int y = 0; y < im.height; ++y)
      std::fill_n(&p.mask[n * plane + static_cast<std::size_t>(y) * p.width], im.width, 1);
  }
  return p;
}

// ---- model ----
namespace {

using Source = detail::TensorSource;

// Seeded weights at initializer_range 0.02, unit LayerNorm gains, small biases.
detail::RandomInit vilt_random_init(const std::string& name, const std::vector<std::int64_t>&) {
  return detail::transformer_init(name, {"LayerNorm", "layernorm"});
}

// Row buffers are rounded up to a multiple of this many rows (zero rows; a row's bits never
// depend on the others, gemm.hpp): 1, no padding.
constexpr std::size_t kRowQuantum = 1;

}  // namespace

struct ViltModel::Impl {
  ViltConfig cfg;
  std::string weights_id;
  std::vector<float> word, text_pos, text_type, text_ln_g, text_ln_b;
  std::vector<float> cls, img_pos, modality;
  Linear patch;
  std::vector<detail::EncoderLayer> layers;
  std::vector<float> ln_g, ln_b;
  Linear pooler, head;

  void build(Source& src) {
    const ViltConfig& c = cfg;
    const std::int64_t H = c.hidden, P = c.patch;
    const std::string e = "vilt.embeddings.";
    word = src.get(e + "text_embeddings.word_embeddings.weight", {c.vocab_size, H});
    text_pos = src.get(e + "text_embeddings.position_embeddings.weight", {c.max_text_len, H});
    text_type = src.get(e + "text_embeddings.token_type_embeddings.weight", {c.type_vocab, H});
    text_ln_g = src.get(e + "text_embeddings.LayerNorm.weight", {H});
    text_ln_b = src.get(e + "text_embeddings.LayerNorm.bias", {H});
    cls = src.get(e + "cls_token", {1, 1, H});
    const std::int64_t g = c.pos_grid();
    img_pos = src.get(e + "position_embeddings", {1, g * g + 1, H});
    modality = src.get(e + "token_type_embeddings.weight", {c.modality_types, H});
    patch = Linear(src.get(e + "patch_embeddings.projection.weight", {H, 3, P, P}),
                   src.get(e + "patch_embeddings.projection.bias", {H}), c.hidden,
                   static_cast<int>(3 * P * P));
    for (int i = 0; i < c.layers; ++i) {
      layers.push_back(detail::load_encoder_layer(
          src, "vilt.encoder.layer." + std::to_string(i) + ".", detail::kHfVitLayerNames,
          {c.hidden, c.mlp, c.qkv_bias, PostOp::Gelu}));
    }
    ln_g = src.get("vilt.layernorm.weight", {H});
    ln_b = src.get("vilt.layernorm.bias", {H});
    pooler = Linear(src.get("vilt.pooler.dense.weight", {H, H}),
                    src.get("vilt.pooler.dense.bias", {H}), c.hidden, c.hidden);
    if (cfg.head == ViltHead::Rank) {
      head = Linear(src.get("rank_output.weight", {1, H}), src.get("rank_output.bias", {1}), 1,
                    c.hidden);
    } else {
      head = Linear(src.get("itm_score.fc.weight", {2, H}), src.get("itm_score.fc.bias", {2}), 2,
                    c.hidden);
    }
  }
};

ViltModel::ViltModel() : impl_(std::make_unique<Impl>()) {}
ViltModel::ViltModel(ViltModel&&) noexcept = default;
ViltModel& ViltModel::operator=(ViltModel&&) noexcept = default;
ViltModel::~ViltModel() = default;
const ViltConfig& ViltModel::config() const {
  return impl_->cfg;
}
const std::string& ViltModel::weights_id() const {
  return impl_->weights_id;
}

ViltModel ViltModel::load(const fs::path& dir) {
  ViltModel m;
  m.impl_->cfg = load_vilt_config(dir);
  const fs::path weights = detail::find_weights(dir);
  detail::CheckpointSource src(detail::open_weights(weights));
  if (src.has("rank_output.weight")) {
    m.impl_->cfg.head = ViltHead::Rank;
  } else if (src.has("itm_score.fc.weight")) {
    m.impl_->cfg.head = ViltHead::Itm;
  } else {
    throw InputError({weights.string(), 0, "rank_output.weight"},
                     "this ViLT checkpoint has neither a ranking head (rank_output, "
                     "ViltForImageAndTextRetrieval) nor an ITM head (itm_score.fc): it cannot "
                     "score image-text pairs");
  }
  m.impl_->build(src);
  m.impl_->weights_id = src.tensors().content_hash();
  return m;
}

ViltModel ViltModel::random(const ViltConfig& config, std::uint64_t seed) {
  ViltModel m;
  m.impl_->cfg = config;
  const char* head = config.head == ViltHead::Rank ? "rank_output" : "itm_score";
  detail::RandomSource src(seed, vilt_random_init,
                           [head](const std::string& name) { return name.rfind(head, 0) == 0; });
  m.impl_->build(src);
  m.impl_->weights_id = "random:" + std::to_string(seed);
  return m;
}

ViltImageEmbeds ViltModel::embed_image(const ViltImage& image) const {
  const ViltConfig& c = impl_->cfg;
  const int P = c.patch, H = c.hidden;
  ViltImageEmbeds e;
  e.grid_h = image.height / P;
  e.grid_w = image.width / P;
  if (e.grid_h < 1 || e.grid_w < 1) throw UsageError("image smaller than one ViLT patch");
  const std::size_t patches = static_cast<std::size_t>(e.grid_h) * e.grid_w;
  const std::size_t K = 3ull * P * P;
  std::vector<float> cols(patches * K);
  for (int gy = 0; gy < e.grid_h; ++gy) {
    for (int gx = 0; gx < e.grid_w; ++gx) {
      float* dst = &cols[(static_cast<std::size_t>(gy) * e.grid_w + gx) * K];
      for (int ch = 0; ch < 3; ++ch) {
        for (int ky = 0; ky < P; ++ky) {
          const float* src = &image.pixels[(static_cast<std::size_t>(ch) * image.height +
                                            static_cast<std::size_t>(gy) * P + ky) *
                                               image.width +
                                           static_cast<std::size_t>(gx) * P];
          std::copy_n(src, P, dst + (static_cast<std::size_t>(ch) * P + ky) * P);
        }
      }
    }
  }
  std::vector<float> x(patches * H);
  impl_->patch.forward(cols.data(), static_cast<int>(patches), x.data());
  // Position embeddings: the [g, g] grid interpolated bilinearly (align_corners=True) to the
  // patch grid, as torch.nn.functional.interpolate computes it.
  const int g = c.pos_grid();
  const std::vector<float>& pos = impl_->img_pos;  // [g * g + 1, H]
  auto axis = [](int in, int out, int o, int& i0, int& i1, float& l1) {
    const float scale = out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1) : 0.0f;
    const float src = scale * static_cast<float>(o);
    i0 = static_cast<int>(src);
    i1 = i0 + (i0 < in - 1 ? 1 : 0);
    l1 = src - static_cast<float>(i0);
  };
  e.tokens.assign((patches + 1) * H, 0.0f);
  const float* type1 = &impl_->modality[static_cast<std::size_t>(H)];
  for (int k = 0; k < H; ++k) {
    e.tokens[static_cast<std::size_t>(k)] =
        (impl_->cls[static_cast<std::size_t>(k)] + pos[static_cast<std::size_t>(k)]) + type1[k];
  }
  for (int oy = 0; oy < e.grid_h; ++oy) {
    int y0, y1;
    float ly;
    axis(g, e.grid_h, oy, y0, y1, ly);
    for (int ox = 0; ox < e.grid_w; ++ox) {
      int x0, x1;
      float lx;
      axis(g, e.grid_w, ox, x0, x1, lx);
      const std::size_t p = static_cast<std::size_t>(oy) * e.grid_w + ox;
      const float* v00 = &pos[(1 + static_cast<std::size_t>(y0) * g + x0) * H];
      const float* v01 = &pos[(1 + static_cast<std::size_t>(y0) * g + x1) * H];
      const float* v10 = &pos[(1 + static_cast<std::size_t>(y1) * g + x0) * H];
      const float* v11 = &pos[(1 + static_cast<std::size_t>(y1) * g + x1) * H];
      const float hy0 = 1.0f - ly, wx0 = 1.0f - lx;
      float* out = &e.tokens[(1 + p) * H];
      const float* patch = &x[p * H];
      for (int k = 0; k < H; ++k) {
        const float pe = hy0 * (wx0 * v00[k] + lx * v01[k]) + ly * (wx0 * v10[k] + lx * v11[k]);
        out[k] = (patch[k] + pe) + type1[k];
      }
    }
  }
  return e;
}

ViltOutput ViltModel::score(const std::vector<std::vector<int>>& ids,
                            const std::vector<const ViltImageEmbeds*>& images,
                            bool keep_states) const {
  const Impl& m = *impl_;
  const ViltConfig& c = m.cfg;
  const int H = c.hidden;
  if (ids.size() != images.size()) throw UsageError("ViLT: as many captions as images needed");
  const std::size_t n = ids.size();
  ViltOutput out;
  if (n == 0) return out;
  std::vector<std::size_t> offsets(n), lengths(n);
  std::size_t rows = 0;
  for (std::size_t p = 0; p < n; ++p) {
    if (ids[p].empty() || ids[p].size() > static_cast<std::size_t>(c.max_text_len)) {
      throw UsageError("ViLT: a caption of " + std::to_string(ids[p].size()) + " tokens (1 to " +
                       std::to_string(c.max_text_len) + " allowed)");
    }
    offsets[p] = rows;
    lengths[p] = ids[p].size() + static_cast<std::size_t>(images[p]->count());
    rows += lengths[p];
  }
  const std::size_t padded = (rows + kRowQuantum - 1) / kRowQuantum * kRowQuantum;
  std::vector<float> x(padded * H, 0.0f);
  // Text: LayerNorm(word + token type 0 + position), then + modality type 0.
  std::vector<float> pre(static_cast<std::size_t>(H));
  for (std::size_t p = 0; p < n; ++p) {
    for (std::size_t t = 0; t < ids[p].size(); ++t) {
      const int id = ids[p][t];
      if (id < 0 || id >= c.vocab_size) throw UsageError("ViLT: token id out of range");
      const float* w = &m.word[static_cast<std::size_t>(id) * H];
      const float* pe = &m.text_pos[t * H];
      for (int k = 0; k < H; ++k)
        pre[static_cast<std::size_t>(k)] =
            (w[k] + m.text_type[static_cast<std::size_t>(k)]) + pe[k];
      float* row = &x[(offsets[p] + t) * H];
      layer_norm(pre.data(), 1, H, m.text_ln_g, m.text_ln_b, c.eps, row);
      for (int k = 0; k < H; ++k)
        row[k] += m.modality[static_cast<std::size_t>(k)];
    }
    std::copy(images[p]->tokens.begin(), images[p]->tokens.end(),
              x.begin() + static_cast<std::ptrdiff_t>((offsets[p] + ids[p].size()) * H));
  }
  detail::run_encoder_layers(m.layers, x, {rows, offsets, lengths, c.heads, c.eps});
  std::vector<float> normed(padded * H, 0.0f);
  // Final LayerNorm (every row when the states are kept, else the first of each pair), pooler
  // (tanh of a dense layer on the text [CLS] state), head.
  std::vector<float> first(n * H), pooled(n * H);
  if (keep_states) {
    layer_norm(x.data(), rows, H, m.ln_g, m.ln_b, c.eps, normed.data());
    for (std::size_t p = 0; p < n; ++p) {
      out.states.emplace_back(
          normed.begin() + static_cast<std::ptrdiff_t>(offsets[p] * H),
          normed.begin() + static_cast<std::ptrdiff_t>((offsets[p] + lengths[p]) * H));
      std::copy_n(&normed[offsets[p] * H], H, &first[p * H]);
    }
  } else {
    for (std::size_t p = 0; p < n; ++p)
      layer_norm(&x[offsets[p] * H], 1, H, m.ln_g, m.ln_b, c.eps, &first[p * H]);
  }
  m.pooler.forward(first.data(), static_cast<int>(n), pooled.data());
  for (auto& v : pooled)
    v = std::tanh(v);
  const int outs = m.head.n();
  out.logits.resize(n * static_cast<std::size_t>(outs));
  m.head.forward(pooled.data(), static_cast<int>(n), out.logits.data());
  for (std::size_t p = 0; p < n; ++p) {
    if (c.head == ViltHead::Rank) {
      out.scores.push_back(out.logits[p]);
    } else {
      // softmax over (no match, match), the probability of "match".
      const double a = out.logits[p * 2], b = out.logits[p * 2 + 1];
      out.scores.push_back(1.0 / (1.0 + std::exp(a - b)));
    }
  }
  return out;
}

}  // namespace winokit
