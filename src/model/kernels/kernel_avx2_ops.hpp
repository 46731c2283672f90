// The 8-lane AVX2 operations of kernel_math.hpp's templates and the vector epilogue, shared by
// the translation units compiled for AVX2 + FMA (kernels_avx2.cpp) and for AVX-512
// (kernels_avx512.cpp); everything here has internal linkage. Never include it from a file
// compiled without AVX2.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "model/kernels/kernel_math.hpp"

namespace winokit::detail {
namespace {

// How far ahead the micro-kernels ask for B's panel rows: 4 KB.
constexpr std::size_t kPrefetchSteps = 64;

// 8 floats; the same operations as ScalarOps, lane by lane.
struct Avx2Ops {
  using V = __m256;
  static V set(float x) { return _mm256_set1_ps(x); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V div(V a, V b) { return _mm256_div_ps(a, b); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V floor(V a) { return _mm256_floor_ps(a); }
  static V min(V a, V b) { return _mm256_min_ps(a, b); }
  static V max(V a, V b) { return _mm256_max_ps(a, b); }
  static V pow2(V n) {
    const __m256i bits =
        _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvttps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_castsi256_ps(bits);
  }
  static V select_nonneg(V a, V x, V y) {
    return _mm256_blendv_ps(y, x, _mm256_cmp_ps(a, _mm256_setzero_ps(), _CMP_GE_OQ));
  }
  static V abs(V a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
};

// Prefetch hints (no value changes): B's panel row kPrefetchSteps steps after row k (addresses
// past the panel's end included: prefetches never fault), and the 16 floats of a row of y.
inline void prefetch_panel_ahead(const float* b, int k) {
  _mm_prefetch(reinterpret_cast<const char*>(reinterpret_cast<std::uintptr_t>(b) +
                                             (static_cast<std::size_t>(k) + kPrefetchSteps) *
                                                 kPanel * sizeof(float)),
               _MM_HINT_T0);
}
inline void prefetch_out_row(const float* y) {
  _mm_prefetch(reinterpret_cast<const char*>(y), _MM_HINT_T0);
  _mm_prefetch(reinterpret_cast<const char*>(y + kPanel - 1), _MM_HINT_T0);
}

// y[0..cols) from part[0..cols) (matmul_block's Impl::epilogue): 8 columns at a time, the
// tail one at a time with the same operations.
inline void avx2_epilogue(const Epilogue& ep, const float* part, const float* bias, float* y,
                          int cols) {
  int j = 0;
  for (; j + 8 <= cols; j += 8) {
    const __m256 bv = bias != nullptr ? _mm256_loadu_ps(bias + j) : _mm256_setzero_ps();
    const __m256 old = ep.accumulate ? _mm256_loadu_ps(y + j) : _mm256_setzero_ps();
    _mm256_storeu_ps(y + j, epilogue_t<Avx2Ops>(ep, _mm256_loadu_ps(part + j), bv, old));
  }
  for (; j < cols; ++j) {
    y[j] = epilogue_t<ScalarOps>(ep, part[j], bias != nullptr ? bias[j] : 0.0f,
                                 ep.accumulate ? y[j] : 0.0f);
  }
}

}  // namespace
}  // namespace winokit::detail
