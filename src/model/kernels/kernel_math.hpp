// The element-wise functions of the kernels, written once over an "ops" type so that the scalar
// and the 8-lane AVX2 versions run the same IEEE operations in the same order (kernels.hpp).
// Included by kernels.cpp (portable) and kernels_avx2.cpp (compiled for AVX2 + FMA); everything
// here has internal linkage so the two compilations never mix.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "model/kernels/kernels.hpp"

namespace winokit::detail {
namespace {

// Scalar operations. std::fma is exactly rounded wherever it runs (an instruction with FMA, a
// library routine without), so the portable kernel gives the AVX2 kernel's bits.
struct ScalarOps {
  using V = float;
  static V set(float x) { return x; }
  static V add(V a, V b) { return a + b; }
  static V sub(V a, V b) { return a - b; }
  static V mul(V a, V b) { return a * b; }
  static V div(V a, V b) { return a / b; }
  static V fma(V a, V b, V c) { return std::fma(a, b, c); }
  static V floor(V a) { return std::floor(a); }
  // As _mm256_min_ps / _mm256_max_ps: the second operand when either is NaN.
  static V min(V a, V b) { return a < b ? a : b; }
  static V max(V a, V b) { return a > b ? a : b; }
  // 2^n for an integral n in [-126, 127] given as a float.
  static V pow2(V n) {
    const std::int32_t bits = (static_cast<std::int32_t>(n) + 127) * (1 << 23);
    float r;
    std::memcpy(&r, &bits, sizeof r);
    return r;
  }
  // a >= 0 ? x : y
  static V select_nonneg(V a, V x, V y) { return a >= 0.0f ? x : y; }
  static V abs(V a) { return std::fabs(a); }
};

// Cephes' expf (range reduction by ln 2 in two parts, degree-5 polynomial; about 1 ulp), with x
// clamped to [-87, 88] so that 2^n stays a normal float.
template <typename O>
typename O::V exp_t(typename O::V x) {
  using V = typename O::V;
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
  x = O::min(O::max(x, O::set(-87.0f)), O::set(88.0f));
  const V n = O::floor(O::add(O::mul(x, O::set(kLog2e)), O::set(0.5f)));
  V r = O::fma(n, O::set(-kLn2Hi), x);
  r = O::fma(n, O::set(-kLn2Lo), r);
  const V z = O::mul(r, r);
  V y = O::set(1.9875691500e-4f);
  y = O::fma(y, r, O::set(1.3981999507e-3f));
  y = O::fma(y, r, O::set(8.3334519073e-3f));
  y = O::fma(y, r, O::set(4.1665795894e-2f));
  y = O::fma(y, r, O::set(1.6666665459e-1f));
  y = O::fma(y, r, O::set(5.0000001201e-1f));
  y = O::add(O::fma(y, z, r), O::set(1.0f));
  return O::mul(y, O::pow2(n));
}

// x * sigmoid(alpha x) = x / (1 + exp(-alpha x)).
template <typename O>
typename O::V x_sigmoid_t(typename O::V x, typename O::V minus_alpha_x) {
  return O::div(x, O::add(exp_t<O>(minus_alpha_x), O::set(1.0f)));
}

// quick_gelu(x) = x * sigmoid(1.702 x) (CLIP).
template <typename O>
typename O::V quick_gelu_t(typename O::V x) {
  return x_sigmoid_t<O>(x, O::mul(x, O::set(-1.702f)));
}

// gelu_new (GPT-2): 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3); since
// 0.5 (1 + tanh(u)) = sigmoid(2u), this is x / (1 + exp(-2u)), with no cancellation.
template <typename O>
typename O::V gelu_tanh_t(typename O::V x) {
  using V = typename O::V;
  constexpr float kMinusTwoSqrt2OverPi = -1.5957691216057308f;
  const V cube = O::mul(O::mul(x, x), x);
  const V inner = O::fma(cube, O::set(0.044715f), x);
  return x_sigmoid_t<O>(x, O::mul(inner, O::set(kMinusTwoSqrt2OverPi)));
}

// GELU with the exact erf: 0.5 x (1 + erf(x / sqrt 2)) = 0.5 x erfc(-x / sqrt 2). erfc(z) for
// z >= 0 from Numerical Recipes' erfcc (Chebyshev fit, fractional error below 1.2e-7):
// erfc(z) = t exp(-z^2 + P(t)), t = 1 / (1 + z/2); erfc(-z) = 2 - erfc(z). The negative side,
// where GELU is small, is then computed without cancellation.
template <typename O>
typename O::V gelu_erf_t(typename O::V x) {
  using V = typename O::V;
  constexpr float kInvSqrt2 = 0.70710678118654752f;
  const V z = O::mul(O::abs(x), O::set(kInvSqrt2));
  const V t = O::div(O::set(1.0f), O::fma(z, O::set(0.5f), O::set(1.0f)));
  V p = O::set(0.17087277f);
  p = O::fma(p, t, O::set(-0.82215223f));
  p = O::fma(p, t, O::set(1.48851587f));
  p = O::fma(p, t, O::set(-1.13520398f));
  p = O::fma(p, t, O::set(0.27886807f));
  p = O::fma(p, t, O::set(-0.18628806f));
  p = O::fma(p, t, O::set(0.09678418f));
  p = O::fma(p, t, O::set(0.37409196f));
  p = O::fma(p, t, O::set(1.00002368f));
  p = O::fma(p, t, O::set(-1.26551223f));
  const V e = O::mul(t, exp_t<O>(O::sub(p, O::mul(z, z))));  // erfc(|x| / sqrt 2)
  // x >= 0: erfc(-|x|/sqrt2) = 2 - e; x < 0: erfc(|x|/sqrt2) = e.
  const V c = O::select_nonneg(x, O::sub(O::set(2.0f), e), e);
  return O::mul(O::mul(x, O::set(0.5f)), c);
}

template <typename O>
typename O::V activate_t(Activation act, typename O::V x) {
  switch (act) {
    case Activation::None:
      return x;
    case Activation::QuickGelu:
      return quick_gelu_t<O>(x);
    case Activation::Gelu:
      return gelu_erf_t<O>(x);
    case Activation::GeluTanh:
      return gelu_tanh_t<O>(x);
    case Activation::Relu:
      return O::max(x, O::set(0.0f));
  }
  return x;
}

// One output element's epilogue (kernels.hpp): chain * scale, + bias, + old y, activation.
// Inlined into the micro-kernel's stores (ReLU too); the GELUs and their exp stay calls.
template <typename O>
[[gnu::always_inline]] inline typename O::V epilogue_t(const Epilogue& ep, typename O::V chain,
                                                       typename O::V bias, typename O::V old) {
  typename O::V v = chain;
  if (ep.scale != 1.0f) v = O::mul(v, O::set(ep.scale));
  if (ep.bias != nullptr) v = O::add(v, bias);
  if (ep.accumulate) v = O::add(old, v);
  if (ep.activation == Activation::None) return v;
  if (ep.activation == Activation::Relu) return O::max(v, O::set(0.0f));
  return activate_t<O>(ep.activation, v);
}

// The rows and K-slice blocking of matmul_block (kernels.hpp). Blocking decides only which
// thread computes which whole element and in which order the elements are visited; each
// element's fma chain runs over k = 0..K-1 in order, the partial kept in float between slices.
constexpr int kRowBlock = 48;  // rows whose partial sums are kept at once (8 micro-kernels)
// A last block of at most one micro-kernel's rows joins the block before it (49 rows: one
// block, not 48 + 1, which would stream all of B again for a single row).
constexpr int kMaxRowBlock = kRowBlock + kMicroRows;
constexpr int kKSlice = 1024;  // k values one pass over the panels takes (64 KB of a panel)
constexpr int kPackPanels = 32;
// Where the last K slice of a full panel goes: through the epilogue straight into y (rows
// ldy apart, columns from the panel's first), instead of the partial sums.
struct FinalOut {
  const Epilogue* ep;
  const float* bias;  // the panel's 16 biases, or none
  float* y;
  std::size_t ldy;
};  // above this many panels (512 columns) a block packs A

}  // namespace
}  // namespace winokit::detail

namespace winokit::detail {
namespace {

// Calls f(std::integral_constant<int, R>{}) with R = rows (1 to kMicroRows), so that a
// micro-kernel is instantiated, and its row loops unrolled, for each row count.
template <int R = kMicroRows, typename F>
[[gnu::always_inline]] inline void with_rows(int rows, F&& f) {
  if constexpr (R > 1) {
    if (rows < R) {
      with_rows<R - 1>(rows, f);
      return;
    }
  }
  f(std::integral_constant<int, R>{});
}

// matmul_block (kernels.hpp) over a micro-kernel implementation Impl:
//   Impl::kPanels: the panels one micro-kernel call computes (1, or 2 with the micro-kernel
//     taking the panel stride, the number of panels np and one `out` per panel);
//   Impl::micro<Packed>(rows, a, lda, b, kc, part, ldp, first, out): part[r][0..16) (= 0 when
//     first) gets the fma chain over the slice, for rows <= 6, with the panel slice b as
//     [kc][16] and row r's value at step k at a[k * 6 + r] (Packed) or a[r * lda + k] (read in
//     place); with `out` (the last slice of a full panel) the chains go through the epilogue
//     into y instead (the same operations as Impl::epilogue);
//   Impl::epilogue(ep, part, bias, y, cols): y[0..cols) from part[0..cols) (cols <= 16).
// Wide products (more than kPackPanels panels) pack each row block's K slice once into groups
// of 6 rows interleaved by k, so that the micro-kernel reads one stream and the copy is shared
// by many panels; narrow ones (convolutions of 32 to 512 channels) read A in place, where the
// copy would cost more than it saves. Packing copies values; neither way changes the arithmetic.
template <typename Impl>
void matmul_block_t(const float* a, std::size_t lda, int m, const PackedMatrix& b, int panel_begin,
                    int panel_end, float* y, std::size_t ldy, const Epilogue& ep) {
  const int k = b.k(), n = b.n();
  panel_end = panel_end < b.panels() ? panel_end : b.panels();
  if (m <= 0 || panel_begin >= panel_end) return;
  const std::size_t width = static_cast<std::size_t>(panel_end - panel_begin) * kPanel;
  const bool pack = panel_end - panel_begin > kPackPanels;
  thread_local AlignedFloats part, packed_a;
  if (part.size() < kMaxRowBlock * width) part.resize(kMaxRowBlock * width);
  if (pack && packed_a.size() < static_cast<std::size_t>(kMaxRowBlock) * kKSlice) {
    packed_a.resize(static_cast<std::size_t>(kMaxRowBlock) * kKSlice);
  }
  for (int i0 = 0, rows = 0; i0 < m; i0 += rows) {
    rows = m - i0 <= kMaxRowBlock ? m - i0 : kRowBlock;
    if (k == 0)
      std::fill(part.begin(), part.begin() + static_cast<std::ptrdiff_t>(rows * width), 0.0f);
    for (int k0 = 0; k0 < k; k0 += kKSlice) {
      const int kc = k - k0 < kKSlice ? k - k0 : kKSlice;
      if (pack) {
        // packed_a: group g (rows i0 + 6g ..) at g * kc * 6, step kk at + kk * 6, row r at + r.
        for (int g = 0; g * kMicroRows < rows; ++g) {
          const int r0 = g * kMicroRows;
          const int count = rows - r0 < kMicroRows ? rows - r0 : kMicroRows;
          float* dst = packed_a.data() + static_cast<std::size_t>(g) * kc * kMicroRows;
          const float* src[kMicroRows];
          for (int r = 0; r < kMicroRows; ++r)
            src[r] = a + static_cast<std::size_t>(i0 + r0 + (r < count ? r : 0)) * lda + k0;
          for (int kk = 0; kk < kc; ++kk) {
            for (int r = 0; r < kMicroRows; ++r)
              dst[static_cast<std::size_t>(kk) * kMicroRows + r] = src[r][kk];
          }
        }
      }
      const bool last = k0 + kc >= k;
      for (int p = panel_begin; p < panel_end; p += Impl::kPanels) {
        const int np = panel_end - p < Impl::kPanels ? panel_end - p : Impl::kPanels;
        const float* bp = b.panel(p) + static_cast<std::size_t>(k0) * kPanel;
        float* pp = part.data() + static_cast<std::size_t>(p - panel_begin) * kPanel;
        for (int r = 0; r < rows; r += kMicroRows) {
          const int count = rows - r < kMicroRows ? rows - r : kMicroRows;
          float* dst = pp + static_cast<std::size_t>(r) * width;
          FinalOut outs[Impl::kPanels];
          const FinalOut* fused[Impl::kPanels];
          for (int q = 0; q < np; ++q) {
            const int j0 = (p + q) * kPanel;
            outs[q] = FinalOut{&ep, ep.bias != nullptr ? ep.bias + j0 : nullptr,
                               y + static_cast<std::size_t>(i0 + r) * ldy + j0, ldy};
            fused[q] = last && n - j0 >= kPanel ? &outs[q] : nullptr;
          }
          const float* ar = pack ? packed_a.data() + static_cast<std::size_t>(r) * kc
                                 : a + static_cast<std::size_t>(i0 + r) * lda + k0;
          const std::size_t ld = pack ? kMicroRows : lda;
          if constexpr (Impl::kPanels == 1) {
            if (pack) {
              Impl::template micro<true>(count, ar, ld, bp, kc, dst, width, k0 == 0, fused[0]);
            } else {
              Impl::template micro<false>(count, ar, ld, bp, kc, dst, width, k0 == 0, fused[0]);
            }
          } else {
            const std::size_t panel_stride = static_cast<std::size_t>(k) * kPanel;
            if (pack) {
              Impl::template micro<true>(count, ar, ld, bp, panel_stride, np, kc, dst, width,
                                         k0 == 0, fused);
            } else {
              Impl::template micro<false>(count, ar, ld, bp, panel_stride, np, kc, dst, width,
                                          k0 == 0, fused);
            }
          }
        }
      }
    }
    // The partial last panel (n not a multiple of 16), and every panel when k == 0.
    for (int r = 0; r < rows; ++r) {
      for (int p = panel_begin; p < panel_end; ++p) {
        const int j0 = p * kPanel;
        const int cols = n - j0 < kPanel ? n - j0 : kPanel;
        if (k > 0 && cols == kPanel) continue;
        Impl::epilogue(ep,
                       part.data() + static_cast<std::size_t>(r) * width +
                           static_cast<std::size_t>(p - panel_begin) * kPanel,
                       ep.bias != nullptr ? ep.bias + j0 : nullptr,
                       y + static_cast<std::size_t>(i0 + r) * ldy + j0, cols);
      }
    }
  }
}

}  // namespace
}  // namespace winokit::detail
