// Statistics against textbook values and against plain reference implementations.
#include <gtest/gtest.h>

#include <algorithm>

#include "winokit/core/rng.hpp"
#include "winokit/eval/stats.hpp"

namespace winokit {
namespace {

// Values from tables / closed forms; 1e-9 is far below any reporting precision.
constexpr double kTight = 1e-9;

TEST(Distributions, TextbookQuantiles) {
  EXPECT_NEAR(student_t_quantile(0.975, 3), 3.182446305284263, kTight);
  EXPECT_NEAR(student_t_quantile(0.975, 10), 2.228138851986273, kTight);
  EXPECT_NEAR(normal_quantile(0.975), 1.959963984540054, kTight);
  EXPECT_NEAR(normal_cdf(0.0), 0.5, kTight);
}

TEST(Binomial, UpperTailExact) {
  EXPECT_NEAR(binomial_upper_tail(8, 10, 0.5), 56.0 / 1024.0, kTight);
  EXPECT_NEAR(binomial_upper_tail(123, 400, 0.25), 0.005402354757345373, 1e-12);
  EXPECT_DOUBLE_EQ(binomial_upper_tail(0, 10, 0.25), 1.0);
  EXPECT_DOUBLE_EQ(binomial_upper_tail(11, 10, 0.25), 0.0);
}

TEST(McNemar, ExactTwoSided) {
  EXPECT_NEAR(mcnemar_exact_p(0, 5), 2.0 / 32.0, kTight);
  EXPECT_NEAR(mcnemar_exact_p(1, 9), 2.0 * 11.0 / 1024.0, kTight);
  EXPECT_DOUBLE_EQ(mcnemar_exact_p(3, 3), 1.0);
  EXPECT_DOUBLE_EQ(mcnemar_exact_p(0, 0), 1.0);
}

TEST(Correlation, PearsonAndSpearmanWithTies) {
  std::vector<double> x = {1, 2, 3, 4, 5}, y = {2, 4, 5, 4, 5};
  auto p = pearson(x, y);
  EXPECT_NEAR(p.r, 0.7745966692414834, kTight);
  EXPECT_NEAR(p.p, 0.12402706265755459, 1e-9);
  auto s = spearman(x, y);
  EXPECT_NEAR(s.r, 0.7378647873726218, kTight);
  EXPECT_NEAR(s.p, 0.15461852312844915, 1e-9);
  EXPECT_EQ(average_ranks({10, 20, 20, 30}), (std::vector<double>{1, 2.5, 2.5, 4}));
}

TEST(Correlation, ConstantInputIsUndefined) {
  auto p = pearson({1, 1, 1, 1}, {0, 1, 0, 1});
  EXPECT_TRUE(std::isnan(p.r));
  EXPECT_TRUE(std::isnan(p.p));
  EXPECT_EQ(p.n, 4u);
}

TEST(Quantile, LinearLikeNumpy) {
  std::vector<double> v = {1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(quantile_linear(v, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(quantile_linear(v, 0.25), 1.75);
  EXPECT_DOUBLE_EQ(quantile_linear(v, 1.0), 4.0);
}

TEST(FoldInterval, IdOrderByHand) {
  // Folds of two: means 1, 0, 0.5, 0.5.
  auto f = fold_t_interval({1, 1, 0, 0, 1, 0, 1, 0}, 4, 0.95);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->fold_means, (std::vector<double>{1, 0, 0.5, 0.5}));
  const double half = 3.182446305284263 * std::sqrt(0.5 / 3.0) / 2.0;
  EXPECT_NEAR(f->ci.low, 0.5 - half, kTight);
  EXPECT_NEAR(f->ci.high, 0.5 + half, kTight);
}

TEST(FoldInterval, UnequalSizesLikeArraySplit) {
  // n = 10: folds of 3, 3, 2, 2 in order.
  auto f = fold_t_interval({1, 1, 1, 0, 0, 0, 1, 1, 0, 0}, 4, 0.95);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->fold_means, (std::vector<double>{1, 0, 1, 0}));
  EXPECT_FALSE(fold_t_interval({1, 0, 1}, 4, 0.95).has_value());
}

// Per-example outcomes of FLAVA (contrastive head) on the 400 Winoground examples, in id order,
// recomputed from the published score file baselines/FLAVA/FLAVA_contrastive_scores.txt of
// nightingal3/winoground-project: digit = text + 2 * image (group = 3).
constexpr const char* kFlavaContrastiveOutcomes =
    "0003020330000013000001000131010000000110000003010003133001010003000100001132100200001200203202"
    "1110010001000000001000000001003100010011103000000120110030030000000020000100323000000100010100"
    "0000000000000031130000010000200000003000000000030100001000000012200000000300010101001000000002"
    "0010000000000001100001030000010002003003331003000010000001010200110001000000311003301000000303"
    "131300002000021010001000";

std::vector<double> flava_outcomes(unsigned bit) {
  std::vector<double> v;
  for (const char* c = kFlavaContrastiveOutcomes; *c; ++c)
    v.push_back(((*c - '0') >> bit) & 1 ? 1.0 : 0.0);
  return v;
}

// The paper's Appendix A row for FLAVA contrastive: text 25.25 [19.99, 30.51], image 13.50
// [8.55, 18.45], group 9.00 [5.10, 12.90] (percent, two decimals).
TEST(FoldInterval, PaperMethodReproducesFlavaContrastiveRow) {
  auto text = flava_outcomes(0), image = flava_outcomes(1), group = flava_outcomes(0);
  ASSERT_EQ(text.size(), 400u);
  for (std::size_t i = 0; i < group.size(); ++i)
    group[i] = text[i] * image[i];
  auto pct = [](double x) { return std::round(x * 10000) / 100; };
  auto t = paper_fold_t_interval(text, 4, 0.95, 0);
  auto im = paper_fold_t_interval(image, 4, 0.95, 0);
  auto g = paper_fold_t_interval(group, 4, 0.95, 0);
  ASSERT_TRUE(t && im && g);
  EXPECT_EQ(t->fold_means, (std::vector<double>{0.25, 0.21, 0.26, 0.29}));
  EXPECT_DOUBLE_EQ(pct(t->mean), 25.25);
  EXPECT_DOUBLE_EQ(pct(t->ci.low), 19.99);
  EXPECT_DOUBLE_EQ(pct(t->ci.high), 30.51);
  EXPECT_DOUBLE_EQ(pct(im->mean), 13.50);
  EXPECT_DOUBLE_EQ(pct(im->ci.low), 8.55);
  EXPECT_DOUBLE_EQ(pct(im->ci.high), 18.45);
  EXPECT_DOUBLE_EQ(pct(g->mean), 9.00);
  EXPECT_DOUBLE_EQ(pct(g->ci.low), 5.10);
  EXPECT_DOUBLE_EQ(pct(g->ci.high), 12.90);
  // The id-order split gives other numbers: it is not the paper's.
  auto id = fold_t_interval(text, 4, 0.95);
  ASSERT_TRUE(id);
  EXPECT_NE(pct(id->ci.low), 19.99);
}

TEST(FoldInterval, PaperMethodOnOtherSizesFollowsTheSameShuffle) {
  // n = 10: random.seed(0); shuffle(list(range(10))) = [7, 8, 1, 5, 3, 4, 2, 0, 9, 6], then
  // groups of 3, 3, 2, 2.
  auto f = paper_fold_t_interval({1, 1, 1, 0, 0, 0, 1, 1, 0, 0}, 4, 0.95, 0);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->fold_means, (std::vector<double>{2.0 / 3.0, 0, 1, 0.5}));
  // A wide interval's lower bound is clipped at 0, never the upper one.
  EXPECT_EQ(f->ci.low, 0.0);
  EXPECT_GT(f->ci.high, 1.0);
}

// Plain reference: materialise every resampled proportion, sort, then the SciPy BCa recipe.
struct Reference {
  Interval percentile, bca;
};
Reference reference_bootstrap(const std::vector<std::uint8_t>& bits, std::size_t resamples,
                              std::uint64_t seed) {
  const std::size_t n = bits.size();
  Rng rng(seed);
  std::vector<double> theta;
  for (std::size_t b = 0; b < resamples; ++b) {
    std::size_t c = 0;
    for (std::size_t i = 0; i < n; ++i)
      c += bits[rng.below(static_cast<std::uint32_t>(n))] & 1u;
    theta.push_back(static_cast<double>(c) / static_cast<double>(n));
  }
  std::sort(theta.begin(), theta.end());
  double k = 0;
  for (auto b : bits)
    k += b & 1u;
  const double est = k / static_cast<double>(n);
  double lt = 0, le = 0;
  for (double t : theta) {
    lt += t < est;
    le += t <= est;
  }
  const double z0 = normal_quantile((lt + le) / (2.0 * static_cast<double>(resamples)));
  std::vector<double> jk;
  for (std::size_t i = 0; i < n; ++i) {
    jk.push_back((k - (bits[i] & 1u)) / static_cast<double>(n - 1));
  }
  double mean = 0;
  for (double j : jk)
    mean += j / static_cast<double>(n);
  double num = 0, den = 0;
  for (double j : jk) {
    num += std::pow(mean - j, 3);
    den += std::pow(mean - j, 2);
  }
  const double a = num / (6 * std::pow(den, 1.5));
  auto adj = [&](double q) {
    double z = normal_quantile(q);
    return normal_cdf(z0 + (z0 + z) / (1 - a * (z0 + z)));
  };
  return {{quantile_linear(theta, 0.025), quantile_linear(theta, 0.975)},
          {quantile_linear(theta, adj(0.025)), quantile_linear(theta, adj(0.975))}};
}

TEST(Bootstrap, MatchesPlainReferenceImplementation) {
  std::vector<std::uint8_t> bits;
  for (int i = 0; i < 137; ++i)
    bits.push_back(i % 3 == 0 ? 7 : 0);
  constexpr std::size_t kResamples = 2000;
  auto fast = bootstrap_proportions(bits, 3, kResamples, 0.95, 99);
  auto ref = reference_bootstrap(bits, kResamples, 99);
  EXPECT_NEAR(fast.percentile[0].low, ref.percentile.low, 1e-12);
  EXPECT_NEAR(fast.percentile[0].high, ref.percentile.high, 1e-12);
  EXPECT_NEAR(fast.bca[0].low, ref.bca.low, 1e-12);
  EXPECT_NEAR(fast.bca[0].high, ref.bca.high, 1e-12);
  // The three metrics share each resample: identical bits give identical intervals.
  EXPECT_EQ(fast.percentile[0].low, fast.percentile[2].low);
}

TEST(Bootstrap, CloseToNormalApproximationAndSeeded) {
  std::vector<std::uint8_t> bits(400, 0);
  for (std::size_t i = 0; i < 120; ++i)
    bits[i * 3] = 1;  // p = 0.3
  auto a = bootstrap_proportions(bits, 1, 10000, 0.95, 5);
  auto b = bootstrap_proportions(bits, 1, 10000, 0.95, 5);
  const double se = std::sqrt(0.3 * 0.7 / 400);
  EXPECT_NEAR(a.percentile[0].low, 0.3 - 1.96 * se, 0.006);
  EXPECT_NEAR(a.percentile[0].high, 0.3 + 1.96 * se, 0.006);
  EXPECT_NEAR(a.bca[0].low, 0.3 - 1.96 * se, 0.008);
  EXPECT_EQ(a.percentile[0].low, b.percentile[0].low);
  EXPECT_EQ(a.bca[0].high, b.bca[0].high);
  // With few resamples the interpolated end points depend on the seed.
  auto few5 = bootstrap_proportions(bits, 1, 40, 0.95, 5);
  auto few6 = bootstrap_proportions(bits, 1, 40, 0.95, 6);
  EXPECT_TRUE(few5.percentile[0].low != few6.percentile[0].low ||
              few5.percentile[0].high != few6.percentile[0].high);
}

TEST(Bootstrap, DegenerateAllCorrect) {
  std::vector<std::uint8_t> bits(50, 1);
  auto r = bootstrap_proportions(bits, 1, 1000, 0.95, 1);
  EXPECT_DOUBLE_EQ(r.percentile[0].low, 1.0);
  EXPECT_DOUBLE_EQ(r.bca[0].high, 1.0);
}

TEST(PairedBootstrap, DifferenceOfIdenticalRunsIsZero) {
  std::vector<std::uint8_t> a = {1, 0, 1, 1, 0, 0, 1, 0};
  auto d = paired_bootstrap_difference(a, a, 3, 500, 0.95, 3);
  EXPECT_DOUBLE_EQ(d[0].low, 0.0);
  EXPECT_DOUBLE_EQ(d[0].high, 0.0);
  std::vector<std::uint8_t> ones(8, 1), zeros(8, 0);
  auto e = paired_bootstrap_difference(ones, zeros, 1, 500, 0.95, 3);
  EXPECT_DOUBLE_EQ(e[0].low, 1.0);
  EXPECT_DOUBLE_EQ(e[0].high, 1.0);
}

TEST(Rng, BoundedDrawsAreUniformAndReproducible) {
  Rng a(42), b(42);
  std::vector<int> counts(7, 0);
  for (int i = 0; i < 70000; ++i) {
    auto v = a.below(7);
    ASSERT_EQ(v, b.below(7));
    ++counts[v];
  }
  for (int c : counts)
    EXPECT_NEAR(c, 10000, 400);  // about 4 standard deviations
  EXPECT_NE(derive_seed(1, "overall"), derive_seed(1, "collapsed_tag/Object"));
}

}  // namespace
}  // namespace winokit
