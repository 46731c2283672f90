// GEMM throughput of winokit's kernels (src/model/kernels/kernels.hpp) on the shapes the models
// run: ViT and BERT layers, attention products and the ResNet convolutions as matrix products. One
// thread, timed by the thread's CPU clock as well as the wall clock: on a machine shared with other
// jobs the CPU-time rate stays close to the quiet machine's, so kernel changes can be compared
// while builds run. Median of --runs after a warm-up; one JSON line per shape.
//
//   build/bench/bench_gemm [--runs 7] [--shapes vit|resnet|all]
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "model/kernels/gemm.hpp"
#include "winokit/core/rng.hpp"
#include "winokit/model/compute.hpp"

namespace {

struct Shape {
  const char* name;
  int m, n, k;
  int count = 1;  // times one image (ResNet) runs it
};

// ViT-B/32 at batch 32 (50 tokens a row), BERT-base text, the 384-px ViT-B/16 of BLIP, and
// RN50's convolutions (below).
const Shape kVit[] = {
    {"vit-b32 qkv", 1600, 2304, 768},    {"vit-b32 out", 1600, 768, 768},
    {"vit-b32 fc1", 1600, 3072, 768},    {"vit-b32 fc2", 1600, 768, 3072},
    {"vit-b16-384 qkv", 577, 2304, 768}, {"vit-b16-384 fc1", 577, 3072, 768},
    {"vit-b16-384 fc2", 577, 768, 3072}, {"attention q k^t 577", 577, 577, 64},
    {"attention p v 577", 577, 64, 577}, {"attention q k^t 50", 50, 50, 64},
    {"attention p v 50", 50, 64, 50},    {"text fc1", 40, 3072, 768},
};
// Every convolution of CLIP's RN50 at 224 px once (rows = output pixels, K = kh * kw * in) with
// how many times one image runs it.
const Shape kResnet[] = {
    {"rn50 l3 3x3", 196, 256, 2304, 5},      {"rn50 l2 3x3 56", 3136, 128, 1152, 1},
    {"rn50 l3 3x3 28", 784, 256, 2304, 1},   {"rn50 l4 3x3 14", 196, 512, 4608, 1},
    {"rn50 l1 3x3", 3136, 64, 576, 3},       {"rn50 l2 3x3", 784, 128, 1152, 3},
    {"rn50 l3 1x1 up", 196, 1024, 256, 6},   {"rn50 l3 1x1 down", 196, 256, 1024, 5},
    {"rn50 stem3 3x3", 12544, 64, 288, 1},   {"rn50 l4 3x3", 49, 512, 4608, 2},
    {"rn50 l1 1x1 up", 3136, 256, 64, 4},    {"rn50 l2 1x1 up", 784, 512, 128, 4},
    {"rn50 l2 1x1 down", 784, 128, 512, 3},  {"rn50 l4 1x1 up", 49, 2048, 512, 3},
    {"rn50 stem2 3x3", 12544, 32, 288, 1},   {"rn50 l1 1x1 down", 3136, 64, 256, 2},
    {"rn50 l2 1x1 in", 3136, 128, 256, 1},   {"rn50 l2 ds", 784, 512, 256, 1},
    {"rn50 l3 1x1 in", 784, 256, 512, 1},    {"rn50 l3 ds", 196, 1024, 512, 1},
    {"rn50 l4 1x1 down", 196, 512, 1024, 1}, {"rn50 l4 ds", 49, 2048, 1024, 1},
    {"rn50 l4 1x1 in", 49, 512, 2048, 2},    {"rn50 l1 1x1 in", 3136, 64, 64, 1},
    {"rn50 stem1 3x3s2", 12544, 32, 27, 1},
};

double thread_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Returns the median CPU-time rate in GFLOP/s.
double run(const Shape& s, int runs) {
  winokit::Rng rng(7);
  std::vector<float> w(static_cast<std::size_t>(s.n) * s.k), x(static_cast<std::size_t>(s.m) * s.k),
      y(static_cast<std::size_t>(s.m) * s.n);
  for (float& v : w)
    v = static_cast<float>(rng.uniform() - 0.5);
  for (float& v : x)
    v = static_cast<float>(rng.uniform() - 0.5);
  winokit::detail::PackedMatrix packed = winokit::detail::pack_rows(w.data(), s.n, s.k, s.k);
  const winokit::detail::Epilogue ep;
  const double flop = 2.0 * s.m * s.n * s.k;
  // Repeat small products so that one timed sample lasts at least ~20 ms.
  const int reps = std::max(1, static_cast<int>(4e9 / flop));
  std::vector<double> cpu, wall;
  for (int r = 0; r <= runs; ++r) {
    const double c0 = thread_seconds();
    const auto w0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i)
      winokit::detail::matmul(x.data(), s.k, s.m, packed, y.data(), s.n, ep);
    const double c1 = thread_seconds();
    const double ws = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
    if (r == 0) continue;  // warm-up
    cpu.push_back(flop * reps / (c1 - c0) / 1e9);
    wall.push_back(flop * reps / ws / 1e9);
  }
  std::sort(cpu.begin(), cpu.end());
  std::sort(wall.begin(), wall.end());
  std::printf(
      "{\"shape\": \"%s\", \"m\": %d, \"n\": %d, \"k\": %d, \"gflops_cpu\": %.1f, "
      "\"gflops_wall\": %.1f, \"isa\": \"%s\"}\n",
      s.name, s.m, s.n, s.k, cpu[cpu.size() / 2], wall[wall.size() / 2],
      winokit::kernel_isa().c_str());
  std::fflush(stdout);
  return cpu[cpu.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 7;
  std::string which = "all";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--runs") == 0) runs = std::max(1, std::atoi(argv[i + 1]));
    if (std::strcmp(argv[i], "--shapes") == 0) which = argv[i + 1];
  }
  winokit::set_compute_threads(1);
  std::printf("{\"cpu\": \"%s\", \"threads\": 1}\n", winokit::cpu_description().c_str());
  if (which == "all" || which == "vit") {
    for (const Shape& s : kVit)
      run(s, runs);
  }
  if (which == "all" || which == "resnet") {
    double flop = 0, seconds = 0;
    for (const Shape& s : kResnet) {
      const double f = 2.0 * s.m * s.n * s.k * s.count;
      flop += f;
      seconds += f / (run(s, runs) * 1e9);
    }
    std::printf(
        "{\"rn50_convolutions_gflop\": %.2f, \"one_thread_ms\": %.1f, \"gflops_cpu\": %.1f}\n",
        flop / 1e9, seconds * 1e3, flop / seconds / 1e9);
  }
  return 0;
}
