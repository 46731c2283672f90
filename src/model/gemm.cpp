#include "gemm.hpp"

#include "winokit/model/compute.hpp"

#include <omp.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <dnnl.hpp>
#include <map>
#include <mutex>

#include "winokit/core/error.hpp"

namespace winokit {

void set_compute_threads(int threads) {
  omp_set_num_threads(threads > 0 ? threads : omp_get_num_procs());
}
int compute_threads() {
  return omp_get_max_threads();
}

namespace detail {
namespace {
dnnl::engine& cpu_engine();
}
}  // namespace detail

double gemm_gflops(int m, int n, int k, int runs) {
  std::vector<float> w(static_cast<std::size_t>(n) * k, 0.01f);
  std::vector<float> x(static_cast<std::size_t>(m) * k, 0.5f), y(static_cast<std::size_t>(m) * n);
  detail::Linear layer(w, {}, n, k);
  layer.forward(x.data(), m, y.data());
  std::vector<double> rates;
  for (int r = 0; r < std::max(1, runs); ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    layer.forward(x.data(), m, y.data());
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    rates.push_back(2.0 * m * n * k / s / 1e9);
  }
  std::sort(rates.begin(), rates.end());
  return rates[rates.size() / 2];
}

namespace detail {

namespace {
dnnl::engine& cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}
// quick_gelu(x) = x * sigmoid(1.702 x) is oneDNN's swish with alpha 1.702.
constexpr float kQuickGeluAlpha = 1.702f;
}  // namespace

struct Linear::Impl {
  dnnl::memory weights;  // in the primitive's layout
  dnnl::memory bias;
  std::vector<float> bias_data;
  PostOp post = PostOp::None;
  bool accumulate = false;
  dnnl::memory::desc weights_desc;
  mutable std::mutex mutex;
  struct Prepared {
    dnnl::matmul prim;
    dnnl::memory weights;  // impl weights, or a copy in another layout this M needs
  };
  mutable std::map<int, Prepared> primitives;

  dnnl::primitive_attr attr() const {
    dnnl::primitive_attr a;
    dnnl::post_ops ops;
    if (post == PostOp::QuickGelu) {
      ops.append_eltwise(1.f, dnnl::algorithm::eltwise_swish, kQuickGeluAlpha, 0.f);
    } else if (post == PostOp::Gelu) {
      ops.append_eltwise(1.f, dnnl::algorithm::eltwise_gelu_erf, 0.f, 0.f);
    } else if (post == PostOp::GeluTanh) {
      ops.append_eltwise(1.f, dnnl::algorithm::eltwise_gelu_tanh, 0.f, 0.f);
    }
    if (accumulate) ops.append_sum(1.f);
    a.set_post_ops(ops);
    return a;
  }
  dnnl::matmul::primitive_desc describe(int m, int n, int k, bool any_weights) const {
    using dt = dnnl::memory::data_type;
    using tag = dnnl::memory::format_tag;
    dnnl::memory::desc src({m, k}, dt::f32, tag::ab);
    dnnl::memory::desc w =
        any_weights ? dnnl::memory::desc({k, n}, dt::f32, tag::any) : weights_desc;
    dnnl::memory::desc b({1, n}, dt::f32, tag::ab);
    dnnl::memory::desc dst({m, n}, dt::f32, tag::ab);
    return dnnl::matmul::primitive_desc(dnnl::matmul::desc(src, w, b, dst), attr(), cpu_engine());
  }
};

Linear::Linear() = default;
Linear::Linear(Linear&&) noexcept = default;
Linear& Linear::operator=(Linear&&) noexcept = default;
Linear::~Linear() = default;

// Packing uses a representative M; the packed layout does not depend on M for brgemm kernels,
// and describe() below re-creates primitives with that exact weights layout for every M.
constexpr int kPackingRows = 256;

Linear::Linear(const std::vector<float>& weight, const std::vector<float>& bias, int n, int k,
               PostOp post, bool accumulate)
    : impl_(std::make_unique<Impl>()), n_(n), k_(k) {
  if (weight.size() != static_cast<std::size_t>(n) * static_cast<std::size_t>(k)) {
    throw Error("Linear: weight size does not match [" + std::to_string(n) + ", " +
                std::to_string(k) + "]");
  }
  impl_->post = post;
  impl_->accumulate = accumulate;
  impl_->bias_data = bias.empty() ? std::vector<float>(static_cast<std::size_t>(n), 0.f) : bias;
  auto pd = impl_->describe(kPackingRows, n, k, /*any_weights=*/true);
  impl_->weights_desc = pd.weights_desc();
  using dt = dnnl::memory::data_type;
  // W is [N, K] row-major, i.e. the [K, N] matrix in "ba" order.
  dnnl::memory::desc user({k, n}, dt::f32, dnnl::memory::format_tag::ba);
  dnnl::memory src(user, cpu_engine(), const_cast<float*>(weight.data()));
  impl_->weights = dnnl::memory(impl_->weights_desc, cpu_engine());
  dnnl::stream stream(cpu_engine());
  dnnl::reorder(src, impl_->weights).execute(stream, src, impl_->weights);
  stream.wait();
  impl_->bias = dnnl::memory({{1, n}, dt::f32, dnnl::memory::format_tag::ab}, cpu_engine(),
                             impl_->bias_data.data());
}

void Linear::forward(const float* x, int m, float* y) const {
  if (m <= 0) return;
  Impl::Prepared prepared;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    auto it = impl_->primitives.find(m);
    if (it == impl_->primitives.end()) {
      Impl::Prepared p;
      try {
        p.prim = dnnl::matmul(impl_->describe(m, n_, k_, /*any_weights=*/false));
        p.weights = impl_->weights;
      } catch (const dnnl::error&) {
        // No kernel takes the packed layout at this M: repack for it once.
        auto pd = impl_->describe(m, n_, k_, /*any_weights=*/true);
        p.prim = dnnl::matmul(pd);
        p.weights = dnnl::memory(pd.weights_desc(), cpu_engine());
        dnnl::stream stream(cpu_engine());
        dnnl::reorder(impl_->weights, p.weights).execute(stream, impl_->weights, p.weights);
        stream.wait();
      }
      it = impl_->primitives.emplace(m, std::move(p)).first;
    }
    prepared = it->second;
  }
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  dnnl::memory src({{m, k_}, dt::f32, tag::ab}, cpu_engine(), const_cast<float*>(x));
  dnnl::memory dst({{m, n_}, dt::f32, tag::ab}, cpu_engine(), y);
  dnnl::stream stream(cpu_engine());
  prepared.prim.execute(stream, {{DNNL_ARG_SRC, src},
                                 {DNNL_ARG_WEIGHTS, prepared.weights},
                                 {DNNL_ARG_BIAS, impl_->bias},
                                 {DNNL_ARG_DST, dst}});
  stream.wait();
}

void reference_linear(const float* x, int m, const std::vector<float>& weight,
                      const std::vector<float>& bias, int n, int k, float* y) {
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      double s = bias.empty() ? 0.0 : bias[static_cast<std::size_t>(j)];
      for (int p = 0; p < k; ++p) {
        s += static_cast<double>(x[static_cast<std::size_t>(i) * k + p]) *
             weight[static_cast<std::size_t>(j) * k + p];
      }
      y[static_cast<std::size_t>(i) * n + j] = static_cast<float>(s);
    }
  }
}

}  // namespace detail
}  // namespace winokit

namespace winokit::detail {

struct BatchedAttention::Impl {
  struct Prims {
    dnnl::matmul scores, values;
  };
  std::mutex mutex;
  std::map<std::array<int, 4>, Prims> cache;
};

BatchedAttention::BatchedAttention() : impl_(std::make_unique<Impl>()) {}
BatchedAttention::~BatchedAttention() = default;

void BatchedAttention::run(const float* qkv, int seqs, int len, int width, int heads,
                           float* out) const {
  using dt = dnnl::memory::data_type;
  using dims = dnnl::memory::dims;
  const int d = width / heads;
  const dnnl::memory::dim S = len, D = d, W = width, H = heads, B = seqs;
  // Views of qkv as [B, H, S, D] with the row stride 3W; K viewed transposed as [B, H, D, S].
  dnnl::memory::desc q_md(dims{B, H, S, D}, dt::f32, dims{S * 3 * W, D, 3 * W, 1});
  dnnl::memory::desc kt_md(dims{B, H, D, S}, dt::f32, dims{S * 3 * W, D, 1, 3 * W});
  dnnl::memory::desc p_md(dims{B, H, S, S}, dt::f32, dims{H * S * S, S * S, S, 1});
  dnnl::memory::desc v_md(dims{B, H, S, D}, dt::f32, dims{S * 3 * W, D, 3 * W, 1});
  dnnl::memory::desc o_md(dims{B, H, S, D}, dt::f32, dims{S * W, D, W, 1});
  Impl::Prims prims;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    const std::array<int, 4> key = {seqs, len, width, heads};
    auto it = impl_->cache.find(key);
    if (it == impl_->cache.end()) {
      dnnl::primitive_attr scale_attr;
      scale_attr.set_output_scales(0, {1.0f / std::sqrt(static_cast<float>(d))});
      Impl::Prims p;
      p.scores = dnnl::matmul(dnnl::matmul::primitive_desc(dnnl::matmul::desc(q_md, kt_md, p_md),
                                                           scale_attr, cpu_engine()));
      p.values = dnnl::matmul(
          dnnl::matmul::primitive_desc(dnnl::matmul::desc(p_md, v_md, o_md), cpu_engine()));
      it = impl_->cache.emplace(key, std::move(p)).first;
    }
    prims = it->second;
  }
  std::vector<float> probs(static_cast<std::size_t>(B * H * S * S));
  auto* base = const_cast<float*>(qkv);
  dnnl::memory q(q_md, cpu_engine(), base), k(kt_md, cpu_engine(), base + width),
      v(v_md, cpu_engine(), base + 2 * static_cast<std::size_t>(width)),
      p(p_md, cpu_engine(), probs.data()), o(o_md, cpu_engine(), out);
  dnnl::stream stream(cpu_engine());
  prims.scores.execute(stream, {{DNNL_ARG_SRC, q}, {DNNL_ARG_WEIGHTS, k}, {DNNL_ARG_DST, p}});
  stream.wait();
  const std::size_t rows = static_cast<std::size_t>(B * H * S), n = static_cast<std::size_t>(S);
#pragma omp parallel for schedule(static)
  for (std::size_t r = 0; r < rows; ++r) {
    softmax_inplace(&probs[r * n], n);
  }
  prims.values.execute(stream, {{DNNL_ARG_SRC, p}, {DNNL_ARG_WEIGHTS, v}, {DNNL_ARG_DST, o}});
  stream.wait();
}

void ragged_attention(const float* qkv, const std::vector<std::size_t>& offsets,
                      const std::vector<std::size_t>& lengths, int width, int heads, float* out) {
  const int d = width / heads;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  const std::size_t stride = 3 * static_cast<std::size_t>(width);
  const int seqs = static_cast<int>(offsets.size());
  std::size_t longest = 0;
  for (auto l : lengths)
    longest = std::max(longest, l);
#pragma omp parallel
  {
    std::vector<float> kt(static_cast<std::size_t>(d) * longest), scores(longest),
        acc(static_cast<std::size_t>(d));
#pragma omp for collapse(2) schedule(dynamic)
    for (int s = 0; s < seqs; ++s) {
      for (int h = 0; h < heads; ++h) {
        const std::size_t n = lengths[static_cast<std::size_t>(s)];
        const float* base = qkv + offsets[static_cast<std::size_t>(s)] * stride;
        for (std::size_t j = 0; j < n; ++j) {
          const float* kj = base + j * stride + width + static_cast<std::size_t>(h) * d;
          for (int k = 0; k < d; ++k)
            kt[static_cast<std::size_t>(k) * n + j] = kj[k];
        }
        for (std::size_t i = 0; i < n; ++i) {
          const float* qi = base + i * stride + static_cast<std::size_t>(h) * d;
          std::fill(scores.begin(), scores.begin() + static_cast<std::ptrdiff_t>(n), 0.0f);
          for (int k = 0; k < d; ++k) {
            const float qk = qi[k];
            const float* row = &kt[static_cast<std::size_t>(k) * n];
            for (std::size_t j = 0; j < n; ++j)
              scores[j] += qk * row[j];
          }
          for (std::size_t j = 0; j < n; ++j)
            scores[j] *= scale;
          softmax_inplace(scores.data(), n);
          std::fill(acc.begin(), acc.end(), 0.0f);
          for (std::size_t j = 0; j < n; ++j) {
            const float p = scores[j];
            const float* vj = base + j * stride + 2 * static_cast<std::size_t>(width) +
                              static_cast<std::size_t>(h) * d;
            for (int k = 0; k < d; ++k)
              acc[static_cast<std::size_t>(k)] += p * vj[k];
          }
          std::copy(acc.begin(), acc.end(),
                    out + (offsets[static_cast<std::size_t>(s)] + i) * width +
                        static_cast<std::size_t>(h) * d);
        }
      }
    }
  }
}

void layer_norm(const float* x, std::size_t rows, int width, const std::vector<float>& g,
                const std::vector<float>& b, double eps, float* y) {
#pragma omp parallel for schedule(static)
  for (std::size_t r = 0; r < rows; ++r) {
    const float* in = x + r * width;
    float* out = y + r * width;
    double mean = 0;
    for (int i = 0; i < width; ++i)
      mean += in[i];
    mean /= width;
    double var = 0;
    for (int i = 0; i < width; ++i)
      var += (in[i] - mean) * (in[i] - mean);
    var /= width;
    const double inv = 1.0 / std::sqrt(var + eps);
    for (int i = 0; i < width; ++i) {
      out[i] = static_cast<float>((in[i] - mean) * inv * g[static_cast<std::size_t>(i)] +
                                  b[static_cast<std::size_t>(i)]);
    }
  }
}

}  // namespace winokit::detail
