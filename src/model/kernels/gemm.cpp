#include "model/kernels/gemm.hpp"

#include "model/kernels/ops.hpp"

#include "winokit/model/compute.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <string>

#include "winokit/core/error.hpp"

namespace winokit {

void set_compute_threads(int threads) {
  omp_set_num_threads(threads > 0 ? threads : omp_get_num_procs());
}
int compute_threads() {
  return omp_get_max_threads();
}

std::string kernel_version() {
  return "winokit-kernels-1";
}

std::string kernel_isa() {
  return detail::kernel_isa();
}

std::string cpu_description() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, name, flags;
  while (std::getline(in, line) && (name.empty() || flags.empty())) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = line.substr(0, line.find_first_of(" \t"));
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(' '));
    if (key == "model" && line.rfind("model name", 0) == 0 && name.empty()) name = value;
    if (key == "flags" && flags.empty()) flags = " " + value + " ";
  }
  if (name.empty()) return "unknown CPU";
  const bool avx512 = flags.find(" avx512f ") != std::string::npos;
  const bool avx2 = flags.find(" avx2 ") != std::string::npos;
  return name + " (" + (avx512 ? "avx512" : avx2 ? "avx2, no avx512" : "no avx2") + ")";
}

nlohmann::json compute_record() {
  return {{"kernels", kernel_version()}, {"kernel_isa", kernel_isa()}, {"cpu", cpu_description()}};
}

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
// Linear::forward splits the output into tasks of at most kTaskRows rows and kMaxTaskPanels
// panels of 16 columns, enough of them to keep every thread busy. A task only decides which
// thread computes which whole elements, never how an element is computed.
constexpr int kTaskRows = 48;
constexpr int kMaxTaskPanels = 64;
constexpr int kTasksPerThread = 4;
}  // namespace

void softmax_inplace(float* row, std::size_t n) {
  if (n == 0) return;
  float mx = row[0];
  for (std::size_t j = 1; j < n; ++j)
    mx = std::max(mx, row[j]);
  for (std::size_t j = 0; j < n; ++j)
    row[j] -= mx;
  exp_inplace(row, n);
  float sum = 0;
  for (std::size_t j = 0; j < n; ++j)
    sum += row[j];
  const float inv = 1.0f / sum;
  for (std::size_t j = 0; j < n; ++j)
    row[j] *= inv;
}

void softmax_rows(float* x, std::size_t ld, int rows, std::size_t n) {
  constexpr int kLanes = 8;
  int i = 0;
  if (n > 0) {
    for (; i + kLanes <= rows; i += kLanes) {
      float* r[kLanes];
      float mx[kLanes], sum[kLanes];
      for (int l = 0; l < kLanes; ++l) {
        r[l] = x + static_cast<std::size_t>(i + l) * ld;
        mx[l] = r[l][0];
        sum[l] = 0;
      }
      // Each row's max and sum in index order, as softmax_inplace; eight chains at once.
      for (std::size_t j = 1; j < n; ++j) {
        for (int l = 0; l < kLanes; ++l)
          mx[l] = std::max(mx[l], r[l][j]);
      }
      for (int l = 0; l < kLanes; ++l) {
        for (std::size_t j = 0; j < n; ++j)
          r[l][j] -= mx[l];
        exp_inplace(r[l], n);
      }
      for (std::size_t j = 0; j < n; ++j) {
        for (int l = 0; l < kLanes; ++l)
          sum[l] += r[l][j];
      }
      for (int l = 0; l < kLanes; ++l) {
        const float inv = 1.0f / sum[l];
        for (std::size_t j = 0; j < n; ++j)
          r[l][j] *= inv;
      }
    }
  }
  for (; i < rows; ++i)
    softmax_inplace(x + static_cast<std::size_t>(i) * ld, n);
}

struct Linear::Impl {
  PackedMatrix weights;
  std::vector<float> bias;
  Epilogue epilogue;
};

Linear::Linear() = default;
Linear::Linear(Linear&&) noexcept = default;
Linear& Linear::operator=(Linear&&) noexcept = default;
Linear::~Linear() = default;

Linear::Linear(const std::vector<float>& weight, const std::vector<float>& bias, int n, int k,
               PostOp post, bool accumulate)
    : impl_(std::make_unique<Impl>()), n_(n), k_(k) {
  if (weight.size() != static_cast<std::size_t>(n) * static_cast<std::size_t>(k)) {
    throw Error("Linear: weight size does not match [" + std::to_string(n) + ", " +
                std::to_string(k) + "]");
  }
  if (!bias.empty() && bias.size() != static_cast<std::size_t>(n)) {
    throw Error("Linear: bias size does not match [" + std::to_string(n) + "]");
  }
  impl_->weights.pack(weight.data(), n, k, static_cast<std::size_t>(k));
  impl_->bias = bias;
  impl_->epilogue.bias = impl_->bias.empty() ? nullptr : impl_->bias.data();
  impl_->epilogue.accumulate = accumulate;
  switch (post) {
    case PostOp::None:
      impl_->epilogue.activation = Activation::None;
      break;
    case PostOp::QuickGelu:
      impl_->epilogue.activation = Activation::QuickGelu;
      break;
    case PostOp::Gelu:
      impl_->epilogue.activation = Activation::Gelu;
      break;
    case PostOp::GeluTanh:
      impl_->epilogue.activation = Activation::GeluTanh;
      break;
  }
}

void matmul(const float* a, std::size_t lda, int m, const PackedMatrix& w, float* y,
            std::size_t ldy, const Epilogue& ep) {
  if (m <= 0) return;
  const int row_blocks = (m + kTaskRows - 1) / kTaskRows;
  const int panels = w.panels();
  const int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  const int wanted = (kTasksPerThread * threads + row_blocks - 1) / row_blocks;
  const int col_blocks =
      std::min(panels, std::max((panels + kMaxTaskPanels - 1) / kMaxTaskPanels, wanted));
  const int panels_per_task = (panels + col_blocks - 1) / col_blocks;
  const int tasks = row_blocks * col_blocks;
  // Column blocks outermost: the threads work through the row blocks of one slice of W at a time.
#pragma omp parallel for schedule(dynamic, 1) if (tasks > 1 && threads > 1)
  for (int t = 0; t < tasks; ++t) {
    const int cb = t / row_blocks, rb = t % row_blocks;
    const int r0 = rb * kTaskRows;
    matmul_block(a + static_cast<std::size_t>(r0) * lda, lda, std::min(kTaskRows, m - r0), w,
                 cb * panels_per_task, (cb + 1) * panels_per_task,
                 y + static_cast<std::size_t>(r0) * ldy, ldy, ep);
  }
}

void Linear::forward(const float* x, int m, float* y) const {
  matmul(x, static_cast<std::size_t>(k_), m, impl_->weights, y, static_cast<std::size_t>(n_),
         impl_->epilogue);
}

}  // namespace detail

void sgemm(bool trans_a, bool trans_b, int m, int n, int k, const float* a, int lda, const float* b,
           int ldb, float* c, int ldc, bool accumulate) {
  if (m <= 0 || n <= 0) return;
  thread_local detail::PackedMatrix w;
  thread_local std::vector<float> a_rows;
  if (trans_b) {
    w.pack(b, n, k, static_cast<std::size_t>(ldb));  // B: [n, k], row j is output column j
  } else {
    w.pack_transposed(b, n, k, static_cast<std::size_t>(ldb));  // B: [k, n]
  }
  const float* x = a;
  std::size_t ldx = static_cast<std::size_t>(lda);
  if (trans_a) {  // A: [k, m] -> rows of op(A)
    a_rows.resize(static_cast<std::size_t>(m) * static_cast<std::size_t>(k));
    for (int p = 0; p < k; ++p) {
      const float* src = a + static_cast<std::size_t>(p) * static_cast<std::size_t>(lda);
      for (int i = 0; i < m; ++i)
        a_rows[static_cast<std::size_t>(i) * static_cast<std::size_t>(k) + p] = src[i];
    }
    x = a_rows.data();
    ldx = static_cast<std::size_t>(k);
  }
  detail::Epilogue ep;
  ep.accumulate = accumulate;
  detail::matmul(x, ldx, m, w, c, static_cast<std::size_t>(ldc), ep);
}

namespace detail {

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

void attention(const float* qkv, const std::vector<std::size_t>& offsets,
               const std::vector<std::size_t>& lengths, int width, int heads, bool causal,
               float* out) {
  const int d = width / heads;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  const std::size_t stride = 3 * static_cast<std::size_t>(width);
  attend_heads(static_cast<int>(offsets.size()) * heads, d, scale, [&](int t) {
    const std::size_t s = static_cast<std::size_t>(t / heads);
    const std::size_t h = static_cast<std::size_t>(t % heads);
    const float* base = qkv + offsets[s] * stride + h * static_cast<std::size_t>(d);
    HeadTask task;
    task.q = base;
    task.ldq = stride;
    task.queries = static_cast<int>(lengths[s]);
    task.k = base + width;
    task.v = base + 2 * static_cast<std::size_t>(width);
    task.ldkv = stride;
    task.keys = task.queries;
    task.out = out + offsets[s] * static_cast<std::size_t>(width) + h * static_cast<std::size_t>(d);
    task.ldo = static_cast<std::size_t>(width);
    task.causal_past = causal ? 0 : -1;
    return task;
  });
}

void attention_fixed(const float* qkv, int seqs, int len, int width, int heads, bool causal,
                     float* out) {
  std::vector<std::size_t> offsets(static_cast<std::size_t>(seqs)),
      lengths(static_cast<std::size_t>(seqs), static_cast<std::size_t>(len));
  for (int s = 0; s < seqs; ++s)
    offsets[static_cast<std::size_t>(s)] =
        static_cast<std::size_t>(s) * static_cast<std::size_t>(len);
  attention(qkv, offsets, lengths, width, heads, causal, out);
}

namespace {

// LayerNorm of L rows at once: each row's mean and variance in double in index order, as
// PyTorch's definition; the rows' chains interleaved so that their latencies overlap.
template <int L>
void layer_norm_rows(const float* x, int width, const float* g, const float* b, double eps,
                     float* y) {
  double mean[L], var[L];
  for (int l = 0; l < L; ++l)
    mean[l] = 0;
  for (int i = 0; i < width; ++i) {
    for (int l = 0; l < L; ++l)
      mean[l] += x[static_cast<std::size_t>(l) * width + i];
  }
  for (int l = 0; l < L; ++l) {
    mean[l] /= width;
    var[l] = 0;
  }
  for (int i = 0; i < width; ++i) {
    for (int l = 0; l < L; ++l) {
      const double v = x[static_cast<std::size_t>(l) * width + i] - mean[l];
      var[l] += v * v;
    }
  }
  for (int l = 0; l < L; ++l) {
    var[l] /= width;
    const double inv = 1.0 / std::sqrt(var[l] + eps);
    const float* in = x + static_cast<std::size_t>(l) * width;
    float* out = y + static_cast<std::size_t>(l) * width;
    for (int i = 0; i < width; ++i)
      out[i] = static_cast<float>((in[i] - mean[l]) * inv * g[i] + b[i]);
  }
}

}  // namespace

void layer_norm(const float* x, std::size_t rows, int width, const std::vector<float>& g,
                const std::vector<float>& b, double eps, float* y) {
  constexpr std::size_t kLanes = 4;
  const std::size_t groups = (rows + kLanes - 1) / kLanes;
#pragma omp parallel for schedule(static)
  for (std::size_t gi = 0; gi < groups; ++gi) {
    const std::size_t r0 = gi * kLanes;
    const std::size_t off = r0 * static_cast<std::size_t>(width);
    if (rows - r0 >= kLanes) {
      layer_norm_rows<kLanes>(x + off, width, g.data(), b.data(), eps, y + off);
    } else {
      for (std::size_t r = r0; r < rows; ++r) {
        const std::size_t o = r * static_cast<std::size_t>(width);
        layer_norm_rows<1>(x + o, width, g.data(), b.data(), eps, y + o);
      }
    }
  }
}

}  // namespace winokit::detail
