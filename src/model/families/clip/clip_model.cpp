#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <exception>
#include <functional>
#include <mutex>
#include <span>

#include "model/families/clip/clip_model.hpp"
#include "model/families/clip/encoders.hpp"
#include "model/families/clip/resnet.hpp"
#include "model/kernels/gemm.hpp"
#include "model/kernels/ops.hpp"
#include "model/kernels/parallel.hpp"
#include "model/layers/transformer.hpp"
#include "model/runtime/checkpoint.hpp"
#include "winokit/core/error.hpp"
#include "winokit/core/rng.hpp"
#include "winokit/io/safetensors.hpp"
#include "winokit/model/compute.hpp"

namespace winokit {

namespace fs = std::filesystem;
using detail::layer_norm;
using detail::Linear;
using detail::PostOp;
using detail::softmax_inplace;
using detail::TensorSource;

namespace {

// ---- tensor names: one table per checkpoint layout ----
// Each table maps a tensor's role (and, for the transformer blocks, its layer) to its name in
// that layout, as llama.cpp's tensor-name tables do: the loader asks for roles, never for names,
// so adding a layout is adding a table. Shapes are the loader's (tensor_spec below), checked
// against the file. A role a layout lacks is absent from its table: Hugging Face stores Q, K and
// V apart, OpenCLIP as one in_proj; the loader uses whichever the table has.
enum class TowerKind { Vision, Text };
enum class Role {
  // whole-tower tensors
  PatchEmbed,     // ViT only: the patch convolution [width, 3, patch, patch]
  ClassEmbed,     // ViT only
  PreNormWeight,  // ViT only: ln_pre
  PreNormBias,
  TokenEmbed,  // text only
  Position,
  FinalNormWeight,  // ln_post (vision) or ln_final (text)
  FinalNormBias,
  Projection,
  // per transformer block: "{T}" is the tower's block prefix, "{i}" the block index
  Norm1Weight,
  Norm1Bias,
  Norm2Weight,
  Norm2Bias,
  QkvWeight,  // fused Q, K, V
  QkvBias,
  QWeight,  // separate Q, K, V
  QBias,
  KWeight,
  KBias,
  VWeight,
  VBias,
  OutWeight,
  OutBias,
  Fc1Weight,
  Fc1Bias,
  Fc2Weight,
  Fc2Bias,
};

struct TowerName {
  TowerKind tower;
  Role role;
  const char* name;
};
struct BlockName {
  Role role;
  const char* pattern;
};

struct LayoutNames {
  CheckpointLayout layout;
  const char* vision_blocks;  // "{T}" in the vision tower's block names
  const char* text_blocks;
  bool projection_transposed;  // projections stored [width, embed] instead of [embed, width]
  std::span<const TowerName> towers;
  std::span<const BlockName> blocks;
};

constexpr TowerName kHfTowerNames[] = {
    {TowerKind::Vision, Role::PatchEmbed, "vision_model.embeddings.patch_embedding.weight"},
    {TowerKind::Vision, Role::ClassEmbed, "vision_model.embeddings.class_embedding"},
    {TowerKind::Vision, Role::Position, "vision_model.embeddings.position_embedding.weight"},
    {TowerKind::Vision, Role::PreNormWeight, "vision_model.pre_layrnorm.weight"},
    {TowerKind::Vision, Role::PreNormBias, "vision_model.pre_layrnorm.bias"},
    {TowerKind::Vision, Role::FinalNormWeight, "vision_model.post_layernorm.weight"},
    {TowerKind::Vision, Role::FinalNormBias, "vision_model.post_layernorm.bias"},
    {TowerKind::Vision, Role::Projection, "visual_projection.weight"},
    {TowerKind::Text, Role::TokenEmbed, "text_model.embeddings.token_embedding.weight"},
    {TowerKind::Text, Role::Position, "text_model.embeddings.position_embedding.weight"},
    {TowerKind::Text, Role::FinalNormWeight, "text_model.final_layer_norm.weight"},
    {TowerKind::Text, Role::FinalNormBias, "text_model.final_layer_norm.bias"},
    {TowerKind::Text, Role::Projection, "text_projection.weight"},
};
constexpr BlockName kHfBlockNames[] = {
    {Role::Norm1Weight, "{T}.encoder.layers.{i}.layer_norm1.weight"},
    {Role::Norm1Bias, "{T}.encoder.layers.{i}.layer_norm1.bias"},
    {Role::Norm2Weight, "{T}.encoder.layers.{i}.layer_norm2.weight"},
    {Role::Norm2Bias, "{T}.encoder.layers.{i}.layer_norm2.bias"},
    {Role::QWeight, "{T}.encoder.layers.{i}.self_attn.q_proj.weight"},
    {Role::QBias, "{T}.encoder.layers.{i}.self_attn.q_proj.bias"},
    {Role::KWeight, "{T}.encoder.layers.{i}.self_attn.k_proj.weight"},
    {Role::KBias, "{T}.encoder.layers.{i}.self_attn.k_proj.bias"},
    {Role::VWeight, "{T}.encoder.layers.{i}.self_attn.v_proj.weight"},
    {Role::VBias, "{T}.encoder.layers.{i}.self_attn.v_proj.bias"},
    {Role::OutWeight, "{T}.encoder.layers.{i}.self_attn.out_proj.weight"},
    {Role::OutBias, "{T}.encoder.layers.{i}.self_attn.out_proj.bias"},
    {Role::Fc1Weight, "{T}.encoder.layers.{i}.mlp.fc1.weight"},
    {Role::Fc1Bias, "{T}.encoder.layers.{i}.mlp.fc1.bias"},
    {Role::Fc2Weight, "{T}.encoder.layers.{i}.mlp.fc2.weight"},
    {Role::Fc2Bias, "{T}.encoder.layers.{i}.mlp.fc2.bias"},
};

// OpenCLIP folders and OpenAI's own files (state dicts and TorchScript archives).
constexpr TowerName kOpenClipTowerNames[] = {
    {TowerKind::Vision, Role::PatchEmbed, "visual.conv1.weight"},
    {TowerKind::Vision, Role::ClassEmbed, "visual.class_embedding"},
    {TowerKind::Vision, Role::Position, "visual.positional_embedding"},
    {TowerKind::Vision, Role::PreNormWeight, "visual.ln_pre.weight"},
    {TowerKind::Vision, Role::PreNormBias, "visual.ln_pre.bias"},
    {TowerKind::Vision, Role::FinalNormWeight, "visual.ln_post.weight"},
    {TowerKind::Vision, Role::FinalNormBias, "visual.ln_post.bias"},
    {TowerKind::Vision, Role::Projection, "visual.proj"},
    {TowerKind::Text, Role::TokenEmbed, "token_embedding.weight"},
    {TowerKind::Text, Role::Position, "positional_embedding"},
    {TowerKind::Text, Role::FinalNormWeight, "ln_final.weight"},
    {TowerKind::Text, Role::FinalNormBias, "ln_final.bias"},
    {TowerKind::Text, Role::Projection, "text_projection"},
};
constexpr BlockName kOpenClipBlockNames[] = {
    {Role::Norm1Weight, "{T}resblocks.{i}.ln_1.weight"},
    {Role::Norm1Bias, "{T}resblocks.{i}.ln_1.bias"},
    {Role::Norm2Weight, "{T}resblocks.{i}.ln_2.weight"},
    {Role::Norm2Bias, "{T}resblocks.{i}.ln_2.bias"},
    {Role::QkvWeight, "{T}resblocks.{i}.attn.in_proj_weight"},
    {Role::QkvBias, "{T}resblocks.{i}.attn.in_proj_bias"},
    {Role::OutWeight, "{T}resblocks.{i}.attn.out_proj.weight"},
    {Role::OutBias, "{T}resblocks.{i}.attn.out_proj.bias"},
    {Role::Fc1Weight, "{T}resblocks.{i}.mlp.c_fc.weight"},
    {Role::Fc1Bias, "{T}resblocks.{i}.mlp.c_fc.bias"},
    {Role::Fc2Weight, "{T}resblocks.{i}.mlp.c_proj.weight"},
    {Role::Fc2Bias, "{T}resblocks.{i}.mlp.c_proj.bias"},
};

constexpr LayoutNames kLayouts[] = {
    {CheckpointLayout::HuggingFace, "vision_model", "text_model", false, kHfTowerNames,
     kHfBlockNames},
    {CheckpointLayout::OpenClip, "visual.transformer.", "transformer.", true, kOpenClipTowerNames,
     kOpenClipBlockNames},
};

const LayoutNames& layout_names(CheckpointLayout layout) {
  for (const auto& l : kLayouts) {
    if (l.layout == layout) return l;
  }
  throw Error(std::string("no tensor-name table for the ") + to_string(layout) + " layout");
}

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

// The name of a role in a layout (empty when the layout has no such tensor); `layer` only for
// block roles.
std::string tensor_name(const LayoutNames& names, TowerKind tower, Role role, int layer = -1) {
  if (layer < 0) {
    for (const auto& n : names.towers) {
      if (n.tower == tower && n.role == role) return n.name;
    }
    return {};
  }
  for (const auto& n : names.blocks) {
    if (n.role == role) {
      return expand(n.pattern, tower == TowerKind::Vision ? names.vision_blocks : names.text_blocks,
                    layer);
    }
  }
  return {};
}

bool has_role(const LayoutNames& names, Role role) {
  return std::any_of(names.blocks.begin(), names.blocks.end(),
                     [&](const BlockName& n) { return n.role == role; });
}

struct TensorSpec {
  std::string name;
  std::vector<std::int64_t> shape;
};

// A role's name and expected shape for a configuration: the one place shapes are stated.
TensorSpec tensor_spec(const ClipConfig& cfg, const LayoutNames& names, TowerKind tower, Role role,
                       int layer = -1) {
  const TowerConfig& t = tower == TowerKind::Vision ? cfg.vision : cfg.text;
  const std::int64_t w = t.width, m = t.mlp, p = cfg.patch, e = cfg.embed_dim;
  const std::int64_t tokens = tower == TowerKind::Vision ? cfg.vision_tokens() : cfg.context_length;
  std::vector<std::int64_t> shape;
  switch (role) {
    case Role::PatchEmbed:
      shape = {w, 3, p, p};
      break;
    case Role::TokenEmbed:
      shape = {cfg.vocab_size, w};
      break;
    case Role::Position:
      shape = {tokens, w};
      break;
    case Role::Projection:
      shape = names.projection_transposed ? std::vector<std::int64_t>{w, e}
                                          : std::vector<std::int64_t>{e, w};
      break;
    case Role::QkvWeight:
      shape = {3 * w, w};
      break;
    case Role::QkvBias:
      shape = {3 * w};
      break;
    case Role::QWeight:
    case Role::KWeight:
    case Role::VWeight:
    case Role::OutWeight:
      shape = {w, w};
      break;
    case Role::Fc1Weight:
      shape = {m, w};
      break;
    case Role::Fc1Bias:
      shape = {m};
      break;
    case Role::Fc2Weight:
      shape = {w, m};
      break;
    default:  // norms, biases of width w, the class embedding
      shape = {w};
      break;
  }
  std::string name = tensor_name(names, tower, role, layer);
  if (name.empty()) {
    throw Error(std::string("the ") + to_string(names.layout) +
                " layout names no tensor for this role");
  }
  return {std::move(name), std::move(shape)};
}

constexpr Role kBlockRoles[] = {
    Role::Norm1Weight, Role::Norm1Bias, Role::Norm2Weight, Role::Norm2Bias, Role::QkvWeight,
    Role::QkvBias,     Role::QWeight,   Role::QBias,       Role::KWeight,   Role::KBias,
    Role::VWeight,     Role::VBias,     Role::OutWeight,   Role::OutBias,   Role::Fc1Weight,
    Role::Fc1Bias,     Role::Fc2Weight, Role::Fc2Bias};

// Every tensor a tower reads, for the check at load time (the packing itself is deferred),
// handed to `check` one at a time: a config that claims a million layers fails at the first
// tensor the file lacks, in constant memory (a list of all the specs took 7.9 GB; issue 23).
void for_each_tower_spec(const ClipConfig& cfg, const LayoutNames& names, TowerKind tower,
                         const std::function<void(const TensorSpec&)>& check) {
  for (const auto& n : names.towers) {
    if (n.tower == tower) check(tensor_spec(cfg, names, tower, n.role));
  }
  const int layers = tower == TowerKind::Vision ? cfg.vision.layers : cfg.text.layers;
  for (int i = 0; i < layers; ++i) {
    for (Role role : kBlockRoles) {
      if (has_role(names, role)) check(tensor_spec(cfg, names, tower, role, i));
    }
  }
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

// Seeded weights at reference-like scales: small weights, unit LayerNorm gains, small biases
// (1-D tensors other than biases 0.1), and OpenAI's initial logit_scale, log(1 / 0.07).
detail::RandomInit clip_random_init(const std::string& name,
                                    const std::vector<std::int64_t>& shape) {
  if (name == "logit_scale") return {0.0, 0.0, std::log(1.0f / 0.07f)};
  const bool norm_gain =
      name.find("norm") != std::string::npos || name.find("ln_") != std::string::npos;
  const bool bias = name.size() >= 4 && name.compare(name.size() - 4, 4, "bias") == 0;
  return {norm_gain && !bias ? 1.0 : 0.0,
          bias                ? 0.01
          : shape.size() >= 2 ? 0.02
                              : 0.1,
          std::nullopt};
}

struct Tower {
  TowerConfig cfg;
  std::vector<float> pos;  // [tokens, width]
  std::vector<detail::EncoderLayer> blocks;
  std::vector<float> ln_final_g, ln_final_b;
  Linear proj;  // [embed, width], no bias
};

std::vector<float> get(TensorSource& src, const ClipConfig& cfg, const LayoutNames& names,
                       TowerKind tower, Role role, int layer = -1) {
  const TensorSpec spec = tensor_spec(cfg, names, tower, role, layer);
  return src.get(spec.name, spec.shape);
}

std::vector<detail::EncoderLayer> load_blocks(TensorSource& src, const ClipConfig& cfg,
                                              const LayoutNames& names, TowerKind tower) {
  const TowerConfig& c = tower == TowerKind::Vision ? cfg.vision : cfg.text;
  const int w = c.width, m = c.mlp;
  const PostOp act = c.act == Activation::QuickGelu ? PostOp::QuickGelu : PostOp::Gelu;
  const bool fused_qkv = has_role(names, Role::QkvWeight);
  std::vector<detail::EncoderLayer> blocks;
  for (int i = 0; i < c.layers; ++i) {
    auto take = [&](Role role) { return get(src, cfg, names, tower, role, i); };
    detail::EncoderLayer b;
    b.ln1_g = take(Role::Norm1Weight);
    b.ln1_b = take(Role::Norm1Bias);
    b.ln2_g = take(Role::Norm2Weight);
    b.ln2_b = take(Role::Norm2Bias);
    std::vector<float> qkv_w, qkv_b;
    if (fused_qkv) {
      qkv_w = take(Role::QkvWeight);
      qkv_b = take(Role::QkvBias);
    } else {
      for (auto [weight, bias] :
           {std::pair{Role::QWeight, Role::QBias}, std::pair{Role::KWeight, Role::KBias},
            std::pair{Role::VWeight, Role::VBias}}) {
        auto pw = take(weight);
        auto pb = take(bias);
        qkv_w.insert(qkv_w.end(), pw.begin(), pw.end());
        qkv_b.insert(qkv_b.end(), pb.begin(), pb.end());
      }
    }
    b.qkv = Linear(qkv_w, qkv_b, 3 * w, w);
    qkv_w = {};
    b.out = Linear(take(Role::OutWeight), take(Role::OutBias), w, w, PostOp::None,
                   /*accumulate=*/true);
    b.fc1 = Linear(take(Role::Fc1Weight), take(Role::Fc1Bias), m, w, act);
    b.fc2 = Linear(take(Role::Fc2Weight), take(Role::Fc2Bias), w, m, PostOp::None,
                   /*accumulate=*/true);
    blocks.push_back(std::move(b));
  }
  return blocks;
}

Linear load_projection(TensorSource& src, const ClipConfig& cfg, const LayoutNames& names,
                       TowerKind tower) {
  const int width = tower == TowerKind::Vision ? cfg.vision.width : cfg.text.width;
  const int embed = cfg.embed_dim;
  std::vector<float> p = get(src, cfg, names, tower, Role::Projection);
  if (names.projection_transposed) p = transpose(p, width, embed);
  return Linear(p, {}, embed, width);
}

// ---- row operations ----

// Packing a tower frees its conversion buffers between the long-lived packed weights; glibc keeps
// such holes resident. malloc_trim gives their pages back (70 MB with ViT-B/32; measured with
// bench/run_memory_bench.sh), without changing how later allocations are served.
void give_back_freed_heap() {
  malloc_trim(0);
}

// The mean and the max over tokens 0..last[b] of each sequence b of x: [count * len, width], into
// level `level` of out.hidden_mean / out.hidden_max ([levels, count, width]). Sums are taken in
// double, token by token in order, so a sequence's result does not depend on its batch.
void pool_over_tokens(const float* x, int count, int len, int width, const std::vector<int>& last,
                      int level, TowerOutput& out) {
  std::vector<int> tokens(last.size());
  for (std::size_t b = 0; b < last.size(); ++b)
    tokens[b] = last[b] + 1;
  const std::size_t at = static_cast<std::size_t>(level) * static_cast<std::size_t>(count) *
                         static_cast<std::size_t>(width);
  detail::mean_max_over_tokens(x, count, len, width, tokens.data(), &out.hidden_mean[at],
                               &out.hidden_max[at]);
}

// Runs the blocks on x: [seqs * len, width]; `capture` is called after each block.
template <typename Capture>
void run_blocks(const Tower& t, std::vector<float>& x, int seqs, int len, bool causal,
                Capture&& capture) {
  const std::size_t rows = static_cast<std::size_t>(seqs) * static_cast<std::size_t>(len);
  x.resize(rows * static_cast<std::size_t>(t.cfg.width), 0.0f);  // x: [rows, width]
  const detail::FixedSequences sequences(seqs, len);
  detail::EncoderRun run{rows,        sequences.offsets, sequences.lengths,
                         t.cfg.heads, t.cfg.eps,         causal};
  run.after_layer = capture;
  detail::run_encoder_layers(t.blocks, x, run);
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
  std::vector<float> class_emb, ln_pre_g, ln_pre_b;
  // text
  Tower text;
  std::vector<float> token_emb;  // [vocab, width]

  // Checkpoint weights are packed lazily, one tower at a time, on the tower's first use: a run
  // whose embeddings all come from the cache never reads or packs them. `pending` holds the
  // opened (mapped, not read) checkpoint until both towers are built.
  std::unique_ptr<TensorSource> pending;
  std::mutex build_mutex;
  std::atomic<bool> image_built{false}, text_built{false};

  // Reads logit_scale and checks every tensor the ViT and text towers need (names from the
  // layout's table, shapes from the config) against the checkpoint's header, without reading
  // the weights. The ResNet image tower is checked when it is built.
  void open_checkpoint(std::unique_ptr<detail::CheckpointSource> src) {
    vision.cfg = cfg.vision;
    text.cfg = cfg.text;
    const LayoutNames& names = layout_names(cfg.layout);
    const auto check = [&](const TensorSpec& spec) { src->tensors().get(spec.name, spec.shape); };
    if (cfg.vision_arch == VisionArch::Vit)
      for_each_tower_spec(cfg, names, TowerKind::Vision, check);
    for_each_tower_spec(cfg, names, TowerKind::Text, check);
    read_logit_scale(*src);
    pending = std::move(src);
  }

  // Builds everything now (random weights).
  void build_all(TensorSource& src) {
    vision.cfg = cfg.vision;
    text.cfg = cfg.text;
    build_image(src);
    build_text(src);
    read_logit_scale(src);
    image_built = text_built = true;
  }

  void ensure_image() {
    if (image_built.load(std::memory_order_acquire)) return;
    std::lock_guard<std::mutex> lock(build_mutex);
    if (image_built.load(std::memory_order_relaxed)) return;
    build_image(*pending);
    image_built.store(true, std::memory_order_release);
    if (text_built) pending.reset();  // unmaps the checkpoint
    give_back_freed_heap();
  }

  void ensure_text() {
    if (text_built.load(std::memory_order_acquire)) return;
    std::lock_guard<std::mutex> lock(build_mutex);
    if (text_built.load(std::memory_order_relaxed)) return;
    build_text(*pending);
    text_built.store(true, std::memory_order_release);
    if (image_built) pending.reset();
    give_back_freed_heap();
  }

  void read_logit_scale(TensorSource& src) {
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

  void build_image(TensorSource& src) {
    if (cfg.vision_arch == VisionArch::ResNet) {
      image_encoder = std::make_unique<detail::ResNetTower>(src, cfg);
    } else {
      load_vit(src);
      image_encoder = std::make_unique<VitEncoder>(*this);
    }
  }

  void build_text(TensorSource& src) {
    load_text(src);
    text_encoder = std::make_unique<TransformerTextEncoder>(*this);
  }

  void load_vit(TensorSource& src) {
    const LayoutNames& names = layout_names(cfg.layout);
    auto take = [&](Role role) { return get(src, cfg, names, TowerKind::Vision, role); };
    patch = Linear(take(Role::PatchEmbed), {}, cfg.vision.width, 3 * cfg.patch * cfg.patch);
    class_emb = take(Role::ClassEmbed);
    vision.pos = take(Role::Position);
    ln_pre_g = take(Role::PreNormWeight);
    ln_pre_b = take(Role::PreNormBias);
    vision.blocks = load_blocks(src, cfg, names, TowerKind::Vision);
    vision.ln_final_g = take(Role::FinalNormWeight);
    vision.ln_final_b = take(Role::FinalNormBias);
    vision.proj = load_projection(src, cfg, names, TowerKind::Vision);
  }

  void load_text(TensorSource& src) {
    const LayoutNames& names = layout_names(cfg.layout);
    auto take = [&](Role role) { return get(src, cfg, names, TowerKind::Text, role); };
    token_emb = take(Role::TokenEmbed);
    text.pos = take(Role::Position);
    text.blocks = load_blocks(src, cfg, names, TowerKind::Text);
    text.ln_final_g = take(Role::FinalNormWeight);
    text.ln_final_b = take(Role::FinalNormBias);
    text.proj = load_projection(src, cfg, names, TowerKind::Text);
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
std::string ClipModel::compute_signature() const {
  return kernel_version();  // ViT and ResNet alike run on winokit's kernels
}
float ClipModel::logit_scale_exp() const {
  return std::exp(impl_->logit_scale);
}

bool ClipModel::image_tower_built() const {
  return impl_->image_built.load();
}
bool ClipModel::text_tower_built() const {
  return impl_->text_built.load();
}

ClipModel ClipModel::load(const fs::path& dir) {
  return load(dir, fs::path{});
}

ClipModel ClipModel::load(const fs::path& dir, const fs::path& hash_index_dir) {
  ClipModel model;
  if (fs::is_regular_file(dir)) {
    // OpenAI's TorchScript archive (RN50.pt, ViT-B-32.pt) or a torch.save state dict in
    // openai/CLIP's names: the architecture comes from the tensors' shapes.
    auto src = std::make_unique<detail::CheckpointSource>(SafeTensors::open_torch(dir));
    std::map<std::string, std::vector<std::int64_t>> shapes;
    for (const auto& [name, t] : src->tensors().tensors())
      shapes.emplace(name, t.shape);
    model.impl_->cfg = infer_openai_config(shapes, dir.string());
    model.impl_->weights_id = src->tensors().content_hash(hash_index_dir);
    model.impl_->open_checkpoint(std::move(src));
    return model;
  }
  model.impl_->cfg = load_clip_config(dir);
  // Safetensors first; a PyTorch zip checkpoint through the restricted unpickler otherwise.
  const bool openclip = model.impl_->cfg.layout == CheckpointLayout::OpenClip;
  static const std::vector<std::string> kOpenClipWeights = {"open_clip_model.safetensors",
                                                            "open_clip_pytorch_model.bin"};
  auto src = std::make_unique<detail::CheckpointSource>(detail::open_weights(
      detail::find_weights(dir, openclip ? kOpenClipWeights : detail::hf_weight_files())));
  model.impl_->weights_id = src->tensors().content_hash(hash_index_dir);
  model.impl_->open_checkpoint(std::move(src));
  return model;
}

ClipModel ClipModel::random(const ClipConfig& config, std::uint64_t seed) {
  ClipModel model;
  model.impl_->cfg = config;
  model.impl_->cfg.layout = CheckpointLayout::HuggingFace;
  model.impl_->weights_id = "random:" + std::to_string(seed);
  detail::RandomSource src(seed, clip_random_init);
  model.impl_->build_all(src);
  return model;
}

namespace {

// Runs encode(first, count) -> TowerOutput over the batch [0, count). With at least as many
// items as compute threads, the batch is cut into one consecutive part per thread and each
// thread runs its part whole (every product and attention on itself: no joins inside a layer,
// about 5% faster than splitting each product on 2 cores); otherwise the batch runs as one,
// every product on every thread. A row's bits never depend on the rows beside it (kernels.hpp),
// so the outputs are the same bits either way. `levels` and `width`: the shape of the states,
// [levels, count, width] per part, interleaved back level by level.
template <class Encode>
TowerOutput encode_split(int count, int levels, int width, bool splittable, const Encode& encode) {
  const int parts = compute_threads();
  if (!splittable || parts < 2 || count < parts || detail::in_parallel()) return encode(0, count);
  std::vector<TowerOutput> out(static_cast<std::size_t>(parts));
  if (const std::exception_ptr f = detail::for_each_item(parts, true, [&](int p) {
        const int b0 = static_cast<int>(static_cast<long long>(count) * p / parts);
        const int b1 = static_cast<int>(static_cast<long long>(count) * (p + 1) / parts);
        out[static_cast<std::size_t>(p)] = encode(b0, b1 - b0);
      })) {
    std::rethrow_exception(f);
  }
  TowerOutput all;
  all.count = count;
  all.token_count = out.front().token_count;
  const std::size_t w = static_cast<std::size_t>(width);
  auto by_level = [&](std::vector<float> TowerOutput::*field) {
    if ((out.front().*field).empty()) return;
    for (int l = 0; l < levels; ++l) {
      for (const TowerOutput& part : out) {
        const std::size_t n = static_cast<std::size_t>(part.count) * w;
        const auto first = (part.*field).begin() + static_cast<std::ptrdiff_t>(l * n);
        (all.*field).insert((all.*field).end(), first, first + static_cast<std::ptrdiff_t>(n));
      }
    }
  };
  by_level(&TowerOutput::hidden);
  by_level(&TowerOutput::hidden_mean);
  by_level(&TowerOutput::hidden_max);
  for (TowerOutput& part : out) {
    all.embeds.insert(all.embeds.end(), part.embeds.begin(), part.embeds.end());
    all.tokens.insert(all.tokens.end(), part.tokens.begin(), part.tokens.end());
    part = {};
  }
  return all;
}

}  // namespace

TowerOutput ClipModel::encode_images(const float* pixels, int count, const EncodeOptions& o) const {
  impl_->ensure_image();
  const ClipConfig& c = impl_->cfg;
  const std::size_t image = 3ull * static_cast<std::size_t>(c.image_size) * c.image_size;
  return encode_split(count, c.vision.layers + 1, c.vision.width, true, [&](int first, int n) {
    return impl_->image_encoder->encode(pixels + static_cast<std::size_t>(first) * image, n, o);
  });
}

TowerOutput ClipModel::encode_texts(const std::vector<std::vector<int>>& ids,
                                    const EncodeOptions& o) const {
  impl_->ensure_text();
  const ClipConfig& c = impl_->cfg;
  // Per-token states come back as [count, tokens, dim] with the batch's longest end-of-text as
  // `tokens`, which parts of the batch would not share: such a batch runs as one.
  return encode_split(static_cast<int>(ids.size()), c.text.layers + 1, c.text.width,
                      !o.token_states, [&](int first, int n) {
                        const std::vector<std::vector<int>> part(ids.begin() + first,
                                                                 ids.begin() + first + n);
                        return impl_->text_encoder->encode(part, o);
                      });
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
  detail::image_patches(pixels, count, 3, side, p, cols.data());
  std::vector<float> embedded(static_cast<std::size_t>(count) * patches * w);
  m.patch.forward(cols.data(), count * patches, embedded.data());
  cols = {};
  std::vector<float> x(static_cast<std::size_t>(count) * tokens * w);
  detail::parallel_for(count * tokens, [&](int bt) {
    const int b = bt / tokens, t = bt % tokens;
    float* dst = &x[(static_cast<std::size_t>(b) * tokens + t) * w];
    const float* pos = &m.vision.pos[static_cast<std::size_t>(t) * w];
    const float* src = t == 0 ? m.class_emb.data()
                              : &embedded[(static_cast<std::size_t>(b) * patches + t - 1) * w];
    for (int i = 0; i < w; ++i)
      dst[i] = src[i] + pos[i];
  });
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
  run_blocks(m.vision, x, count, tokens, /*causal=*/false, capture);
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
  run_blocks(m.text, x, count, len, /*causal=*/true, capture);
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
