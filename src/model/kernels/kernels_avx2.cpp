// The AVX2 + FMA micro-kernel and epilogue (kernels.hpp); this file alone is compiled with
// -mavx2 -mfma and is called only on CPUs that have both.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "model/kernels/kernel_avx2_ops.hpp"

namespace winokit::detail {
namespace {

// Row r's value at step k: a[k * 6 + r] when Packed, else a[r * lda + k]. The chains go to
// part[r * ldp ..] or, with `out` (the last K slice of a full panel), through the epilogue
// straight to out->y[r * out->ldy ..].
template <int R, bool Packed>
inline void micro_rows(const float* a, std::size_t lda, const float* b, int kc, float* part,
                       std::size_t ldp, bool first, const FinalOut* out) {
  __m256 c0[R], c1[R];
  if (out != nullptr) {
    // The epilogue's rows of y (read when accumulating, written always) are rarely in cache:
    // fetch them while the chains run.
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r)
      prefetch_out_row(out->y + r * out->ldy);
  }
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) {
    c0[r] = first ? _mm256_setzero_ps() : _mm256_loadu_ps(part + r * ldp);
    c1[r] = first ? _mm256_setzero_ps() : _mm256_loadu_ps(part + r * ldp + 8);
  }
  for (int k = 0; k < kc; ++k) {
    // B's panel comes from memory when a layer's weights are larger than the caches (RN50's
    // last stage).
    prefetch_panel_ahead(b, k);
    const __m256 b0 = _mm256_loadu_ps(b + static_cast<std::size_t>(k) * kPanel);
    const __m256 b1 = _mm256_loadu_ps(b + static_cast<std::size_t>(k) * kPanel + 8);
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
      const __m256 av = _mm256_broadcast_ss(
          Packed ? a + static_cast<std::size_t>(k) * kMicroRows + r : a + r * lda + k);
      c0[r] = _mm256_fmadd_ps(av, b0, c0[r]);
      c1[r] = _mm256_fmadd_ps(av, b1, c1[r]);
    }
  }
  if (out != nullptr) {
    const Epilogue& ep = *out->ep;
    const __m256 bias0 = out->bias != nullptr ? _mm256_loadu_ps(out->bias) : _mm256_setzero_ps();
    const __m256 bias1 =
        out->bias != nullptr ? _mm256_loadu_ps(out->bias + 8) : _mm256_setzero_ps();
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
      float* y = out->y + r * out->ldy;
      const __m256 old0 = ep.accumulate ? _mm256_loadu_ps(y) : _mm256_setzero_ps();
      const __m256 old1 = ep.accumulate ? _mm256_loadu_ps(y + 8) : _mm256_setzero_ps();
      _mm256_storeu_ps(y, epilogue_t<Avx2Ops>(ep, c0[r], bias0, old0));
      _mm256_storeu_ps(y + 8, epilogue_t<Avx2Ops>(ep, c1[r], bias1, old1));
    }
    return;
  }
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) {
    _mm256_storeu_ps(part + r * ldp, c0[r]);
    _mm256_storeu_ps(part + r * ldp + 8, c1[r]);
  }
}

struct Avx2Kernel {
  static constexpr int kPanels = 1;
  template <bool Packed>
  static void micro(int rows, const float* a, std::size_t lda, const float* b, int kc, float* part,
                    std::size_t ldp, bool first, const FinalOut* out) {
    with_rows(rows, [&](auto count) {
      micro_rows<decltype(count)::value, Packed>(a, lda, b, kc, part, ldp, first, out);
    });
  }
  static void epilogue(const Epilogue& ep, const float* part, const float* bias, float* y,
                       int cols) {
    avx2_epilogue(ep, part, bias, y, cols);
  }
};

}  // namespace

void matmul_block_avx2(const float* a, std::size_t lda, int m, const PackedMatrix& b,
                       int panel_begin, int panel_end, float* y, std::size_t ldy,
                       const Epilogue& ep) {
  matmul_block_t<Avx2Kernel>(a, lda, m, b, panel_begin, panel_end, y, ldy, ep);
}

void apply_activation_avx2(Activation act, float* x, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(x + i, activate_t<Avx2Ops>(act, _mm256_loadu_ps(x + i)));
  for (; i < n; ++i)
    x[i] = activate_t<ScalarOps>(act, x[i]);
}

void exp_inplace_avx2(float* x, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(x + i, exp_t<Avx2Ops>(_mm256_loadu_ps(x + i)));
  for (; i < n; ++i)
    x[i] = exp_t<ScalarOps>(x[i]);
}

}  // namespace winokit::detail
