// The compute backend's public face (implemented in src/model/kernels/gemm.cpp): the one OpenMP
// pool of winokit's kernels, the GEMM throughput that benchmarks report as the peak, and what
// computed the numbers (for provenance and cache keys).
//
//   winokit::set_compute_threads(2);
//   double peak = winokit::gemm_gflops(256, 768, 768, 20);
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(model);

namespace winokit {

// Throughput in GFLOP/s of one float32 GEMM of the engine's kind, [m, k] x [k, n], median of
// `runs` after a warm-up (the reference point for the engine's share of peak).
double gemm_gflops(int m, int n, int k, int runs);

// Sets the threads of the one OpenMP pool winokit's kernels run on (0: all cores).
void set_compute_threads(int threads);
int compute_threads();

// winokit's own dense kernels (every dense layer and attention of every model): their version.
// Their results are the same bits on every CPU (src/model/kernels/kernels.hpp), so the instruction
// set is provenance, not part of a cache key.
std::string kernel_version();
// The instruction set the kernels run on this CPU: "avx2-fma", or "portable-fma" (no AVX2 + FMA,
// or WINOKIT_KERNEL=portable); the same bits either way.
std::string kernel_isa();
// The CPU, as /proc/cpuinfo names it, with its widest vector extension:
// "AMD EPYC (avx2, no avx512)"; "unknown CPU" where /proc/cpuinfo is unreadable.
std::string cpu_description();
// What computed a result, for provenance: {"kernels", "kernel_isa", "cpu"}.
nlohmann::json compute_record();

// Row-major C[m, n] = op(A) op(B) (+ C when `accumulate`), op(X) = X or its transpose: A is
// [m, k] ([k, m] when trans_a), B is [k, n] ([n, k] when trans_b), with leading dimensions lda,
// ldb, ldc. On winokit's kernels (the probes' training): the same bits on every CPU, whatever
// the thread count; on one thread when called from a thread with one OpenMP thread.
void sgemm(bool trans_a, bool trans_b, int m, int n, int k, const float* a, int lda, const float* b,
           int ldb, float* c, int ldc, bool accumulate = false);

}  // namespace winokit
