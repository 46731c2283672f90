// Benchmark: 800 x 800 retrieval (cosine matrix + Recall@1,2,5,10 with ties against the model)
// from cached-size embeddings (512 dims), 7 runs, median.
//
//   build/bench/bench_retrieval
#include <algorithm>
#include <chrono>
#include <iostream>
#include "winokit/core/rng.hpp"
#include "winokit/eval/retrieval.hpp"
int main() {
  winokit::Rng rng(1);
  int n = 800, d = 512;
  std::vector<float> t(n * d), im(n * d);
  for (auto& x : t)
    x = rng.uniform() - 0.5;
  for (auto& x : im)
    x = rng.uniform() - 0.5;
  std::vector<double> ms;
  for (int r = 0; r < 7; r++) {
    auto t0 = std::chrono::steady_clock::now();
    auto m = winokit::matrix_from_embeddings(t, im, n, n, d);
    auto rr = winokit::retrieval_recall(m, {1, 2, 5, 10});
    ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  std::cout << "800x800 retrieval from embeddings: median " << ms[3] << " ms (min " << ms[0]
            << ", max " << ms[6] << ")\n";
}
