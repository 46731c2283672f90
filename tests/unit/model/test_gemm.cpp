// The dense kernels (src/model/kernels/kernels.hpp) and the blocks on them
// (src/model/kernels/gemm.hpp) against plain reference implementations, and the invariant they
// promise: a row's bits do not depend on M, on its position, on the other rows, on the thread count
// or on the kernel the CPU runs.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "model/kernel_test_util.hpp"
#include "model/kernels/gemm.hpp"
#include "model/kernels/kernels.hpp"
#include "winokit/core/rng.hpp"

namespace winokit {
namespace {

using namespace testing_kernels;

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
  for (int m : {1, 3, 7, 16, 32, 33, 50, 77, 97}) {
    std::vector<float> part(static_cast<std::size_t>(m) * kN);
    layer.forward(x.data() + 5 * kK, m, part.data());
    for (std::size_t i = 0; i < part.size(); ++i)
      ASSERT_EQ(part[i], all[5 * kN + i]) << "M=" << m;
  }
}

// Every layer shape the models use has tails in N (not a multiple of 16) or K (not a multiple of
// the K slice) somewhere; odd shapes here cover them. Each row alone, at every position of
// batches of 1, 3, 7, 32, 33 and 200 rows with other random rows around it, on 1 and 2 threads,
// on the kernel the CPU picks, on the AVX2 and on the portable one: the same bits.
TEST(Gemm, EveryRowHasTheSameBitsWhateverTheBatchThreadsAndKernel) {
  KernelSettings restore;
  for (auto [n, k] : {std::pair{1, 1}, {2, 768}, {17, 33}, {40, 257}, {130, 600}}) {
    for (auto post : {detail::PostOp::None, detail::PostOp::QuickGelu, detail::PostOp::Gelu,
                      detail::PostOp::GeluTanh}) {
      const auto w = random_vector(static_cast<std::size_t>(n) * k, 10 + n, 0.2);
      const auto b = random_vector(static_cast<std::size_t>(n), 11 + n);
      detail::Linear layer(w, b, n, k, post, /*accumulate=*/post == detail::PostOp::None);
      const auto rows = random_vector(static_cast<std::size_t>(4) * k, 12 + k, 3.0);
      const auto start = random_vector(static_cast<std::size_t>(4) * n, 13 + k);
      // Reference: each of the 4 rows alone, one thread.
      omp_set_num_threads(1);
      std::vector<float> alone(start);
      for (int r = 0; r < 4; ++r)
        layer.forward(&rows[static_cast<std::size_t>(r) * k], 1,
                      &alone[static_cast<std::size_t>(r) * n]);
      for (Kernel kernel : {Kernel::Dispatched, Kernel::Avx2, Kernel::Portable}) {
        const char* kernel_name = use_kernel(kernel);
        for (int threads : {1, 2}) {
          omp_set_num_threads(threads);
          for (int m : {1, 3, 7, 32, 33, 200}) {
            auto x = random_vector(static_cast<std::size_t>(m) * k, 14 + m, 3.0);
            std::vector<float> y(static_cast<std::size_t>(m) * n, 0.5f);
            const int at[4] = {0, m / 2, m - 1, (m * 7) / 9};
            for (int r = 0; r < 4; ++r) {
              std::copy_n(&rows[static_cast<std::size_t>(r) * k], k,
                          &x[static_cast<std::size_t>(at[r]) * k]);
              std::copy_n(&start[static_cast<std::size_t>(r) * n], n,
                          &y[static_cast<std::size_t>(at[r]) * n]);
            }
            layer.forward(x.data(), m, y.data());
            // Rows placed at the same position overwrite each other; the last one placed counts.
            for (int r = 0; r < 4; ++r) {
              bool last = true;
              for (int q = r + 1; q < 4; ++q)
                last = last && at[q] != at[r];
              if (!last) continue;
              ASSERT_TRUE(same_bits(&y[static_cast<std::size_t>(at[r]) * n],
                                    &alone[static_cast<std::size_t>(r) * n],
                                    static_cast<std::size_t>(n)))
                  << "n=" << n << " k=" << k << " post=" << static_cast<int>(post) << " M=" << m
                  << " row at " << at[r] << " threads=" << threads << " kernel=" << kernel_name;
            }
          }
        }
      }
      detail::force_portable_kernel(false);
    }
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

// The activations against double-precision formulas (PyTorch's definitions): quick_gelu
// x sigmoid(1.702 x), GELU with the exact erf, gelu_new with tanh. The kernels' exp is Cephes'
// (about 1 ulp) and erfc the Numerical Recipes fit (fractional error < 1.2e-7): a few 1e-7
// relative; in the negative tail exp's argument (about |x| or x^2) is itself rounded to float,
// which moves exp by up to |argument| * 2^-24 relative, as in any float32 implementation.
TEST(Kernels, ActivationsMatchTheirDefinitions) {
  KernelSettings restore;
  std::vector<float> xs;
  for (int i = -4000; i <= 4000; ++i)
    xs.push_back(static_cast<float>(i) * 0.0025f);
  for (float v : {-80.f, -30.f, -12.f, -9.f, 9.f, 12.f, 30.f, 80.f, 1e-20f, -1e-20f, 0.f})
    xs.push_back(v);
  struct Case {
    detail::Activation act;
    double (*f)(double);
    const char* name;
  };
  const Case cases[] = {
      {detail::Activation::QuickGelu, [](double x) { return x / (1 + std::exp(-1.702 * x)); },
       "quick_gelu"},
      {detail::Activation::Gelu, [](double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); },
       "gelu"},
      {detail::Activation::GeluTanh,
       // 0.5 x (1 + tanh(u)) written as x sigmoid(2u) (the same function), so that the double
       // reference does not cancel to 0 in the far negative tail.
       [](double x) {
         const double u = std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x);
         return x / (1 + std::exp(-2 * u));
       },
       "gelu_new"},
  };
  for (const Case& c : cases) {
    for (bool portable : {false, true}) {
      detail::force_portable_kernel(portable);
      std::vector<float> y = xs;
      detail::apply_activation(c.act, y.data(), y.size());
      for (std::size_t i = 0; i < xs.size(); ++i) {
        const double want = c.f(xs[i]);
        const double x = std::fabs(static_cast<double>(xs[i]));
        ASSERT_NEAR(y[i], want, (6e-7 + 1.2e-7 * (x + x * x)) * std::fabs(want) + 1e-30)
            << c.name << "(" << xs[i] << ") portable=" << portable;
      }
      if (portable) {
        std::vector<float> fast = xs;
        detail::force_portable_kernel(false);
        detail::apply_activation(c.act, fast.data(), fast.size());
        ASSERT_TRUE(same_bits(fast.data(), y.data(), y.size())) << c.name;
      }
    }
  }
}

TEST(Kernels, ExpIsAccurateAndTheSameOnEveryKernel) {
  KernelSettings restore;
  std::vector<float> xs;
  for (int i = -870; i <= 880; ++i)
    xs.push_back(static_cast<float>(i) * 0.1f + 0.037f);
  std::vector<float> fast = xs, portable = xs;
  detail::exp_inplace(fast.data(), fast.size());
  detail::force_portable_kernel(true);
  detail::exp_inplace(portable.data(), portable.size());
  ASSERT_TRUE(same_bits(fast.data(), portable.data(), xs.size()));
  for (std::size_t i = 0; i < xs.size(); ++i) {
    if (xs[i] < -87.0f || xs[i] > 88.0f) continue;
    const double want = std::exp(static_cast<double>(xs[i]));
    ASSERT_NEAR(fast[i], want, 2.5e-7 * want) << xs[i];
    ASSERT_EQ(fast[i], detail::exp_float(xs[i]));
  }
}

// softmax_rows interleaves rows' chains; each row must get softmax_inplace's bits, whatever the
// row count (groups of 8 and the rest) and the row length.
TEST(Kernels, SoftmaxRowsGivesEachRowTheBitsOfOneRowAlone) {
  for (std::size_t n : {1u, 7u, 64u, 577u}) {
    for (int rows : {1, 7, 8, 9, 17}) {
      const std::size_t ld = n + 3;
      auto x = random_vector(static_cast<std::size_t>(rows) * ld, 40 + n, 12.0);
      auto one = x;
      detail::softmax_rows(x.data(), ld, rows, n);
      for (int r = 0; r < rows; ++r) {
        float* row = one.data() + static_cast<std::size_t>(r) * ld;
        detail::softmax_inplace(row, n);
        ASSERT_TRUE(same_bits(row, x.data() + static_cast<std::size_t>(r) * ld, ld))
            << "n " << n << " rows " << rows << " row " << r;
      }
    }
  }
}

// layer_norm normalises rows in groups; a row's bits do not depend on how many rows share the
// call, and match the plain double-precision definition.
TEST(Kernels, LayerNormRowsDoNotDependOnTheirNeighbours) {
  constexpr int kWidth = 37;
  const auto g = random_vector(kWidth, 50), b = random_vector(kWidth, 51);
  const auto x = random_vector(11 * kWidth, 52, 3.0);
  std::vector<float> all(x.size());
  detail::layer_norm(x.data(), 11, kWidth, g, b, 1e-5, all.data());
  for (std::size_t r = 0; r < 11; ++r) {
    std::vector<float> one(kWidth);
    detail::layer_norm(x.data() + r * kWidth, 1, kWidth, g, b, 1e-5, one.data());
    ASSERT_TRUE(same_bits(one.data(), all.data() + r * kWidth, kWidth)) << "row " << r;
    double mean = 0, var = 0;
    for (int i = 0; i < kWidth; ++i)
      mean += x[r * kWidth + i];
    mean /= kWidth;
    for (int i = 0; i < kWidth; ++i)
      var += (x[r * kWidth + i] - mean) * (x[r * kWidth + i] - mean);
    var /= kWidth;
    for (int i = 0; i < kWidth; ++i) {
      const double want = (x[r * kWidth + i] - mean) / std::sqrt(var + 1e-5) * g[i] + b[i];
      ASSERT_NEAR(all[r * kWidth + i], want, 1e-5);
    }
  }
  // In place, as the models call it.
  auto inplace = x;
  detail::layer_norm(inplace.data(), 11, kWidth, g, b, 1e-5, inplace.data());
  ASSERT_TRUE(same_bits(inplace.data(), all.data(), all.size()));
}

// Plain double-precision attention for one (sequence, head).
double reference_attention(const std::vector<float>& qkv, std::size_t offset, int len, int width,
                           int heads, int h, int i, int k, bool causal) {
  const int d = width / heads;
  auto at = [&](int t, int part, int c) {
    return static_cast<double>(
        qkv[(offset + static_cast<std::size_t>(t)) * 3 * width + part * width + h * d + c]);
  };
  const int count = causal ? i + 1 : len;
  std::vector<double> p(static_cast<std::size_t>(count));
  double mx = -1e300, sum = 0;
  for (int j = 0; j < count; ++j) {
    double dot = 0;
    for (int c = 0; c < d; ++c)
      dot += at(i, 0, c) * at(j, 1, c);
    p[static_cast<std::size_t>(j)] = dot / std::sqrt(static_cast<double>(d));
    mx = std::max(mx, p[static_cast<std::size_t>(j)]);
  }
  for (auto& v : p)
    sum += (v = std::exp(v - mx));
  double o = 0;
  for (int j = 0; j < count; ++j)
    o += p[static_cast<std::size_t>(j)] / sum * at(j, 2, k);
  return o;
}

TEST(Attention, MatchesPlainSoftmaxAttentionCausalOrNot) {
  constexpr int kWidth = 40, kHeads = 2;  // head size 20: a tail in the 16-wide panels
  const std::vector<std::size_t> lengths = {17, 1, 50, 33};
  std::vector<std::size_t> offsets;
  std::size_t rows = 0;
  for (auto l : lengths) {
    offsets.push_back(rows);
    rows += l;
  }
  auto qkv = random_vector(rows * 3 * kWidth, 6);
  for (bool causal : {false, true}) {
    std::vector<float> out(rows * kWidth);
    detail::attention(qkv.data(), offsets, lengths, kWidth, kHeads, causal, out.data());
    for (std::size_t s = 0; s < lengths.size(); ++s) {
      const int len = static_cast<int>(lengths[s]);
      for (int h = 0; h < kHeads; ++h) {
        for (int i = 0; i < len; ++i) {
          for (int k = 0; k < kWidth / kHeads; ++k) {
            const double want =
                reference_attention(qkv, offsets[s], len, kWidth, kHeads, h, i, k, causal);
            ASSERT_NEAR(out[(offsets[s] + static_cast<std::size_t>(i)) * kWidth +
                            static_cast<std::size_t>(h) * (kWidth / kHeads) + k],
                        want, 1e-5)
                << "seq " << s << " head " << h << " query " << i << " causal " << causal;
          }
        }
      }
    }
  }
}

// A sequence's attention output does not depend on the sequences around it, its offset, the
// thread count or the kernel; causal: not on rows after the query (the padding of a batch).
TEST(Attention, ASequenceHasTheSameBitsWhateverElseIsInTheBatch) {
  KernelSettings restore;
  constexpr int kWidth = 64, kHeads = 4;
  constexpr std::size_t kLen = 23;
  const auto seq = random_vector(kLen * 3 * kWidth, 20);
  for (bool causal : {false, true}) {
    omp_set_num_threads(1);
    std::vector<float> alone(kLen * kWidth);
    detail::attention(seq.data(), {0}, {kLen}, kWidth, kHeads, causal, alone.data());
    for (Kernel kernel : {Kernel::Dispatched, Kernel::Avx2, Kernel::Portable}) {
      const char* kernel_name = use_kernel(kernel);
      for (int threads : {1, 2}) {
        omp_set_num_threads(threads);
        for (std::size_t others : {1u, 3u, 7u}) {
          // Other sequences of other lengths before it; causal: 9 padding rows after it.
          std::vector<std::size_t> offsets, lengths;
          std::size_t rows = 0;
          for (std::size_t o = 0; o < others; ++o) {
            offsets.push_back(rows);
            lengths.push_back(5 + 4 * o);
            rows += lengths.back();
          }
          const std::size_t at = rows;
          offsets.push_back(at);
          lengths.push_back(causal ? kLen + 9 : kLen);
          rows += lengths.back();
          auto qkv = random_vector(rows * 3 * kWidth, 30 + others);
          std::copy(seq.begin(), seq.end(),
                    qkv.begin() + static_cast<std::ptrdiff_t>(at * 3 * kWidth));
          std::vector<float> out(rows * kWidth);
          detail::attention(qkv.data(), offsets, lengths, kWidth, kHeads, causal, out.data());
          ASSERT_TRUE(same_bits(&out[at * kWidth], alone.data(), kLen * kWidth))
              << "causal=" << causal << " others=" << others << " threads=" << threads
              << " kernel=" << kernel_name;
        }
      }
    }
  }
}

TEST(Softmax, SumsToOneAndMatchesTheDefinition) {
  auto row = random_vector(300, 40, 20.0);
  std::vector<float> p = row;
  detail::softmax_inplace(p.data(), p.size());
  double mx = -1e300, sum = 0;
  for (float v : row)
    mx = std::max(mx, static_cast<double>(v));
  for (float v : row)
    sum += std::exp(v - mx);
  for (std::size_t i = 0; i < row.size(); ++i)
    ASSERT_NEAR(p[i], std::exp(row[i] - mx) / sum, 1e-6);
}

}  // namespace
}  // namespace winokit
