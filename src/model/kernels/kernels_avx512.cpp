// The AVX-512 micro-kernel (kernels.hpp); this file alone is compiled with -mavx512f and is
// called only on CPUs that have it. One 16-column panel row is one 512-bit register; a call
// computes 6 rows of two panels (12 chains of 16 lanes), so each broadcast of A feeds twice the
// columns of the AVX2 kernel's. Every element is still the one fma chain over k in order,
// followed by the epilogue's operations, so the bits are those of the AVX2 and portable kernels.
// On AMD Zen 4 (512-bit operations in two halves) RN50's convolutions run about 3% faster than
// on the AVX2 kernel (bench/bench_gemm).
#include "model/kernels/kernel_avx2_ops.hpp"

namespace winokit::detail {
namespace {

// P panels (1 or 2, panel_stride floats apart) of R rows; row r's value at step k: a[k * 6 + r]
// (packed) or a[r * lda + k]. Panel
// q's chains go to part[r * ldp + 16 q ..] or, with out[q] (the last K slice of a full panel),
// through the epilogue (the AVX2 kernel's operations, 8 lanes at a time) straight to
// out[q]->y[r * out[q]->ldy ..].
template <int R, int P, bool Packed>
inline void micro_rows(const float* a, std::size_t lda, const float* b, std::size_t panel_stride,
                       int kc, float* part, std::size_t ldp, bool first,
                       const FinalOut* const* out) {
  __m512 c[P][R];
#pragma GCC unroll 2
  for (int q = 0; q < P; ++q) {
    if (out[q] != nullptr) {
#pragma GCC unroll 6
      for (int r = 0; r < R; ++r)
        prefetch_out_row(out[q]->y + r * out[q]->ldy);
    }
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r)
      c[q][r] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(part + r * ldp + q * kPanel);
  }
  const float* b1 = b + (P > 1 ? panel_stride : 0);
  for (int k = 0; k < kc; ++k) {
    prefetch_panel_ahead(b, k);
    const __m512 bv0 = _mm512_loadu_ps(b + static_cast<std::size_t>(k) * kPanel);
    __m512 bv1 = bv0;
    if constexpr (P > 1) {
      prefetch_panel_ahead(b1, k);
      bv1 = _mm512_loadu_ps(b1 + static_cast<std::size_t>(k) * kPanel);
    }
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
      const __m512 av =
          _mm512_set1_ps(Packed ? a[static_cast<std::size_t>(k) * kMicroRows + r] : a[r * lda + k]);
      c[0][r] = _mm512_fmadd_ps(av, bv0, c[0][r]);
      if constexpr (P > 1) c[P - 1][r] = _mm512_fmadd_ps(av, bv1, c[P - 1][r]);
    }
  }
#pragma GCC unroll 2
  for (int q = 0; q < P; ++q) {
    if (out[q] == nullptr) {
#pragma GCC unroll 6
      for (int r = 0; r < R; ++r)
        _mm512_storeu_ps(part + r * ldp + q * kPanel, c[q][r]);
      continue;
    }
    const FinalOut& o = *out[q];
    const Epilogue& ep = *o.ep;
    const __m256 bias0 = o.bias != nullptr ? _mm256_loadu_ps(o.bias) : _mm256_setzero_ps();
    const __m256 bias1 = o.bias != nullptr ? _mm256_loadu_ps(o.bias + 8) : _mm256_setzero_ps();
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
      float* y = o.y + r * o.ldy;
      const __m256 old0 = ep.accumulate ? _mm256_loadu_ps(y) : _mm256_setzero_ps();
      const __m256 old1 = ep.accumulate ? _mm256_loadu_ps(y + 8) : _mm256_setzero_ps();
      // The two 8-float halves through memory (GCC 12 warns on its own extract intrinsics).
      alignas(64) float chains[kPanel];
      _mm512_store_ps(chains, c[q][r]);
      _mm256_storeu_ps(y, epilogue_t<Avx2Ops>(ep, _mm256_load_ps(chains), bias0, old0));
      _mm256_storeu_ps(y + 8, epilogue_t<Avx2Ops>(ep, _mm256_load_ps(chains + 8), bias1, old1));
    }
  }
}

struct Avx512Kernel {
  static constexpr int kPanels = 2;
  template <bool Packed>
  static void micro(int rows, const float* a, std::size_t lda, const float* b,
                    std::size_t panel_stride, int panels, int kc, float* part, std::size_t ldp,
                    bool first, const FinalOut* const* out) {
    with_rows(rows, [&](auto count) {
      constexpr int R = decltype(count)::value;
      if (panels == 2) {
        micro_rows<R, 2, Packed>(a, lda, b, panel_stride, kc, part, ldp, first, out);
      } else {
        micro_rows<R, 1, Packed>(a, lda, b, panel_stride, kc, part, ldp, first, out);
      }
    });
  }
  static void epilogue(const Epilogue& ep, const float* part, const float* bias, float* y,
                       int cols) {
    avx2_epilogue(ep, part, bias, y, cols);
  }
};

}  // namespace

void matmul_block_avx512(const float* a, std::size_t lda, int m, const PackedMatrix& b,
                         int panel_begin, int panel_end, float* y, std::size_t ldy,
                         const Epilogue& ep) {
  matmul_block_t<Avx512Kernel>(a, lda, m, b, panel_begin, panel_end, y, ldy, ep);
}

}  // namespace winokit::detail
