// The GEMM backend and batched attention against plain reference implementations.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "model/gemm.hpp"
#include "winokit/core/rng.hpp"

namespace winokit {
namespace fs = std::filesystem;
namespace {

std::vector<float> random_vector(std::size_t n, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<float> v(n);
  for (auto& x : v)
    x = static_cast<float>(rng.uniform() * 2 - 1);
  return v;
}

TEST(Gemm, MatchesPlainReferenceAndRowsDoNotDependOnM) {
  constexpr int kN = 96, kK = 200;
  auto w = random_vector(kN * kK, 1), b = random_vector(kN, 2);
  detail::Linear layer(w, b, kN, kK);
  auto x = random_vector(333 * kK, 3);
  std::vector<float> all(333 * kN);
  layer.forward(x.data(), 333, all.data());
  std::vector<float> ref(all.size());
  detail::reference_linear(x.data(), 333, w, b, kN, kK, ref.data());
  for (std::size_t i = 0; i < all.size(); ++i) {
    // float32 accumulation over K = 200 terms of magnitude <= 1: well within 1e-4.
    ASSERT_NEAR(all[i], ref[i], 1e-4) << i;
  }
  for (int m : {1, 3, 16, 50, 77}) {
    std::vector<float> part(static_cast<std::size_t>(m) * kN);
    layer.forward(x.data() + 5 * kK, m, part.data());
    for (std::size_t i = 0; i < part.size(); ++i)
      ASSERT_EQ(part[i], all[5 * kN + i]) << "M=" << m;
  }
}

TEST(Gemm, AccumulateAddsToTheOutput) {
  auto w = random_vector(8 * 4, 4);
  detail::Linear plain(w, {}, 8, 4), acc(w, {}, 8, 4, detail::PostOp::None, true);
  auto x = random_vector(20 * 4, 5);
  std::vector<float> y(20 * 8), z(20 * 8, 1.0f);
  plain.forward(x.data(), 20, y.data());
  acc.forward(x.data(), 20, z.data());
  for (std::size_t i = 0; i < y.size(); ++i)
    EXPECT_FLOAT_EQ(z[i], y[i] + 1.0f);
}

TEST(Attention, BatchedMatchesPlainSoftmaxAttention) {
  constexpr int kSeqs = 3, kLen = 17, kWidth = 32, kHeads = 4, kD = kWidth / kHeads;
  auto qkv = random_vector(kSeqs * kLen * 3 * kWidth, 6);
  std::vector<float> out(kSeqs * kLen * kWidth);
  detail::BatchedAttention().run(qkv.data(), kSeqs, kLen, kWidth, kHeads, out.data());
  for (int s = 0; s < kSeqs; ++s) {
    for (int h = 0; h < kHeads; ++h) {
      for (int i = 0; i < kLen; ++i) {
        auto at = [&](int t, int part, int k) {
          return qkv[(static_cast<std::size_t>(s) * kLen + t) * 3 * kWidth + part * kWidth +
                     h * kD + k];
        };
        std::vector<double> p(kLen);
        double mx = -1e300, sum = 0;
        for (int j = 0; j < kLen; ++j) {
          double dot = 0;
          for (int k = 0; k < kD; ++k)
            dot += at(i, 0, k) * at(j, 1, k);
          p[static_cast<std::size_t>(j)] = dot / std::sqrt(static_cast<double>(kD));
          mx = std::max(mx, p[static_cast<std::size_t>(j)]);
        }
        for (auto& v : p)
          sum += (v = std::exp(v - mx));
        for (int k = 0; k < kD; ++k) {
          double o = 0;
          for (int j = 0; j < kLen; ++j)
            o += p[static_cast<std::size_t>(j)] / sum * at(j, 2, k);
          ASSERT_NEAR(out[(static_cast<std::size_t>(s) * kLen + i) * kWidth + h * kD + k], o, 1e-5);
        }
      }
    }
  }
}

}  // namespace
}  // namespace winokit
