#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "encoders.hpp"
#include "gemm.hpp"
#include "resnet.hpp"
#include "tensor_source.hpp"
#include "winokit/core/error.hpp"
#include "winokit/core/rng.hpp"
#include "winokit/io/safetensors.hpp"
#include "winokit/model/clip_model.hpp"

namespace winokit {

namespace fs = std::filesystem;
using detail::layer_norm;
using detail::Linear;
using detail::PostOp;
using detail::softmax_inplace;
using detail::TensorSource;

namespace {

// ---- the weight table: one row per role, with its Hugging Face and OpenCLIP names ----
// "{T}" is the tower prefix, "{i}" the block index. Shapes are checked by the loader.
struct BlockNames {
  const char* ln1_w;
  const char* ln1_b;
  const char* ln2_w;
  const char* ln2_b;
  const char* out_w;
  const char* out_b;
  const char* fc1_w;
  const char* fc1_b;
  const char* fc2_w;
  const char* fc2_b;
};
constexpr BlockNames kHfBlock = {"{T}.encoder.layers.{i}.layer_norm1.weight",
                                 "{T}.encoder.layers.{i}.layer_norm1.bias",
                                 "{T}.encoder.layers.{i}.layer_norm2.weight",
                                 "{T}.encoder.layers.{i}.layer_norm2.bias",
                                 "{T}.encoder.layers.{i}.self_attn.out_proj.weight",
                                 "{T}.encoder.layers.{i}.self_attn.out_proj.bias",
                                 "{T}.encoder.layers.{i}.mlp.fc1.weight",
                                 "{T}.encoder.layers.{i}.mlp.fc1.bias",
                                 "{T}.encoder.layers.{i}.mlp.fc2.weight",
                                 "{T}.encoder.layers.{i}.mlp.fc2.bias"};
constexpr BlockNames kOpenClipBlock = {
    "{T}resblocks.{i}.ln_1.weight",          "{T}resblocks.{i}.ln_1.bias",
    "{T}resblocks.{i}.ln_2.weight",          "{T}resblocks.{i}.ln_2.bias",
    "{T}resblocks.{i}.attn.out_proj.weight", "{T}resblocks.{i}.attn.out_proj.bias",
    "{T}resblocks.{i}.mlp.c_fc.weight",      "{T}resblocks.{i}.mlp.c_fc.bias",
    "{T}resblocks.{i}.mlp.c_proj.weight",    "{T}resblocks.{i}.mlp.c_proj.bias"};

struct TowerNames {
  const char* prefix;
  const char* pos;
  const char* ln_final_w;  // ln_post (vision) or ln_final (text)
  const char* ln_final_b;
  const char* proj;
  bool proj_transposed;  // stored [width, embed] instead of [embed, width]
};
constexpr TowerNames kHfVision = {"vision_model",
                                  "vision_model.embeddings.position_embedding.weight",
                                  "vision_model.post_layernorm.weight",
                                  "vision_model.post_layernorm.bias",
                                  "visual_projection.weight",
                                  false};
constexpr TowerNames kHfText = {"text_model",
                                "text_model.embeddings.position_embedding.weight",
                                "text_model.final_layer_norm.weight",
                                "text_model.final_layer_norm.bias",
                                "text_projection.weight",
                                false};
constexpr TowerNames kOcVision = {"visual.transformer.",   "visual.positional_embedding",
                                  "visual.ln_post.weight", "visual.ln_post.bias",
                                  "visual.proj",           true};
constexpr TowerNames kOcText = {"transformer.",  "positional_embedding", "ln_final.weight",
                                "ln_final.bias", "text_projection",      true};

std::string expand(std::string pattern, const std::string& tower, int layer) {
  auto replace = [&](const std::string& key, const std::string& value) {
    for (auto pos = pattern.find(key); pos != std::string::npos; pos = pattern.find(key)) {
      pattern.replace(pos, key.size(), value);
    }
  };
  replace("{T}", tower);
  replace("{i}", std::to_string(layer));
  return pattern;
}

std::vector<float> transpose(const std::vector<float>& m, int rows, int cols) {
  std::vector<float> t(m.size());
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      t[static_cast<std::size_t>(c) * rows + r] = m[static_cast<std::size_t>(r) * cols + c];
    }
  }
  return t;
}

class CheckpointSource final : public detail::TensorSource {
 public:
  explicit CheckpointSource(SafeTensors st) : st_(std::move(st)) {}
  std::vector<float> get(const std::string& name, const std::vector<std::int64_t>& shape) override {
    return st_.to_float(name, shape);
  }
  const SafeTensors& tensors() const { return st_; }

 private:
  SafeTensors st_;
};

class RandomSource final : public detail::TensorSource {
 public:
  explicit RandomSource(std::uint64_t seed) : seed_(seed) {}
  std::vector<float> get(const std::string& name, const std::vector<std::int64_t>& shape) override {
    std::int64_t n = 1;
    for (auto d : shape)
      n *= d;
    Rng rng(derive_seed(seed_, name));
    std::vector<float> v(static_cast<std::size_t>(n));
    const bool norm_gain =
        name.find("norm") != std::string::npos || name.find("ln_") != std::string::npos;
    const bool bias = name.size() >= 4 && name.compare(name.size() - 4, 4, "bias") == 0;
    // Reference-like scales: small weights, unit LayerNorm gains, small biases. Uniform values
    // with the variance of N(0, scale^2): as good as normal ones here, and much faster to draw.
    const double scale = bias ? 0.01 : shape.size() >= 2 ? 0.02 : 0.1;
    const double half_width = std::sqrt(3.0) * scale;
    const double offset = norm_gain && !bias ? 1.0 : 0.0;
    for (auto& x : v)
      x = static_cast<float>(offset + half_width * (2.0 * rng.uniform() - 1.0));
    if (name == "logit_scale") v.assign(v.size(), std::log(1.0f / 0.07f));
    return v;
  }

 private:
  std::uint64_t seed_;
};

struct Block {
  std::vector<float> ln1_g, ln1_b, ln2_g, ln2_b;
  Linear qkv, out, fc1, fc2;
};

struct Tower {
  TowerConfig cfg;
  std::vector<float> pos;  // [tokens, width]
  std::vector<Block> blocks;
  std::vector<float> ln_final_g, ln_final_b;
  Linear proj;  // [embed, width], no bias
};

std::vector<Block> load_blocks(TensorSource& src, CheckpointLayout layout, const std::string& tower,
                               const TowerConfig& c, bool hf_separate_qkv) {
  const BlockNames& names = layout == CheckpointLayout::HuggingFace ? kHfBlock : kOpenClipBlock;
  const std::int64_t w = c.width, m = c.mlp;
  const PostOp act = c.act == Activation::QuickGelu ? PostOp::QuickGelu : PostOp::Gelu;
  std::vector<Block> blocks;
  for (int i = 0; i < c.layers; ++i) {
    auto n = [&](const char* pattern) { return expand(pattern, tower, i); };
    Block b;
    b.ln1_g = src.get(n(names.ln1_w), {w});
    b.ln1_b = src.get(n(names.ln1_b), {w});
    b.ln2_g = src.get(n(names.ln2_w), {w});
    b.ln2_b = src.get(n(names.ln2_b), {w});
    std::vector<float> qkv_w, qkv_b;
    if (hf_separate_qkv) {
      for (const char* part : {"q_proj", "k_proj", "v_proj"}) {
        auto pw = src.get(
            n(("{T}.encoder.layers.{i}.self_attn." + std::string(part) + ".weight").c_str()),
            {w, w});
        auto pb = src.get(
            n(("{T}.encoder.layers.{i}.self_attn." + std::string(part) + ".bias").c_str()), {w});
        qkv_w.insert(qkv_w.end(), pw.begin(), pw.end());
        qkv_b.insert(qkv_b.end(), pb.begin(), pb.end());
      }
    } else {
      qkv_w = src.get(n("{T}resblocks.{i}.attn.in_proj_weight"), {3 * w, w});
      qkv_b = src.get(n("{T}resblocks.{i}.attn.in_proj_bias"), {3 * w});
    }
    b.qkv = Linear(qkv_w, qkv_b, static_cast<int>(3 * w), static_cast<int>(w));
    b.out = Linear(src.get(n(names.out_w), {w, w}), src.get(n(names.out_b), {w}),
                   static_cast<int>(w), static_cast<int>(w), PostOp::None, /*accumulate=*/true);
    b.fc1 = Linear(src.get(n(names.fc1_w), {m, w}), src.get(n(names.fc1_b), {m}),
                   static_cast<int>(m), static_cast<int>(w), act);
    b.fc2 = Linear(src.get(n(names.fc2_w), {w, m}), src.get(n(names.fc2_b), {w}),
                   static_cast<int>(w), static_cast<int>(m), PostOp::None, /*accumulate=*/true);
    blocks.push_back(std::move(b));
  }
  return blocks;
}

Linear load_projection(TensorSource& src, const TowerNames& names, int width, int embed) {
  std::vector<float> p;
  if (names.proj_transposed) {
    p = transpose(src.get(names.proj, {width, embed}), width, embed);
  } else {
    p = src.get(names.proj, {embed, width});
  }
  return Linear(p, {}, embed, width);
}

// ---- row operations ----

// Multi-head attention over `seqs` sequences of `len` tokens; qkv: [seqs * len, 3 * width],
// out: [seqs * len, width]. Causal: token i sees tokens 0..i. Each (sequence, head) is computed
// by one thread in a fixed order, and a query's result involves only the keys it sees, so
// results do not depend on the thread count, the batch, or the padded length. Used for the text
// tower (short, causal, length set by the batch); the vision tower uses batched GEMMs.
void attention(const float* qkv, int seqs, int len, int width, int heads, bool causal, float* out) {
  const int d = width / heads;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  const std::size_t stride = 3 * static_cast<std::size_t>(width);
  const std::size_t n = static_cast<std::size_t>(len);
#pragma omp parallel
  {
    // kt: the head's keys transposed to [d, len], so that the scores of one query vectorise
    // across keys.
    std::vector<float> kt(static_cast<std::size_t>(d) * n), scores(n),
        acc(static_cast<std::size_t>(d));
#pragma omp for collapse(2) schedule(static)
    for (int s = 0; s < seqs; ++s) {
      for (int h = 0; h < heads; ++h) {
        const float* base = qkv + static_cast<std::size_t>(s) * n * stride;
        for (std::size_t j = 0; j < n; ++j) {
          const float* kj = base + j * stride + width + static_cast<std::size_t>(h) * d;
          for (int k = 0; k < d; ++k)
            kt[static_cast<std::size_t>(k) * n + j] = kj[k];
        }
        for (std::size_t i = 0; i < n; ++i) {
          const float* qi = base + i * stride + static_cast<std::size_t>(h) * d;
          const std::size_t count = causal ? i + 1 : n;
          std::fill(scores.begin(), scores.begin() + static_cast<std::ptrdiff_t>(count), 0.0f);
          for (int k = 0; k < d; ++k) {
            const float qk = qi[k] * scale;
            const float* row = &kt[static_cast<std::size_t>(k) * n];
            for (std::size_t j = 0; j < count; ++j)
              scores[j] += qk * row[j];
          }
          softmax_inplace(scores.data(), count);
          std::fill(acc.begin(), acc.end(), 0.0f);
          for (std::size_t j = 0; j < count; ++j) {
            const float p = scores[j];
            const float* vj = base + j * stride + 2 * static_cast<std::size_t>(width) +
                              static_cast<std::size_t>(h) * d;
            for (int k = 0; k < d; ++k)
              acc[static_cast<std::size_t>(k)] += p * vj[k];
          }
          std::copy(acc.begin(), acc.end(),
                    out + (static_cast<std::size_t>(s) * n + i) * width +
                        static_cast<std::size_t>(h) * d);
        }
      }
    }
  }
}

// The mean and the max over tokens 0..last[b] of each sequence b of x: [count * len, width], into
// level `level` of out.hidden_mean / out.hidden_max ([levels, count, width]). Sums are taken in
// double, token by token in order, so a sequence's result does not depend on its batch.
void pool_over_tokens(const float* x, int count, int len, int width, const std::vector<int>& last,
                      int level, TowerOutput& out) {
  const std::size_t w = static_cast<std::size_t>(width);
#pragma omp parallel for schedule(static)
  for (int b = 0; b < count; ++b) {
    const int tokens = last[static_cast<std::size_t>(b)] + 1;
    const float* first = x + static_cast<std::size_t>(b) * len * w;
    const std::size_t at = (static_cast<std::size_t>(level) * count + b) * w;
    float* mean = &out.hidden_mean[at];
    float* max = &out.hidden_max[at];
    std::vector<double> sum(first, first + w);
    std::copy(first, first + w, max);
    for (int t = 1; t < tokens; ++t) {
      const float* row = first + static_cast<std::size_t>(t) * w;
      for (std::size_t i = 0; i < w; ++i) {
        sum[i] += row[i];
        max[i] = std::max(max[i], row[i]);
      }
    }
    for (std::size_t i = 0; i < w; ++i)
      mean[i] = static_cast<float>(sum[i] / tokens);
  }
}

// Runs the blocks on x: [seqs * len, width]; `capture` is called after each block.
template <typename Capture>
void run_blocks(const Tower& t, std::vector<float>& x, int seqs, int len, bool causal,
                const detail::BatchedAttention* batched, int gemm_rows, Capture&& capture) {
  const int w = t.cfg.width;
  // x holds seqs * len real rows, then zero rows up to gemm_rows.
  const int rows = std::max(seqs * len, gemm_rows);
  x.resize(static_cast<std::size_t>(rows) * w, 0.0f);
  const std::size_t n = static_cast<std::size_t>(rows) * w;
  std::vector<float> normed(n), qkv(n * 3), attn(n),
      hidden(static_cast<std::size_t>(rows) * t.cfg.mlp);
  for (std::size_t l = 0; l < t.blocks.size(); ++l) {
    const Block& b = t.blocks[l];
    layer_norm(x.data(), rows, w, b.ln1_g, b.ln1_b, t.cfg.eps, normed.data());
    b.qkv.forward(normed.data(), rows, qkv.data());
    if (batched != nullptr) {
      batched->run(qkv.data(), seqs, len, w, t.cfg.heads, attn.data());
    } else {
      attention(qkv.data(), seqs, len, w, t.cfg.heads, causal, attn.data());
    }
    b.out.forward(attn.data(), rows, x.data());  // x += attention output (residual)
    layer_norm(x.data(), rows, w, b.ln2_g, b.ln2_b, t.cfg.eps, normed.data());
    b.fc1.forward(normed.data(), rows, hidden.data());
    b.fc2.forward(hidden.data(), rows, x.data());  // x += MLP output (residual)
    capture(static_cast<int>(l) + 1);
  }
}

}  // namespace

struct ClipModel::Impl {
  ClipConfig cfg;
  std::string weights_id;
  float logit_scale = 0;
  // The towers behind the interfaces: a ResNet or the ViT below for images, the transformer
  // below for text.
  std::unique_ptr<detail::ImageEncoder> image_encoder;
  std::unique_ptr<detail::TextEncoder> text_encoder;
  // ViT image tower
  Tower vision;
  Linear patch;  // [width, 3 * patch * patch], no bias
  detail::BatchedAttention vision_attention;
  std::vector<float> class_emb, ln_pre_g, ln_pre_b;
  // text
  Tower text;
  std::vector<float> token_emb;  // [vocab, width]

  void load(TensorSource& src) {
    const bool hf = cfg.layout == CheckpointLayout::HuggingFace;
    const auto& vn = hf ? kHfVision : kOcVision;
    const auto& tn = hf ? kHfText : kOcText;
    const std::int64_t vw = cfg.vision.width, tw = cfg.text.width, p = cfg.patch;
    vision.cfg = cfg.vision;
    text.cfg = cfg.text;
    if (cfg.vision_arch == VisionArch::ResNet) {
      image_encoder = std::make_unique<detail::ResNetTower>(src, cfg);
    } else {
      load_vit(src, hf, vn, vw, p);
      image_encoder = std::make_unique<VitEncoder>(*this);
    }
    load_text(src, hf, tn, tw);
    text_encoder = std::make_unique<TransformerTextEncoder>(*this);
    // logit_scale is stored as a scalar [] or [1].
    std::vector<float> ls;
    try {
      ls = src.get("logit_scale", {1});
    } catch (const InputError&) {
      ls = src.get("logit_scale", {});
    }
    if (ls.size() != 1) throw InputError({"", 0, "logit_scale"}, "expected one value");
    logit_scale = ls[0];
  }

  void load_vit(TensorSource& src, bool hf, const TowerNames& vn, std::int64_t vw, std::int64_t p) {
    const std::int64_t vt = cfg.vision_tokens();
    patch = Linear(
        src.get(hf ? "vision_model.embeddings.patch_embedding.weight" : "visual.conv1.weight",
                {vw, 3, p, p}),
        {}, static_cast<int>(vw), static_cast<int>(3 * p * p));
    class_emb =
        src.get(hf ? "vision_model.embeddings.class_embedding" : "visual.class_embedding", {vw});
    vision.pos = src.get(vn.pos, {vt, vw});
    ln_pre_g = src.get(hf ? "vision_model.pre_layrnorm.weight" : "visual.ln_pre.weight", {vw});
    ln_pre_b = src.get(hf ? "vision_model.pre_layrnorm.bias" : "visual.ln_pre.bias", {vw});
    vision.blocks = load_blocks(src, cfg.layout, vn.prefix, cfg.vision, hf);
    vision.ln_final_g = src.get(vn.ln_final_w, {vw});
    vision.ln_final_b = src.get(vn.ln_final_b, {vw});
    vision.proj = load_projection(src, vn, cfg.vision.width, cfg.embed_dim);
  }

  void load_text(TensorSource& src, bool hf, const TowerNames& tn, std::int64_t tw) {
    token_emb =
        src.get(hf ? "text_model.embeddings.token_embedding.weight" : "token_embedding.weight",
                {cfg.vocab_size, tw});
    text.pos = src.get(tn.pos, {cfg.context_length, tw});
    text.blocks = load_blocks(src, cfg.layout, tn.prefix, cfg.text, hf);
    text.ln_final_g = src.get(tn.ln_final_w, {tw});
    text.ln_final_b = src.get(tn.ln_final_b, {tw});
    text.proj = load_projection(src, tn, cfg.text.width, cfg.embed_dim);
  }

  // Final norm + projection of selected rows: rows[i] of x -> out[i].
  void pool(const Tower& t, const std::vector<float>& x, const std::vector<int>& rows,
            std::vector<float>& out) const {
    const int w = t.cfg.width;
    std::vector<float> picked(rows.size() * static_cast<std::size_t>(w)), normed(picked.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
      std::memcpy(&picked[i * w], &x[static_cast<std::size_t>(rows[i]) * w], sizeof(float) * w);
    }
    layer_norm(picked.data(), static_cast<int>(rows.size()), w, t.ln_final_g, t.ln_final_b,
               t.cfg.eps, normed.data());
    out.assign(rows.size() * static_cast<std::size_t>(cfg.embed_dim), 0.f);
    t.proj.forward(normed.data(), static_cast<int>(rows.size()), out.data());
  }

  TowerOutput encode_vit(const float* pixels, int count, const EncodeOptions& o) const;
  TowerOutput encode_text(const std::vector<std::vector<int>>& ids, const EncodeOptions& o) const;

  // The ViT and the text transformer as implementations of the tower interfaces.
  struct VitEncoder final : detail::ImageEncoder {
    explicit VitEncoder(const Impl& m) : model(m) {}
    TowerOutput encode(const float* pixels, int count, const EncodeOptions& o) const override {
      return model.encode_vit(pixels, count, o);
    }
    const Impl& model;
  };
  struct TransformerTextEncoder final : detail::TextEncoder {
    explicit TransformerTextEncoder(const Impl& m) : model(m) {}
    TowerOutput encode(const std::vector<std::vector<int>>& ids,
                       const EncodeOptions& o) const override {
      return model.encode_text(ids, o);
    }
    const Impl& model;
  };
};

ClipModel::ClipModel() : impl_(std::make_unique<Impl>()) {}
ClipModel::ClipModel(ClipModel&&) noexcept = default;
ClipModel& ClipModel::operator=(ClipModel&&) noexcept = default;
ClipModel::~ClipModel() = default;

const ClipConfig& ClipModel::config() const {
  return impl_->cfg;
}
const std::string& ClipModel::weights_id() const {
  return impl_->weights_id;
}
float ClipModel::logit_scale_exp() const {
  return std::exp(impl_->logit_scale);
}

ClipModel ClipModel::load(const fs::path& dir) {
  ClipModel model;
  if (fs::is_regular_file(dir)) {
    // OpenAI's TorchScript archive (RN50.pt, ViT-B-32.pt) or a torch.save state dict in
    // openai/CLIP's names: the architecture comes from the tensors' shapes.
    CheckpointSource src(SafeTensors::open_torch(dir));
    std::map<std::string, std::vector<std::int64_t>> shapes;
    for (const auto& [name, t] : src.tensors().tensors())
      shapes.emplace(name, t.shape);
    model.impl_->cfg = infer_openai_config(shapes, dir.string());
    model.impl_->weights_id = src.tensors().content_hash();
    model.impl_->load(src);
    return model;
  }
  model.impl_->cfg = load_clip_config(dir);
  // Safetensors first; a PyTorch zip checkpoint through the restricted unpickler otherwise.
  const bool openclip = model.impl_->cfg.layout == CheckpointLayout::OpenClip;
  const std::vector<fs::path> candidates =
      openclip
          ? std::vector<fs::path>{dir / "open_clip_model.safetensors",
                                  dir / "open_clip_pytorch_model.bin"}
          : std::vector<fs::path>{dir / "model.safetensors", dir / "model.safetensors.index.json",
                                  dir / "pytorch_model.bin"};
  auto found = std::find_if(candidates.begin(), candidates.end(),
                            [](const fs::path& p) { return fs::is_regular_file(p); });
  if (found == candidates.end()) {
    throw IoError((dir / candidates.front().filename()).string() + ": not found",
                  "a CLIP checkpoint folder holds its weights as safetensors or a PyTorch .bin");
  }
  CheckpointSource src(found->extension() == ".bin" ? SafeTensors::open_torch(*found)
                                                    : SafeTensors::open(*found));
  model.impl_->weights_id = src.tensors().content_hash();
  model.impl_->load(src);
  return model;
}

ClipModel ClipModel::random(const ClipConfig& config, std::uint64_t seed) {
  ClipModel model;
  model.impl_->cfg = config;
  model.impl_->cfg.layout = CheckpointLayout::HuggingFace;
  model.impl_->weights_id = "random:" + std::to_string(seed);
  RandomSource src(seed);
  model.impl_->load(src);
  return model;
}

TowerOutput ClipModel::encode_images(const float* pixels, int count, const EncodeOptions& o) const {
  return impl_->image_encoder->encode(pixels, count, o);
}

TowerOutput ClipModel::encode_texts(const std::vector<std::vector<int>>& ids,
                                    const EncodeOptions& o) const {
  return impl_->text_encoder->encode(ids, o);
}

TowerOutput ClipModel::Impl::encode_vit(const float* pixels, int count,
                                        const EncodeOptions& o) const {
  const Impl& m = *this;
  const ClipConfig& c = m.cfg;
  TowerOutput out;
  out.count = count;
  if (count == 0) return out;
  const int w = c.vision.width, p = c.patch, grid = c.image_size / p, patches = grid * grid;
  const int tokens = patches + 1, k = 3 * p * p, side = c.image_size;
  // im2col: one row per patch, columns in (channel, y, x) order like the conv weight.
  std::vector<float> cols(static_cast<std::size_t>(count) * patches * k);
#pragma omp parallel for collapse(2) schedule(static)
  for (int b = 0; b < count; ++b) {
    for (int pi = 0; pi < patches; ++pi) {
      const int py = pi / grid, px = pi % grid;
      float* row = &cols[(static_cast<std::size_t>(b) * patches + pi) * k];
      for (int ch = 0; ch < 3; ++ch) {
        for (int y = 0; y < p; ++y) {
          const float* src =
              pixels + ((static_cast<std::size_t>(b) * 3 + ch) * side + py * p + y) * side + px * p;
          std::memcpy(row + (ch * p + y) * p, src, sizeof(float) * p);
        }
      }
    }
  }
  std::vector<float> embedded(static_cast<std::size_t>(count) * patches * w);
  m.patch.forward(cols.data(), count * patches, embedded.data());
  cols = {};
  std::vector<float> x(static_cast<std::size_t>(count) * tokens * w);
#pragma omp parallel for collapse(2) schedule(static)
  for (int b = 0; b < count; ++b) {
    for (int t = 0; t < tokens; ++t) {
      float* dst = &x[(static_cast<std::size_t>(b) * tokens + t) * w];
      const float* pos = &m.vision.pos[static_cast<std::size_t>(t) * w];
      const float* src = t == 0 ? m.class_emb.data()
                                : &embedded[(static_cast<std::size_t>(b) * patches + t - 1) * w];
      for (int i = 0; i < w; ++i)
        dst[i] = src[i] + pos[i];
    }
  }
  embedded = {};
  std::vector<float> normed(x.size());
  layer_norm(x.data(), count * tokens, w, m.ln_pre_g, m.ln_pre_b, c.vision.eps, normed.data());
  x.swap(normed);
  normed = {};
  const int layers = c.vision.layers;
  const std::size_t state_floats = static_cast<std::size_t>(layers + 1) * count * w;
  if (o.hidden_states) out.hidden.assign(state_floats, 0.f);
  if (o.pooled_states) {
    out.hidden_mean.assign(state_floats, 0.f);
    out.hidden_max.assign(state_floats, 0.f);
  }
  // Mean@l / Max@l pool over every token, the class token included.
  const std::vector<int> last_token(static_cast<std::size_t>(count), tokens - 1);
  auto capture = [&](int level) {
    if (o.pooled_states) pool_over_tokens(x.data(), count, tokens, w, last_token, level, out);
    if (!o.hidden_states) return;
    for (int b = 0; b < count; ++b) {
      std::memcpy(&out.hidden[(static_cast<std::size_t>(level) * count + b) * w],
                  &x[static_cast<std::size_t>(b) * tokens * w], sizeof(float) * w);
    }
  };
  capture(0);
  run_blocks(m.vision, x, count, tokens, /*causal=*/false, &m.vision_attention, o.gemm_rows,
             capture);
  std::vector<int> cls(static_cast<std::size_t>(count));
  for (int b = 0; b < count; ++b)
    cls[static_cast<std::size_t>(b)] = b * tokens;
  m.pool(m.vision, x, cls, out.embeds);
  if (o.token_states) {
    std::vector<int> all(static_cast<std::size_t>(count) * tokens);
    for (std::size_t i = 0; i < all.size(); ++i)
      all[i] = static_cast<int>(i);
    m.pool(m.vision, x, all, out.tokens);
    out.token_count = tokens;
  }
  return out;
}

TowerOutput ClipModel::Impl::encode_text(const std::vector<std::vector<int>>& ids,
                                         const EncodeOptions& o) const {
  const Impl& m = *this;
  const ClipConfig& c = m.cfg;
  TowerOutput out;
  const int count = static_cast<int>(ids.size());
  out.count = count;
  if (count == 0) return out;
  const int w = c.text.width;
  // End-of-text pooling at the first highest id (openai/CLIP: argmax). The tower runs only up
  // to the longest such position in the batch: with the causal mask, later positions cannot
  // change it.
  std::vector<int> eot(static_cast<std::size_t>(count));
  int len = 1;
  for (int b = 0; b < count; ++b) {
    const auto& seq = ids[static_cast<std::size_t>(b)];
    if (seq.empty() || static_cast<int>(seq.size()) > c.context_length) {
      throw UsageError("token sequence " + std::to_string(b) + " has length " +
                       std::to_string(seq.size()) + " (1 to " + std::to_string(c.context_length) +
                       " allowed)");
    }
    eot[static_cast<std::size_t>(b)] =
        static_cast<int>(std::max_element(seq.begin(), seq.end()) - seq.begin());
    len = std::max(len, eot[static_cast<std::size_t>(b)] + 1);
  }
  if (o.full_context) len = c.context_length;
  std::vector<float> x(static_cast<std::size_t>(count) * len * w, 0.f);
  for (int b = 0; b < count; ++b) {
    const auto& seq = ids[static_cast<std::size_t>(b)];
    for (int t = 0; t < len; ++t) {
      const int id = t < static_cast<int>(seq.size()) ? seq[static_cast<std::size_t>(t)] : 0;
      if (id < 0 || id >= c.vocab_size) {
        throw UsageError("token id " + std::to_string(id) + " outside the vocabulary");
      }
      float* dst = &x[(static_cast<std::size_t>(b) * len + t) * w];
      const float* tok = &m.token_emb[static_cast<std::size_t>(id) * w];
      const float* pos = &m.text.pos[static_cast<std::size_t>(t) * w];
      for (int i = 0; i < w; ++i)
        dst[i] = tok[i] + pos[i];
    }
  }
  const int layers = c.text.layers;
  const std::size_t state_floats = static_cast<std::size_t>(layers + 1) * count * w;
  if (o.hidden_states) out.hidden.assign(state_floats, 0.f);
  if (o.pooled_states) {
    out.hidden_mean.assign(state_floats, 0.f);
    out.hidden_max.assign(state_floats, 0.f);
  }
  auto capture = [&](int level) {
    // Mean@l / Max@l pool over the real tokens, start to end-of-text; never the padding.
    if (o.pooled_states) pool_over_tokens(x.data(), count, len, w, eot, level, out);
    if (!o.hidden_states) return;
    for (int b = 0; b < count; ++b) {
      std::memcpy(&out.hidden[(static_cast<std::size_t>(level) * count + b) * w],
                  &x[(static_cast<std::size_t>(b) * len + eot[static_cast<std::size_t>(b)]) * w],
                  sizeof(float) * w);
    }
  };
  capture(0);
  run_blocks(m.text, x, count, len, /*causal=*/true, nullptr, o.gemm_rows, capture);
  std::vector<int> rows(static_cast<std::size_t>(count));
  for (int b = 0; b < count; ++b)
    rows[static_cast<std::size_t>(b)] = b * len + eot[static_cast<std::size_t>(b)];
  m.pool(m.text, x, rows, out.embeds);
  if (o.token_states) {
    std::vector<int> all(static_cast<std::size_t>(count) * len);
    for (std::size_t i = 0; i < all.size(); ++i)
      all[i] = static_cast<int>(i);
    m.pool(m.text, x, all, out.tokens);
    out.token_count = len;
  }
  return out;
}

}  // namespace winokit
