#include "model/kernels/ops.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "model/kernels/gemm.hpp"
#include "model/kernels/parallel.hpp"

namespace winokit::detail {

// ---- attention ----

void attend_heads(int tasks, int d, float scale, const std::function<HeadTask(int)>& task) {
#pragma omp parallel if (tasks > 1)
  {
    PackedMatrix keys, values_t;
    std::vector<float> scores;
    Epilogue scaled;
    scaled.scale = scale;
    const Epilogue plain;
#pragma omp for schedule(dynamic, 1)
    for (int t = 0; t < tasks; ++t) {
      const HeadTask h = task(t);
      const int n = h.queries, m = h.keys;
      if (n == 0) continue;
      const std::size_t ldm = static_cast<std::size_t>(m);
      // scores [n, m] = Q [n, d] K^T: K's rows are the "weights" of the product.
      keys.pack(h.k, m, d, h.ldkv);
      scores.resize(static_cast<std::size_t>(n) * ldm);
      matmul_block(h.q, h.ldq, n, keys, 0, keys.panels(), scores.data(), ldm, scaled);
      if (h.causal_past >= 0) {
        for (int i = 0; i < n; ++i) {
          float* row = scores.data() + static_cast<std::size_t>(i) * ldm;
          const int visible = h.causal_past + i + 1;
          softmax_inplace(row, static_cast<std::size_t>(visible));
          std::fill(row + visible, row + m, 0.0f);
        }
      } else {
        softmax_rows(scores.data(), ldm, n, ldm);
      }
      // out [n, d] = P [n, m] V [m, d]: V^T [d, m] as the "weights".
      values_t.pack_transposed(h.v, d, m, h.ldkv);
      matmul_block(scores.data(), ldm, n, values_t, 0, values_t.panels(), h.out, h.ldo, plain);
    }
  }
}

void single_query_attention(const float* q, const float* kv, int count, int tokens, int width,
                            int heads, float scale, float* out) {
  const int d = width / heads, t = tokens, e = width;
  parallel_for(count * heads, [&](int task) {
    const int n = task / heads, h = task % heads;
    std::vector<float> sc(static_cast<std::size_t>(t));
    const std::size_t head = static_cast<std::size_t>(h) * static_cast<std::size_t>(d);
    const float* qh = q + static_cast<std::size_t>(n) * e + head;
    const float* kvn = kv + static_cast<std::size_t>(n) * t * 2 * e;
    for (int j = 0; j < t; ++j) {
      const float* kj = kvn + static_cast<std::size_t>(j) * 2 * e + head;
      float dot = 0;
      for (int k = 0; k < d; ++k)
        dot += (qh[k] * scale) * kj[k];
      sc[static_cast<std::size_t>(j)] = dot;
    }
    softmax_inplace(sc.data(), static_cast<std::size_t>(t));
    float* oh = out + static_cast<std::size_t>(n) * e + head;
    std::fill(oh, oh + d, 0.f);
    for (int j = 0; j < t; ++j) {
      const float p = sc[static_cast<std::size_t>(j)];
      const float* vj = kvn + static_cast<std::size_t>(j) * 2 * e + e + head;
      for (int k = 0; k < d; ++k)
        oh[k] += p * vj[k];
    }
  });
}

// ---- normalisation, position, activation ----

void rms_norm(const float* x, std::size_t rows, int width, const std::vector<float>& g, double eps,
              float* y) {
  parallel_for(rows, [&](std::size_t r) {
    const float* in = x + r * static_cast<std::size_t>(width);
    float* out = y + r * static_cast<std::size_t>(width);
    double ss = 0;
    for (int i = 0; i < width; ++i)
      ss += static_cast<double>(in[i]) * in[i];
    const double inv = 1.0 / std::sqrt(ss / width + eps);
    for (int i = 0; i < width; ++i)
      out[i] = static_cast<float>(in[i] * inv) * g[static_cast<std::size_t>(i)];
  });
}

void rotary_rows(float* x, std::size_t rows, std::size_t ld, int heads, int d, const float* cosv,
                 const float* sinv) {
  const int half = d / 2;
  parallel_for(rows, [&](std::size_t r) {
    const float* c = cosv + r * static_cast<std::size_t>(half);
    const float* s = sinv + r * static_cast<std::size_t>(half);
    for (int h = 0; h < heads; ++h) {
      float* v = x + r * ld + static_cast<std::size_t>(h) * static_cast<std::size_t>(d);
      for (int i = 0; i < half; ++i) {
        const float a = v[i], b = v[i + half];
        v[i] = a * c[i] - b * s[i];
        v[i + half] = b * c[i] + a * s[i];
      }
    }
  });
}

void silu_mul_rows(const float* gate_up, std::size_t rows, int width, float* out) {
  const std::size_t w = static_cast<std::size_t>(width);
  parallel_for(rows, [&](std::size_t r) {
    const float* g = gate_up + r * 2 * w;
    const float* u = g + w;
    float* a = out + r * w;
    thread_local std::vector<float> e;
    e.resize(w);
    for (std::size_t i = 0; i < w; ++i)
      e[i] = -g[i];
    exp_inplace(e.data(), e.size());
    for (std::size_t i = 0; i < w; ++i)
      a[i] = g[i] / (1.0f + e[i]) * u[i];
  });
}

namespace {

// e = exp(row - max(row)) by the kernels' exp, and the sum of e in float64 in 8 interleaved
// partial sums (lane l: e[l], e[l + 8], ... in order) added in a fixed order; returns the sum.
double shifted_exp_sum(const float* row, int n, float& mx, std::vector<float>& e) {
  mx = -INFINITY;
  for (int j = 0; j < n; ++j)
    mx = std::max(mx, row[j]);
  e.resize(static_cast<std::size_t>(n));
  for (int j = 0; j < n; ++j)
    e[static_cast<std::size_t>(j)] = row[j] - mx;
  exp_inplace(e.data(), e.size());
  constexpr int kLanes = 8;
  double part[kLanes] = {};
  int j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    for (int l = 0; l < kLanes; ++l)
      part[l] += static_cast<double>(e[static_cast<std::size_t>(j + l)]);
  }
  for (; j < n; ++j)
    part[j % kLanes] += static_cast<double>(e[static_cast<std::size_t>(j)]);
  double sum = 0;
  for (double p : part)
    sum += p;
  return sum;
}

}  // namespace

double log_softmax_at(const float* row, int n, int target) {
  thread_local std::vector<float> e;
  float mx = 0;
  const double sum = shifted_exp_sum(row, n, mx, e);
  return static_cast<double>(row[target] - mx) - std::log(sum);
}

double softmax_at(const float* row, int n, int target) {
  thread_local std::vector<float> e;
  float mx = 0;
  const double sum = shifted_exp_sum(row, n, mx, e);
  // The numerator is the kernels' exp too (no libm call: the same bits on every CPU).
  return static_cast<double>(e[static_cast<std::size_t>(target)]) / sum;
}

// ---- images ----

void image_patches(const float* pixels, int count, int channels, int side, int patch, float* cols) {
  const int grid = side / patch, per_image = grid * grid;
  const std::size_t k = static_cast<std::size_t>(channels) * patch * patch;
  const std::size_t plane = static_cast<std::size_t>(side) * static_cast<std::size_t>(side);
  parallel_for(static_cast<std::size_t>(count) * per_image, [&](std::size_t r) {
    const std::size_t img = r / static_cast<std::size_t>(per_image);
    const int p = static_cast<int>(r % static_cast<std::size_t>(per_image));
    const int gy = p / grid, gx = p % grid;
    float* dst = cols + r * k;
    for (int ch = 0; ch < channels; ++ch) {
      const float* src = pixels + (img * channels + static_cast<std::size_t>(ch)) * plane +
                         static_cast<std::size_t>(gy * patch) * side +
                         static_cast<std::size_t>(gx * patch);
      for (int y = 0; y < patch; ++y) {
        std::memcpy(dst + (static_cast<std::size_t>(ch) * patch + y) * patch,
                    src + static_cast<std::size_t>(y) * side, sizeof(float) * patch);
      }
    }
  });
}

Conv2d Conv2d::channels_last(const std::vector<float>& weights, std::vector<float> bias, int in,
                             int out, int k, int stride, int pad) {
  Conv2d c;
  c.in = in;
  c.out = out;
  c.k = k;
  c.stride = stride;
  c.pad = pad;
  const std::size_t per = static_cast<std::size_t>(in) * k * k;
  c.weights.pack(weights.data(), out, static_cast<int>(per), per);
  c.bias = std::move(bias);
  return c;
}

namespace {

// Output pixels [r0, r1) of a convolution's im2col matrix: row r - r0 of `dst` holds pixel r's
// (kh, kw, ic) patch, zeros where it overlaps the padding.
void im2col(const Conv2d& c, const FeatureMap& x, int os, int r0, int r1, float* dst) {
  const std::size_t ch = static_cast<std::size_t>(c.in);
  const std::size_t span = static_cast<std::size_t>(c.k) * ch;
  for (int r = r0; r < r1; ++r) {
    const int oh = r / os, ow = r % os;
    const int iw0 = ow * c.stride - c.pad;
    for (int kh = 0; kh < c.k; ++kh) {
      const int ih = oh * c.stride + kh - c.pad;
      if (ih < 0 || ih >= x.side) {
        std::fill(dst, dst + span, 0.0f);
        dst += span;
        continue;
      }
      const float* row = x.data.data() + static_cast<std::size_t>(ih) * x.side * ch;
      if (c.stride == 1 && iw0 >= 0 && iw0 + c.k <= x.side) {
        // The k pixels of this patch row are adjacent in the input: one copy.
        std::memcpy(dst, row + static_cast<std::size_t>(iw0) * ch, span * sizeof(float));
        dst += span;
        continue;
      }
      for (int kw = 0; kw < c.k; ++kw, dst += ch) {
        const int iw = iw0 + kw;
        if (iw < 0 || iw >= x.side) {
          std::fill(dst, dst + ch, 0.0f);
        } else {
          const float* src = row + static_cast<std::size_t>(iw) * ch;
          for (std::size_t i = 0; i < ch; ++i)
            dst[i] = src[i];
        }
      }
    }
  }
}

// When one thread runs the whole image, im2col and the product go chunk by chunk, each chunk's
// patches about this size, so that they are still in the core's cache when the product reads
// them; a chunk is whole row blocks of the kernels (48 rows) and a short tail joins the chunk
// before it.
constexpr std::size_t kConvChunkBytes = 384 << 10;
constexpr int kConvChunkAlign = 48;

int conv_chunk_rows(std::size_t patch_floats) {
  const std::size_t fit = kConvChunkBytes / (patch_floats * sizeof(float));
  const int aligned = static_cast<int>(fit / kConvChunkAlign) * kConvChunkAlign;
  return std::max(kConvChunkAlign, aligned);
}

}  // namespace

void conv2d(const Conv2d& c, const FeatureMap& x, FeatureMap& y, std::vector<float>& patches,
            bool relu, bool accumulate) {
  const int os = c.out_side(x.side);
  if (!accumulate) y.resize(os, c.out);
  const int rows = os * os;
  const std::size_t kk = static_cast<std::size_t>(c.k) * c.k * c.in;
  const std::size_t ldy = static_cast<std::size_t>(c.out);
  Epilogue ep;
  ep.bias = c.bias.data();
  ep.activation = relu ? Activation::Relu : Activation::None;
  ep.accumulate = accumulate;
  if (c.k == 1 && c.stride == 1) {
    matmul(x.data.data(), static_cast<std::size_t>(c.in), rows, c.weights, y.data.data(), ldy, ep);
    return;
  }
  if (omp_in_parallel()) {
    // This thread runs the image alone: im2col and multiply chunk by chunk. Rows are
    // independent (kernels.hpp), so chunking changes no value.
    const int chunk = conv_chunk_rows(kk);
    patches.resize(static_cast<std::size_t>(std::min(rows, chunk + chunk / 2)) * kk);
    for (int r0 = 0, r1 = 0; r0 < rows; r0 = r1) {
      r1 = rows - r0 <= chunk + chunk / 2 ? rows : r0 + chunk;
      im2col(c, x, os, r0, r1, patches.data());
      matmul(patches.data(), kk, r1 - r0, c.weights,
             y.data.data() + static_cast<std::size_t>(r0) * ldy, ldy, ep);
    }
    return;
  }
  patches.resize(static_cast<std::size_t>(rows) * kk);
  parallel_for(rows, [&](int r) {
    im2col(c, x, os, r, r + 1, patches.data() + static_cast<std::size_t>(r) * kk);
  });
  matmul(patches.data(), kk, rows, c.weights, y.data.data(), ldy, ep);
}

void avg_pool2d(const FeatureMap& x, int s, FeatureMap& y) {
  const int os = x.side / s;
  y.resize(os, x.channels);
  const std::size_t ch = static_cast<std::size_t>(x.channels);
  const float count = static_cast<float>(s * s);
  parallel_for(os * os, [&](int r) {
    const int oh = r / os, ow = r % os;
    float* dst = y.data.data() + static_cast<std::size_t>(r) * ch;
    std::fill(dst, dst + ch, 0.0f);
    for (int kh = 0; kh < s; ++kh) {
      for (int kw = 0; kw < s; ++kw) {
        const float* src =
            x.data.data() + (static_cast<std::size_t>(oh * s + kh) * x.side + ow * s + kw) * ch;
        for (std::size_t c = 0; c < ch; ++c)
          dst[c] += src[c];
      }
    }
    for (std::size_t c = 0; c < ch; ++c)
      dst[c] /= count;
  });
}

// ---- pooling over tokens ----

void mean_max_over_tokens(const float* x, int count, int len, int width, const int* tokens,
                          float* mean, float* max) {
  const std::size_t w = static_cast<std::size_t>(width);
  parallel_for(count, [&](int b) {
    const int n = tokens[b];
    const float* first = x + static_cast<std::size_t>(b) * len * w;
    float* mean_b = mean + static_cast<std::size_t>(b) * w;
    float* max_b = max + static_cast<std::size_t>(b) * w;
    std::vector<double> sum(first, first + w);
    std::copy(first, first + w, max_b);
    for (int t = 1; t < n; ++t) {
      const float* row = first + static_cast<std::size_t>(t) * w;
      for (std::size_t i = 0; i < w; ++i) {
        sum[i] += row[i];
        max_b[i] = std::max(max_b[i], row[i]);
      }
    }
    for (std::size_t i = 0; i < w; ++i)
      mean_b[i] = static_cast<float>(sum[i] / n);
  });
}

}  // namespace winokit::detail
