// winokit's own dense kernels: the matrix product every dense layer and attention runs on, and
// the element-wise functions of their epilogues (GELU variants, exp). Private to model/.
//
// The invariant (CONTRIBUTING, "Results that do not depend on the CPU"): every output element
// is computed by one fixed sequence of IEEE float operations that depends only on the layer
// (K, the weights, the epilogue), never on M, on the element's row or column position, on the
// thread count or on the CPU:
// - y[i][j] = fma chain over k = 0, 1, ..., K-1 starting from 0 (one rounding per step, in
//   order), then * scale, + bias[j], + y_old (accumulate), then the activation;
// - the chain is never split (no K partitioning across threads), the row and column blocking
//   only decides which thread computes a whole element;
// - the AVX-512 and AVX2+FMA micro-kernels and the portable one (std::fma, for CPUs without FMA)
//   run the same operations, and FMA is exactly rounded, so the bits are the same on every CPU.
// The element-wise functions are written once as templates over a scalar float and an
// 8-lane AVX2 vector with the same operation sequence, so a column tail computed one element at
// a time gets the bits the vector lanes would have given.
//
//   detail::PackedMatrix w = detail::pack_rows(weight.data(), n, k, k);  // W: [n, k]
//   detail::Epilogue ep{bias.data(), detail::Activation::QuickGelu, /*accumulate=*/false};
//   detail::matmul_block(x, k, m, w, 0, w.panels(), y, n, ep);           // y = act(x W^T + b)
#pragma once

#include <cstddef>
#include <new>
#include <string>
#include <vector>

namespace winokit::detail {

// Panel width of the packed right-hand matrix (two 8-float AVX2 vectors) and the rows one
// micro-kernel call computes.
constexpr int kPanel = 16;
constexpr int kMicroRows = 6;

// Storage on 64-byte boundaries (a cache line): a panel row is then one line, and the kernels'
// vector loads never straddle two.
template <typename T>
struct CacheLineAllocator {
  using value_type = T;
  static constexpr std::align_val_t kAlign{64};
  CacheLineAllocator() = default;
  template <typename U>
  CacheLineAllocator(const CacheLineAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlign)); }
  void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, kAlign); }
  template <typename U>
  bool operator==(const CacheLineAllocator<U>&) const noexcept {
    return true;
  }
  template <typename U>
  bool operator!=(const CacheLineAllocator<U>&) const noexcept {
    return false;
  }
};
using AlignedFloats = std::vector<float, CacheLineAllocator<float>>;

// B^T packed for the micro-kernel: the [n, k] matrix W (y = x W^T) as ceil(n / 16) panels of
// [k][16] floats, zero beyond n.
class PackedMatrix {
 public:
  PackedMatrix() = default;
  int n() const { return n_; }
  int k() const { return k_; }
  int panels() const { return (n_ + kPanel - 1) / kPanel; }
  const float* panel(int p) const {
    return data_.data() + static_cast<std::size_t>(p) * static_cast<std::size_t>(k_) * kPanel;
  }
  // Packs W: row j of W (output column j) starts at w + j * row_stride, its k values are
  // contiguous. Reuses this object's storage.
  void pack(const float* w, int n, int k, std::size_t row_stride);
  // Packs W given column-major: element (j, p) at w[p * col_stride + j] (V in attention: the
  // [keys, d] value matrix is W^T).
  void pack_transposed(const float* w, int n, int k, std::size_t col_stride);
  std::size_t bytes() const { return data_.size() * sizeof(float); }

 private:
  AlignedFloats data_;
  int n_ = 0, k_ = 0;
};

inline PackedMatrix pack_rows(const float* w, int n, int k, std::size_t row_stride) {
  PackedMatrix m;
  m.pack(w, n, k, row_stride);
  return m;
}

// GeluTanh: GPT-2's gelu_new; Relu: max(x, 0) (ResNet).
enum class Activation { None, QuickGelu, Gelu, GeluTanh, Relu };

// y = activation(chain * scale + bias + (accumulate ? y : 0)), in that order.
struct Epilogue {
  const float* bias = nullptr;  // [n] or none
  Activation activation = Activation::None;
  bool accumulate = false;  // add the old y (a residual) before the activation
  float scale = 1.0f;       // 1 leaves the chain untouched
};

// y[i][j] for rows i in [0, m) and the columns of panels [panel_begin, panel_end) (clipped to
// n), on the calling thread: a = [m, k] with row stride lda, y with row stride ldy.
void matmul_block(const float* a, std::size_t lda, int m, const PackedMatrix& b, int panel_begin,
                  int panel_end, float* y, std::size_t ldy, const Epilogue& ep);

// The element-wise functions on n floats, in place, with the same bits as the epilogue gives.
void apply_activation(Activation act, float* x, std::size_t n);
// exp(x) for each of n floats in place (Cephes' expf: about 1 ulp; x clamped to [-87, 88]).
void exp_inplace(float* x, std::size_t n);
// exp of one float, same bits as exp_inplace.
float exp_float(float x);

// Which micro-kernel this CPU runs ("avx512f-fma", "avx2-fma" or "portable-fma"); all give the
// same bits. WINOKIT_KERNEL=avx2 or =portable chooses a lower one.
std::string kernel_isa();
// Tests: run the portable kernel even where AVX2 + FMA is present (to compare the bits).
void force_portable_kernel(bool on);
// Tests: run the AVX2 kernel where AVX-512 is present (on other CPUs: what they run anyway).
void force_avx2_kernel(bool on);

}  // namespace winokit::detail
