// Packing, CPU dispatch and the portable micro-kernel (kernels.hpp). The AVX2 + FMA kernel is in
// kernels_avx2.cpp, the AVX-512 one in kernels_avx512.cpp; all run the same operations per
// element, so the dispatch changes the speed and never the bits.
#include "model/kernels/kernels.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>

#include "model/kernels/kernel_math.hpp"

namespace winokit::detail {

void matmul_block_avx2(const float* a, std::size_t lda, int m, const PackedMatrix& b,
                       int panel_begin, int panel_end, float* y, std::size_t ldy,
                       const Epilogue& ep);
void matmul_block_avx512(const float* a, std::size_t lda, int m, const PackedMatrix& b,
                         int panel_begin, int panel_end, float* y, std::size_t ldy,
                         const Epilogue& ep);
void apply_activation_avx2(Activation act, float* x, std::size_t n);
void exp_inplace_avx2(float* x, std::size_t n);

namespace {

enum class Isa { Portable, Avx2, Avx512 };

// What this CPU (and its operating system) runs; __builtin_cpu_supports checks both.
Isa cpu_isa() {
#if defined(__x86_64__) || defined(__i386__)
  static const Isa isa = [] {
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return Isa::Portable;
    return __builtin_cpu_supports("avx512f") ? Isa::Avx512 : Isa::Avx2;
  }();
  return isa;
#else
  return Isa::Portable;
#endif
}

// WINOKIT_KERNEL=portable runs the portable kernel on any CPU, WINOKIT_KERNEL=avx2 the AVX2 one
// on an AVX-512 CPU (to check that the bits agree); the kernels never run above the CPU's ISA.
Isa isa_from_environment() {
  const char* v = std::getenv("WINOKIT_KERNEL");
  const std::string want = v != nullptr ? v : "";
  if (want == "portable") return Isa::Portable;
  if (want == "avx2") return std::min(cpu_isa(), Isa::Avx2);
  return cpu_isa();
}

std::atomic<Isa> active_isa{isa_from_environment()};

Isa isa() {
  return active_isa.load(std::memory_order_relaxed);
}

bool has_avx2_fma() {
  return isa() >= Isa::Avx2;
}

struct PortableKernel {
  static constexpr int kPanels = 1;
  template <bool Packed>
  static void micro(int rows, const float* a, std::size_t lda, const float* b, int kc, float* part,
                    std::size_t ldp, bool first, const FinalOut* out) {
    for (int r = 0; r < rows; ++r) {
      float* dst = part + static_cast<std::size_t>(r) * ldp;
      float acc[kPanel];
      for (int c = 0; c < kPanel; ++c)
        acc[c] = first ? 0.0f : dst[c];
      // k outermost: each acc[c] is its own chain in k order (the compiler may run the 16
      // chains side by side in vector registers; each chain's operations stay the same).
      for (int k = 0; k < kc; ++k) {
        const float av = Packed
                             ? a[static_cast<std::size_t>(k) * kMicroRows + r]
                             : a[static_cast<std::size_t>(r) * lda + static_cast<std::size_t>(k)];
        const float* bk = b + static_cast<std::size_t>(k) * kPanel;
        for (int c = 0; c < kPanel; ++c)
          acc[c] = std::fma(av, bk[c], acc[c]);
      }
      if (out != nullptr) {
        epilogue(*out->ep, acc, out->bias, out->y + static_cast<std::size_t>(r) * out->ldy, kPanel);
      } else {
        for (int c = 0; c < kPanel; ++c)
          dst[c] = acc[c];
      }
    }
  }
  static void epilogue(const Epilogue& ep, const float* part, const float* bias, float* y,
                       int cols) {
    for (int j = 0; j < cols; ++j) {
      y[j] = epilogue_t<ScalarOps>(ep, part[j], bias != nullptr ? bias[j] : 0.0f,
                                   ep.accumulate ? y[j] : 0.0f);
    }
  }
};

}  // namespace

void PackedMatrix::pack(const float* w, int n, int k, std::size_t row_stride) {
  n_ = n;
  k_ = k;
  data_.resize(static_cast<std::size_t>(panels()) * static_cast<std::size_t>(k) * kPanel);
  // Panel by panel, 16 rows of W read side by side so that the panel is written in order.
  for (int p0 = 0; p0 < panels(); ++p0) {
    const int j0 = p0 * kPanel;
    const int cols = std::min(kPanel, n - j0);
    const float* rows[kPanel];
    for (int c = 0; c < cols; ++c)
      rows[c] = w + static_cast<std::size_t>(j0 + c) * row_stride;
    float* dst = data_.data() + static_cast<std::size_t>(p0) * k * kPanel;
    for (int p = 0; p < k; ++p) {
      float* d = dst + static_cast<std::size_t>(p) * kPanel;
      for (int c = 0; c < cols; ++c)
        d[c] = rows[c][p];
      for (int c = cols; c < kPanel; ++c)
        d[c] = 0.0f;
    }
  }
}

void PackedMatrix::pack_transposed(const float* w, int n, int k, std::size_t col_stride) {
  n_ = n;
  k_ = k;
  data_.resize(static_cast<std::size_t>(panels()) * static_cast<std::size_t>(k) * kPanel);
  for (int p0 = 0; p0 < panels(); ++p0) {
    const int j0 = p0 * kPanel;
    const int cols = std::min(kPanel, n - j0);
    float* dst = data_.data() + static_cast<std::size_t>(p0) * k * kPanel;
    for (int p = 0; p < k; ++p) {
      const float* src = w + static_cast<std::size_t>(p) * col_stride + j0;
      float* d = dst + static_cast<std::size_t>(p) * kPanel;
      std::copy(src, src + cols, d);
      std::fill(d + cols, d + kPanel, 0.0f);
    }
  }
}

void matmul_block(const float* a, std::size_t lda, int m, const PackedMatrix& b, int panel_begin,
                  int panel_end, float* y, std::size_t ldy, const Epilogue& ep) {
  const Isa now = isa();
  if (now == Isa::Avx512) {
    matmul_block_avx512(a, lda, m, b, panel_begin, panel_end, y, ldy, ep);
  } else if (now == Isa::Avx2) {
    matmul_block_avx2(a, lda, m, b, panel_begin, panel_end, y, ldy, ep);
  } else {
    matmul_block_t<PortableKernel>(a, lda, m, b, panel_begin, panel_end, y, ldy, ep);
  }
}

void apply_activation(Activation act, float* x, std::size_t n) {
  if (act == Activation::None) return;
  if (has_avx2_fma()) {
    apply_activation_avx2(act, x, n);
    return;
  }
  for (std::size_t i = 0; i < n; ++i)
    x[i] = activate_t<ScalarOps>(act, x[i]);
}

void exp_inplace(float* x, std::size_t n) {
  if (has_avx2_fma()) {
    exp_inplace_avx2(x, n);
    return;
  }
  for (std::size_t i = 0; i < n; ++i)
    x[i] = exp_t<ScalarOps>(x[i]);
}

float exp_float(float x) {
  return exp_t<ScalarOps>(x);
}

void force_portable_kernel(bool on) {
  active_isa.store(on ? Isa::Portable : isa_from_environment(), std::memory_order_relaxed);
}

void force_avx2_kernel(bool on) {
  active_isa.store(on ? std::min(cpu_isa(), Isa::Avx2) : isa_from_environment(),
                   std::memory_order_relaxed);
}

std::string kernel_isa() {
  switch (isa()) {
    case Isa::Avx512:
      return "avx512f-fma";
    case Isa::Avx2:
      return "avx2-fma";
    case Isa::Portable:
      break;
  }
  return "portable-fma";
}

}  // namespace winokit::detail
