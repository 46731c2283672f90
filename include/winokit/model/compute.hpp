// The compute backend's public face (implemented in src/model/gemm.cpp): the one OpenMP pool
// that oneDNN and winokit share, and the GEMM throughput that benchmarks report as the peak.
//
//   winokit::set_compute_threads(2);
//   double peak = winokit::gemm_gflops(256, 768, 768, 20);
#pragma once

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(model);

namespace winokit {

// Throughput in GFLOP/s of one float32 GEMM of the engine's kind, [m, k] x [k, n], median of
// `runs` after a warm-up (the reference point for the engine's share of peak).
double gemm_gflops(int m, int n, int k, int runs);

// Sets the threads of the one OpenMP pool that oneDNN and winokit share (0: all cores).
void set_compute_threads(int threads);
int compute_threads();

}  // namespace winokit
