#include "resnet.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <dnnl.hpp>
#include <string>
#include <vector>

#include "gemm.hpp"
#include "winokit/core/error.hpp"

namespace winokit::detail {

namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;
using dims = dnnl::memory::dims;

dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

// torch.nn.BatchNorm2d's default epsilon (openai/CLIP does not change it).
constexpr double kBatchNormEps = 1e-5;
// Images per primitive call. Every convolution runs on exactly this many images (a shorter
// batch is padded with zero images), so an image's result never depends on the batch: the
// same compiled kernel computes it. oneDNN's convolutions are 4-6x faster per image at 8 or
// more images than at one (measured on this machine), and padding one image to 8 costs less
// than running it alone at one.
constexpr int kChunk = 8;

// ---- the tensor-name table of openai/CLIP's ModifiedResNet (OpenAI .pt files and OpenCLIP
// RN folders use the same names). "{i}" is a stem index, "{s}" a stage, "{b}" a block. ----
struct ResNetNames {
  const char* stem_conv = "visual.conv{i}.weight";
  const char* stem_bn = "visual.bn{i}.";
  const char* block = "visual.layer{s}.{b}.";
  const char* block_conv = "conv{i}.weight";  // inside a block: conv1..conv3
  const char* block_bn = "bn{i}.";
  const char* downsample_conv = "downsample.0.weight";
  const char* downsample_bn = "downsample.1.";
  const char* pool = "visual.attnpool.";  // positional_embedding, {q,k,v,c}_proj.{weight,bias}
};
constexpr ResNetNames kNames;

std::string fill(std::string pattern, const char* key, int value) {
  for (auto pos = pattern.find(key); pos != std::string::npos; pos = pattern.find(key)) {
    pattern.replace(pos, std::strlen(key), std::to_string(value));
  }
  return pattern;
}

// A convolution with its BatchNorm folded in: y = post(conv(x, W * s) + (beta - mean * s)),
// s = gamma / sqrt(var + eps), per output channel.
struct Conv {
  dnnl::convolution_forward prim;
  dnnl::convolution_forward::primitive_desc pd;
  dnnl::memory weights, bias;
};

struct Pool {
  dnnl::pooling_forward prim;
  dnnl::pooling_forward::primitive_desc pd;
};

struct Block {
  Conv conv1, conv2, conv3;
  bool has_pool = false, has_downsample = false, has_downsample_pool = false;
  Pool pool, downsample_pool;
  Conv downsample;
};

}  // namespace

struct ResNetTower::Impl {
  int side = 0, embed = 0, width = 0, heads = 0, out_dim = 0, grid = 0;
  Conv stem[3];
  Pool stem_pool;
  std::vector<Block> blocks;
  // Attention pool: tokens [grid^2 + 1, embed].
  std::vector<float> pos;
  Linear q, kv, c;
  dnnl::memory::desc features_md;  // layer4 output as produced
  dnnl::reorder to_tokens;         // -> [1, embed, grid, grid] in nhwc ([tokens, embed])

  Conv make_conv(TensorSource& src, const std::string& weight_name, const std::string& bn, int in,
                 int out, int k, int stride, int in_side, const dnnl::memory::desc& dst_md,
                 bool relu, bool sum) {
    auto w = src.get(weight_name, {out, in, k, k});
    const auto gamma = src.get(bn + "weight", {out});
    const auto beta = src.get(bn + "bias", {out});
    const auto mean = src.get(bn + "running_mean", {out});
    const auto var = src.get(bn + "running_var", {out});
    std::vector<float> bias(static_cast<std::size_t>(out));
    const std::size_t per = static_cast<std::size_t>(in) * k * k;
    for (int o = 0; o < out; ++o) {
      const auto i = static_cast<std::size_t>(o);
      const double s = gamma[i] / std::sqrt(static_cast<double>(var[i]) + kBatchNormEps);
      for (std::size_t j = 0; j < per; ++j)
        w[i * per + j] = static_cast<float>(w[i * per + j] * s);
      bias[i] = static_cast<float>(beta[i] - mean[i] * s);
    }
    const int pad = k / 2, out_side = (in_side + 2 * pad - k) / stride + 1;
    dnnl::memory::desc src_md({kChunk, in, in_side, in_side}, dt::f32, tag::any);
    dnnl::memory::desc w_md({out, in, k, k}, dt::f32, tag::any);
    dnnl::memory::desc b_md({out}, dt::f32, tag::a);
    dnnl::memory::desc d_md =
        dst_md.is_zero() ? dnnl::memory::desc({kChunk, out, out_side, out_side}, dt::f32, tag::any)
                         : dst_md;
    dnnl::post_ops ops;
    if (sum) ops.append_sum(1.f);
    if (relu) ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    // Direct convolution: a fixed reduction order (no Winograd or FFT transforms).
    dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference,
                                         dnnl::algorithm::convolution_direct, src_md, w_md, b_md,
                                         d_md, {stride, stride}, {pad, pad}, {pad, pad});
    Conv conv;
    conv.pd = dnnl::convolution_forward::primitive_desc(desc, attr, engine());
    conv.prim = dnnl::convolution_forward(conv.pd);
    dnnl::memory user({{out, in, k, k}, dt::f32, tag::oihw}, engine(), w.data());
    conv.weights = dnnl::memory(conv.pd.weights_desc(), engine());
    conv.bias = dnnl::memory(b_md, engine());
    std::memcpy(conv.bias.get_data_handle(), bias.data(), bias.size() * sizeof(float));
    dnnl::stream stream(engine());
    dnnl::reorder(user, conv.weights).execute(stream, user, conv.weights);
    stream.wait();
    return conv;
  }

  static Pool make_pool(const dnnl::memory::desc& src_md, int stride) {
    const dims d = src_md.dims();
    dnnl::memory::desc dst_md({d[0], d[1], d[2] / stride, d[3] / stride}, dt::f32, tag::any);
    dnnl::pooling_forward::desc desc(dnnl::prop_kind::forward_inference,
                                     dnnl::algorithm::pooling_avg_include_padding, src_md, dst_md,
                                     {stride, stride}, {stride, stride}, {0, 0}, {0, 0});
    Pool p;
    p.pd = dnnl::pooling_forward::primitive_desc(desc, engine());
    p.prim = dnnl::pooling_forward(p.pd);
    return p;
  }
};

ResNetTower::ResNetTower(TensorSource& src, const ClipConfig& cfg)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.side = cfg.image_size;
  m.width = cfg.vision.width;
  m.embed = m.width * 32;
  m.heads = cfg.vision.heads;
  m.out_dim = cfg.embed_dim;
  m.grid = m.side / 32;
  if (m.side % 32 != 0 || m.heads <= 0 || m.embed % m.heads != 0 || m.width % 2 != 0) {
    throw InputError({"", 0, "visual"}, "unsupported ResNet shape: input " +
                                            std::to_string(m.side) + ", width " +
                                            std::to_string(m.width));
  }
  const int w = m.width;
  int side = m.side / 2;
  auto stem_name = [](const char* pattern, int i) { return fill(pattern, "{i}", i); };
  // Stem: conv 3x3 stride 2 (3 -> w/2), conv 3x3 (w/2 -> w/2), conv 3x3 (w/2 -> w), avgpool 2.
  m.stem[0] = m.make_conv(src, stem_name(kNames.stem_conv, 1), stem_name(kNames.stem_bn, 1), 3,
                          w / 2, 3, 2, m.side, {}, true, false);
  m.stem[1] = m.make_conv(src, stem_name(kNames.stem_conv, 2), stem_name(kNames.stem_bn, 2), w / 2,
                          w / 2, 3, 1, side, {}, true, false);
  m.stem[2] = m.make_conv(src, stem_name(kNames.stem_conv, 3), stem_name(kNames.stem_bn, 3), w / 2,
                          w, 3, 1, side, {}, true, false);
  m.stem_pool = Impl::make_pool(m.stem[2].pd.dst_desc(), 2);
  side /= 2;
  dnnl::memory::desc x_md = m.stem_pool.pd.dst_desc();
  int inplanes = w;
  for (int stage = 0; stage < 4; ++stage) {
    const int planes = w << stage;
    for (int b = 0; b < cfg.resnet_layers[static_cast<std::size_t>(stage)]; ++b) {
      const int stride = (stage > 0 && b == 0) ? 2 : 1;
      const std::string p = fill(fill(kNames.block, "{s}", stage + 1), "{b}", b);
      auto conv_name = [&](int i) { return p + fill(kNames.block_conv, "{i}", i); };
      auto bn_name = [&](int i) { return p + fill(kNames.block_bn, "{i}", i); };
      Block blk;
      blk.conv1 =
          m.make_conv(src, conv_name(1), bn_name(1), inplanes, planes, 1, 1, side, {}, true, false);
      blk.conv2 =
          m.make_conv(src, conv_name(2), bn_name(2), planes, planes, 3, 1, side, {}, true, false);
      const int out_side = side / stride;
      dnnl::memory::desc mid_md = blk.conv2.pd.dst_desc();
      if (stride > 1) {
        blk.has_pool = true;
        blk.pool = Impl::make_pool(mid_md, stride);
      }
      // conv3 adds the identity (sum post-op on its destination) and applies the final ReLU.
      blk.conv3 = m.make_conv(src, conv_name(3), bn_name(3), planes, planes * 4, 1, 1, out_side, {},
                              true, true);
      if (stride > 1 || inplanes != planes * 4) {
        blk.has_downsample = true;
        if (stride > 1) {
          blk.has_downsample_pool = true;
          blk.downsample_pool = Impl::make_pool(x_md, stride);
        }
        // The downsample branch writes straight into conv3's destination layout.
        blk.downsample =
            m.make_conv(src, p + kNames.downsample_conv, p + kNames.downsample_bn, inplanes,
                        planes * 4, 1, 1, out_side, blk.conv3.pd.dst_desc(), false, false);
      }
      x_md = blk.conv3.pd.dst_desc();
      inplanes = planes * 4;
      side = out_side;
      m.blocks.push_back(std::move(blk));
    }
  }
  if (inplanes != m.embed || side != m.grid) {
    throw InputError({"", 0, "visual"}, "the ResNet stages do not end at width * 32");
  }
  m.features_md = x_md;
  dnnl::memory::desc tokens_md({kChunk, m.embed, m.grid, m.grid}, dt::f32, tag::nhwc);
  m.to_tokens = dnnl::reorder(dnnl::reorder::primitive_desc(engine(), x_md, engine(), tokens_md));
  // Attention pool (AttentionPool2d): q from the mean token only, k and v from every token.
  const std::int64_t e = m.embed, t = static_cast<std::int64_t>(m.grid) * m.grid + 1;
  m.pos = src.get(std::string(kNames.pool) + "positional_embedding", {t, e});
  auto proj = [&](const char* name, std::int64_t out) {
    return std::make_pair(src.get(std::string(kNames.pool) + name + ".weight", {out, e}),
                          src.get(std::string(kNames.pool) + name + ".bias", {out}));
  };
  auto [qw, qb] = proj("q_proj", e);
  auto [kw, kb] = proj("k_proj", e);
  auto [vw, vb] = proj("v_proj", e);
  auto [cw, cb] = proj("c_proj", m.out_dim);
  m.q = Linear(qw, qb, m.embed, m.embed);
  kw.insert(kw.end(), vw.begin(), vw.end());
  kb.insert(kb.end(), vb.begin(), vb.end());
  m.kv = Linear(kw, kb, 2 * m.embed, m.embed);
  m.c = Linear(cw, cb, m.out_dim, m.embed);
}

ResNetTower::ResNetTower(ResNetTower&&) noexcept = default;
ResNetTower::~ResNetTower() = default;

namespace {

// Buffers reused chunk to chunk: each slot keeps the largest buffer it needed, and get() wraps
// it in a memory object of the requested layout (no allocation or page faults per layer).
class Workspace {
 public:
  explicit Workspace(std::size_t slots) : buffers_(slots) {}
  dnnl::memory get(const dnnl::memory::desc& md, std::size_t slot) {
    if (slot >= buffers_.size()) throw Error("ResNet workspace: no slot " + std::to_string(slot));
    auto& b = buffers_[slot];
    const std::size_t floats = (md.get_size() + sizeof(float) - 1) / sizeof(float);
    if (b.size() < floats) b.resize(floats);
    return dnnl::memory(md, engine(), b.data());
  }

 private:
  std::vector<std::vector<float>> buffers_;
};

// `x` in the layout `md`: itself, or a reordered copy in `slot`.
dnnl::memory as_layout(const dnnl::memory& x, const dnnl::memory::desc& md, Workspace& ws,
                       std::size_t slot, dnnl::stream& s) {
  if (x.get_desc() == md) return x;
  dnnl::memory y = ws.get(md, slot);
  dnnl::reorder(x, y).execute(s, const_cast<dnnl::memory&>(x), y);
  return y;
}

void run_conv(const Conv& c, const dnnl::memory& x, const dnnl::memory& y, Workspace& ws,
              std::size_t slot, dnnl::stream& s) {
  dnnl::memory in = as_layout(x, c.pd.src_desc(), ws, slot, s);
  c.prim.execute(s, {{DNNL_ARG_SRC, in},
                     {DNNL_ARG_WEIGHTS, c.weights},
                     {DNNL_ARG_BIAS, c.bias},
                     {DNNL_ARG_DST, y}});
}

void run_pool(const Pool& p, const dnnl::memory& x, const dnnl::memory& y, Workspace& ws,
              std::size_t slot, dnnl::stream& s) {
  dnnl::memory in = as_layout(x, p.pd.src_desc(), ws, slot, s);
  p.prim.execute(s, {{DNNL_ARG_SRC, in}, {DNNL_ARG_DST, y}});
}

}  // namespace

TowerOutput ResNetTower::encode(const float* pixels, int count, const EncodeOptions& o) const {
  if (o.hidden_states || o.token_states || o.pooled_states) {
    // A ResNet has no token sequence whose layers line up with the text tower's blocks: no
    // class token, no per-layer width in common, and no patch tokens for heat maps.
    throw UsageError(
        "per-layer and per-token states are not available for ResNet image towers (RN50, "
        "RN101, RN50x4, ...): they have no class token and no layer sequence that lines up "
        "with the text tower",
        "probes and heat maps need a ViT CLIP (ViT-B/32, ViT-B/16, ViT-L/14); the final "
        "embeddings of a ResNet CLIP can still be probed with `winokit embed` (no "
        "--hidden-states) and `winokit probe --embeddings FILE --layers final`");
  }
  TowerOutput out;
  out.count = count;
  out.embeds.assign(static_cast<std::size_t>(count) * impl_->out_dim, 0.f);
  if (count > 0) encode(pixels, count, out.embeds.data());
  return out;
}

void ResNetTower::encode(const float* pixels, int count, float* embeds) const {
  const Impl& m = *impl_;
  dnnl::stream s(engine());
  constexpr std::size_t kSlots = 8;
  Workspace ws(kSlots);
  // Slots: 0/1 ping-pong activations, 2..4 block temporaries, 5+ layout conversions.
  constexpr std::size_t kA = 0, kB = 1, kT1 = 2, kT2 = 3, kT3 = 4, kConv = 5;
  const std::size_t image = 3 * static_cast<std::size_t>(m.side) * m.side;
  const int t = m.grid * m.grid + 1, e = m.embed, d = e / m.heads;
  // tokens: per image [t, e], row 0 for the mean token; positions: layer4's output, nhwc.
  const std::size_t per_image_tokens = static_cast<std::size_t>(t) * e;
  std::vector<float> positions(static_cast<std::size_t>(kChunk) * (t - 1) * e),
      tokens(static_cast<std::size_t>(kChunk) * per_image_tokens),
      q(static_cast<std::size_t>(kChunk) * e), kv(static_cast<std::size_t>(kChunk) * t * 2 * e),
      attended(static_cast<std::size_t>(kChunk) * e), staging;
  dnnl::memory::desc input_md({kChunk, 3, m.side, m.side}, dt::f32, tag::nchw);
  dnnl::memory::desc tokens_md({kChunk, e, m.grid, m.grid}, dt::f32, tag::nhwc);
  for (int first = 0; first < count; first += kChunk) {
    const int n_real = std::min(kChunk, count - first);
    const float* chunk_pixels = pixels + static_cast<std::size_t>(first) * image;
    if (n_real < kChunk) {
      // Zero images fill the chunk; they are computed and dropped.
      staging.assign(static_cast<std::size_t>(kChunk) * image, 0.f);
      std::memcpy(staging.data(), chunk_pixels,
                  static_cast<std::size_t>(n_real) * image * sizeof(float));
      chunk_pixels = staging.data();
    }
    dnnl::memory input(input_md, engine(), const_cast<float*>(chunk_pixels));
    dnnl::memory x = ws.get(m.stem[0].pd.dst_desc(), kA);
    run_conv(m.stem[0], input, x, ws, kConv, s);
    dnnl::memory y = ws.get(m.stem[1].pd.dst_desc(), kB);
    run_conv(m.stem[1], x, y, ws, kConv, s);
    x = ws.get(m.stem[2].pd.dst_desc(), kA);
    run_conv(m.stem[2], y, x, ws, kConv, s);
    y = ws.get(m.stem_pool.pd.dst_desc(), kB);
    run_pool(m.stem_pool, x, y, ws, kConv, s);
    x = y;  // the stem's output, in slot kB
    std::size_t free_slot = kA;
    for (const Block& b : m.blocks) {
      // out: conv3's destination, first filled with the identity branch.
      dnnl::memory out = ws.get(b.conv3.pd.dst_desc(), free_slot);
      if (b.has_downsample) {
        dnnl::memory src = x;
        if (b.has_downsample_pool) {
          src = ws.get(b.downsample_pool.pd.dst_desc(), kT3);
          run_pool(b.downsample_pool, x, src, ws, kConv, s);
        }
        run_conv(b.downsample, src, out, ws, kConv + 1, s);
      } else {
        dnnl::memory same = as_layout(x, out.get_desc(), ws, kConv + 2, s);
        s.wait();
        std::memcpy(out.get_data_handle(), same.get_data_handle(), out.get_desc().get_size());
      }
      dnnl::memory h1 = ws.get(b.conv1.pd.dst_desc(), kT1);
      run_conv(b.conv1, x, h1, ws, kConv, s);
      dnnl::memory h2 = ws.get(b.conv2.pd.dst_desc(), kT2);
      run_conv(b.conv2, h1, h2, ws, kConv, s);
      dnnl::memory mid = h2;
      if (b.has_pool) {
        mid = ws.get(b.pool.pd.dst_desc(), kT1);
        run_pool(b.pool, h2, mid, ws, kConv, s);
      }
      run_conv(b.conv3, mid, out, ws, kConv, s);
      x = out;
      free_slot = free_slot == kA ? kB : kA;
    }
    // Features -> positions [kChunk, grid^2, embed].
    dnnl::memory flat(tokens_md, engine(), positions.data());
    dnnl::memory features = as_layout(x, m.features_md, ws, kConv, s);
    m.to_tokens.execute(s, features, flat);
    s.wait();
    // x = cat(mean over positions, positions) + positional_embedding, per image.
    const int np = t - 1;
#pragma omp parallel for schedule(static)
    for (int n = 0; n < kChunk; ++n) {
      float* x_tok = tokens.data() + static_cast<std::size_t>(n) * per_image_tokens;
      const float* pos = positions.data() + static_cast<std::size_t>(n) * np * e;
      std::memcpy(x_tok + e, pos, sizeof(float) * static_cast<std::size_t>(np) * e);
      for (int ch = 0; ch < e; ++ch) {
        double sum = 0;
        for (int p = 0; p < np; ++p)
          sum += pos[static_cast<std::size_t>(p) * e + ch];
        x_tok[ch] = static_cast<float>(sum / np);
      }
      for (std::size_t i = 0; i < per_image_tokens; ++i)
        x_tok[i] += m.pos[i];
    }
    // q from each image's mean token, k and v from every token.
    std::vector<float> mean_rows(static_cast<std::size_t>(kChunk) * e);
    for (int n = 0; n < kChunk; ++n) {
      std::memcpy(&mean_rows[static_cast<std::size_t>(n) * e],
                  tokens.data() + static_cast<std::size_t>(n) * per_image_tokens,
                  sizeof(float) * static_cast<std::size_t>(e));
    }
    m.q.forward(mean_rows.data(), kChunk, q.data());
    m.kv.forward(tokens.data(), kChunk * t, kv.data());
    // Multi-head attention of the mean token over all tokens (F.multi_head_attention_forward
    // scales q by 1/sqrt(head dim) before the dot products).
    const float scale = 1.0f / std::sqrt(static_cast<float>(d));
#pragma omp parallel for collapse(2) schedule(static)
    for (int n = 0; n < kChunk; ++n) {
      for (int h = 0; h < m.heads; ++h) {
        std::vector<float> sc(static_cast<std::size_t>(t));
        const std::size_t head = static_cast<std::size_t>(h) * d;
        const float* qh = q.data() + static_cast<std::size_t>(n) * e + head;
        const float* kvn = kv.data() + static_cast<std::size_t>(n) * t * 2 * e;
        for (int j = 0; j < t; ++j) {
          const float* kj = kvn + static_cast<std::size_t>(j) * 2 * e + head;
          float dot = 0;
          for (int k = 0; k < d; ++k)
            dot += (qh[k] * scale) * kj[k];
          sc[static_cast<std::size_t>(j)] = dot;
        }
        softmax_inplace(sc.data(), static_cast<std::size_t>(t));
        float* oh = attended.data() + static_cast<std::size_t>(n) * e + head;
        std::fill(oh, oh + d, 0.f);
        for (int j = 0; j < t; ++j) {
          const float p = sc[static_cast<std::size_t>(j)];
          const float* vj = kvn + static_cast<std::size_t>(j) * 2 * e + e + head;
          for (int k = 0; k < d; ++k)
            oh[k] += p * vj[k];
        }
      }
    }
    std::vector<float> projected(static_cast<std::size_t>(kChunk) * m.out_dim);
    m.c.forward(attended.data(), kChunk, projected.data());
    std::memcpy(embeds + static_cast<std::size_t>(first) * m.out_dim, projected.data(),
                sizeof(float) * static_cast<std::size_t>(n_real) * m.out_dim);
  }
}

}  // namespace winokit::detail
