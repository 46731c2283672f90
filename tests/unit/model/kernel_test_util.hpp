// What the kernels' tests (test_gemm.cpp, test_ops.cpp) share: seeded inputs, a bit comparison,
// and the kernel and thread settings a test varies, restored when it ends.
#pragma once

#include <omp.h>

#include <cstring>
#include <vector>

#include "model/kernels/kernels.hpp"
#include "winokit/core/rng.hpp"

namespace winokit::testing_kernels {

inline std::vector<float> random_vector(std::size_t n, std::uint64_t seed, double range = 1.0) {
  Rng rng(seed);
  std::vector<float> v(n);
  for (auto& x : v)
    x = static_cast<float>((rng.uniform() * 2 - 1) * range);
  return v;
}

inline bool same_bits(const float* a, const float* b, std::size_t n) {
  return std::memcmp(a, b, n * sizeof(float)) == 0;
}

// Restores the thread count and the kernel choice a test changed.
struct KernelSettings {
  int threads = omp_get_max_threads();
  ~KernelSettings() {
    omp_set_num_threads(threads);
    detail::force_portable_kernel(false);
    detail::force_avx2_kernel(false);
  }
};

// The kernels a test compares: the one the CPU picks, AVX2 (where the CPU picks AVX-512) and the
// portable one.
enum class Kernel { Dispatched, Avx2, Portable };
inline const char* use_kernel(Kernel k) {
  detail::force_portable_kernel(false);
  detail::force_avx2_kernel(false);
  if (k == Kernel::Avx2) detail::force_avx2_kernel(true);
  if (k == Kernel::Portable) detail::force_portable_kernel(true);
  return k == Kernel::Dispatched ? "dispatched" : k == Kernel::Avx2 ? "avx2" : "portable";
}
constexpr Kernel kAllKernels[] = {Kernel::Dispatched, Kernel::Avx2, Kernel::Portable};

}  // namespace winokit::testing_kernels
