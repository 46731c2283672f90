#include "model/families/clip/resnet.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "model/kernels/gemm.hpp"
#include "model/kernels/kernels.hpp"
#include "model/kernels/ops.hpp"
#include "model/kernels/parallel.hpp"
#include "winokit/core/error.hpp"
#include "winokit/model/compute.hpp"

namespace winokit::detail {

namespace {

// torch.nn.BatchNorm2d's default epsilon (openai/CLIP does not change it).
constexpr double kBatchNormEps = 1e-5;

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
// s = gamma / sqrt(var + eps), per output channel, on the kernels' convolution (ops.hpp).
using Conv = Conv2d;
using Map = FeatureMap;

struct Block {
  Conv conv1, conv2, conv3;
  int stride = 1;
  bool has_downsample = false;
  Conv downsample;
};

// What one image's forward needs, reused image to image by one thread.
struct Scratch {
  Map x, y, h1, h2, pooled, identity;
  std::vector<float> patches;
};

}  // namespace

struct ResNetTower::Impl {
  int side = 0, embed = 0, width = 0, heads = 0, out_dim = 0, grid = 0;
  Conv stem[3];
  std::vector<Block> blocks;
  // Attention pool: tokens [grid^2 + 1, embed].
  std::vector<float> pos;
  Linear q, kv, c;

  static Conv make_conv(TensorSource& src, const std::string& weight_name, const std::string& bn,
                        int in, int out, int k, int stride) {
    auto w = src.get(weight_name, {out, in, k, k});
    const auto gamma = src.get(bn + "weight", {out});
    const auto beta = src.get(bn + "bias", {out});
    const auto mean = src.get(bn + "running_mean", {out});
    const auto var = src.get(bn + "running_var", {out});
    std::vector<float> bias(static_cast<std::size_t>(out));
    const std::size_t per = static_cast<std::size_t>(in) * k * k;
    // OIHW -> [out][kh][kw][in], scaled by the BatchNorm.
    std::vector<float> folded(static_cast<std::size_t>(out) * per);
    for (int o = 0; o < out; ++o) {
      const auto oi = static_cast<std::size_t>(o);
      const double s = gamma[oi] / std::sqrt(static_cast<double>(var[oi]) + kBatchNormEps);
      for (int i = 0; i < in; ++i) {
        for (int kh = 0; kh < k; ++kh) {
          for (int kw = 0; kw < k; ++kw) {
            const std::size_t from = oi * per + (static_cast<std::size_t>(i) * k + kh) * k + kw;
            const std::size_t to = oi * per + (static_cast<std::size_t>(kh) * k + kw) * in + i;
            folded[to] = static_cast<float>(w[from] * s);
          }
        }
      }
      bias[oi] = static_cast<float>(beta[oi] - mean[oi] * s);
    }
    return Conv::channels_last(folded, std::move(bias), in, out, k, stride, k / 2);
  }

  // One image: pixels [3, side, side] -> tokens' positions [grid^2, embed] (channels last).
  void features(const float* pixels, Scratch& s, float* positions) const {
    Map& x = s.x;
    x.resize(side, 3);
    const std::size_t plane = static_cast<std::size_t>(side) * side;
    for (std::size_t p = 0; p < plane; ++p) {
      for (int ch = 0; ch < 3; ++ch)
        x.data[p * 3 + static_cast<std::size_t>(ch)] =
            pixels[static_cast<std::size_t>(ch) * plane + p];
    }
    // Stem: conv 3x3 stride 2, conv 3x3, conv 3x3 (each + ReLU), avgpool 2.
    conv2d(stem[0], s.x, s.y, s.patches, true, false);
    conv2d(stem[1], s.y, s.x, s.patches, true, false);
    conv2d(stem[2], s.x, s.y, s.patches, true, false);
    avg_pool2d(s.y, 2, s.x);
    for (const Block& b : blocks) {
      // identity: x, or the downsample branch (avgpool when strided, 1x1 conv + BN).
      if (b.has_downsample) {
        const Map* src = &s.x;
        if (b.stride > 1) {
          avg_pool2d(s.x, b.stride, s.pooled);
          src = &s.pooled;
        }
        conv2d(b.downsample, *src, s.identity, s.patches, false, false);
      }
      conv2d(b.conv1, s.x, s.h1, s.patches, true, false);
      conv2d(b.conv2, s.h1, s.h2, s.patches, true, false);
      const Map* mid = &s.h2;
      if (b.stride > 1) {
        avg_pool2d(s.h2, b.stride, s.pooled);
        mid = &s.pooled;
      }
      // conv3 adds the identity, then the final ReLU: onto the downsample branch's output, or
      // in place onto x itself (conv3 reads only `mid`).
      if (b.has_downsample) {
        conv2d(b.conv3, *mid, s.identity, s.patches, true, true);
        std::swap(s.x, s.identity);
      } else {
        conv2d(b.conv3, *mid, s.x, s.patches, true, true);
      }
    }
    std::copy(s.x.data.begin(), s.x.data.end(), positions);
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
  int side = m.side / 4;  // after the stem
  auto stem_name = [](const char* pattern, int i) { return fill(pattern, "{i}", i); };
  m.stem[0] = Impl::make_conv(src, stem_name(kNames.stem_conv, 1), stem_name(kNames.stem_bn, 1), 3,
                              w / 2, 3, 2);
  m.stem[1] = Impl::make_conv(src, stem_name(kNames.stem_conv, 2), stem_name(kNames.stem_bn, 2),
                              w / 2, w / 2, 3, 1);
  m.stem[2] = Impl::make_conv(src, stem_name(kNames.stem_conv, 3), stem_name(kNames.stem_bn, 3),
                              w / 2, w, 3, 1);
  int inplanes = w;
  for (int stage = 0; stage < 4; ++stage) {
    const int planes = w << stage;
    for (int b = 0; b < cfg.resnet_layers[static_cast<std::size_t>(stage)]; ++b) {
      const int stride = (stage > 0 && b == 0) ? 2 : 1;
      const std::string p = fill(fill(kNames.block, "{s}", stage + 1), "{b}", b);
      auto conv_name = [&](int i) { return p + fill(kNames.block_conv, "{i}", i); };
      auto bn_name = [&](int i) { return p + fill(kNames.block_bn, "{i}", i); };
      Block blk;
      blk.stride = stride;
      blk.conv1 = Impl::make_conv(src, conv_name(1), bn_name(1), inplanes, planes, 1, 1);
      blk.conv2 = Impl::make_conv(src, conv_name(2), bn_name(2), planes, planes, 3, 1);
      blk.conv3 = Impl::make_conv(src, conv_name(3), bn_name(3), planes, planes * 4, 1, 1);
      if (stride > 1 || inplanes != planes * 4) {
        blk.has_downsample = true;
        blk.downsample = Impl::make_conv(src, p + kNames.downsample_conv, p + kNames.downsample_bn,
                                         inplanes, planes * 4, 1, 1);
      }
      inplanes = planes * 4;
      side /= stride;
      m.blocks.push_back(std::move(blk));
    }
  }
  if (inplanes != m.embed || side != m.grid) {
    throw InputError({"", 0, "visual"}, "the ResNet stages do not end at width * 32");
  }
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
  const std::size_t image = 3 * static_cast<std::size_t>(m.side) * m.side;
  const int t = m.grid * m.grid + 1, e = m.embed, d = e / m.heads;
  const int np = t - 1;
  // tokens: per image [t, e], row 0 for the mean token; positions: layer4's output.
  const std::size_t per_image_tokens = static_cast<std::size_t>(t) * e;
  std::vector<float> positions(static_cast<std::size_t>(count) * np * e),
      tokens(static_cast<std::size_t>(count) * per_image_tokens),
      q(static_cast<std::size_t>(count) * e), kv(static_cast<std::size_t>(count) * t * 2 * e),
      attended(static_cast<std::size_t>(count) * e);
  // With at least as many images as threads, each thread runs whole images (its products on
  // itself); otherwise the images go one by one, each product on every thread. Either way every
  // value is computed the same way (kernels.hpp).
  const bool by_image = count >= compute_threads() && compute_threads() > 1;
  const auto failed = for_each_item_with<Scratch>(count, by_image, [&](int n, Scratch& scratch) {
    m.features(pixels + static_cast<std::size_t>(n) * image, scratch,
               positions.data() + static_cast<std::size_t>(n) * np * e);
  });
  if (failed) std::rethrow_exception(failed);
  // x = cat(mean over positions, positions) + positional_embedding, per image.
  parallel_for(count, [&](int n) {
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
  });
  // q from each image's mean token, k and v from every token.
  std::vector<float> mean_rows(static_cast<std::size_t>(count) * e);
  for (int n = 0; n < count; ++n) {
    std::memcpy(&mean_rows[static_cast<std::size_t>(n) * e],
                tokens.data() + static_cast<std::size_t>(n) * per_image_tokens,
                sizeof(float) * static_cast<std::size_t>(e));
  }
  m.q.forward(mean_rows.data(), count, q.data());
  m.kv.forward(tokens.data(), count * t, kv.data());
  // Multi-head attention of the mean token over all tokens (F.multi_head_attention_forward
  // scales q by 1/sqrt(head dim) before the dot products).
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  single_query_attention(q.data(), kv.data(), count, t, e, m.heads, scale, attended.data());
  m.c.forward(attended.data(), count, embeds);
}

}  // namespace winokit::detail
