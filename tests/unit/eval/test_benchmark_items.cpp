// The generic per-item outcomes every benchmark gives (eval/benchmark.hpp: item_check,
// true_text_check, winoground_style_checks, BenchmarkSummary::items) and `compare` over them
// (eval/compare.hpp: compare_benchmark_runs), checked by hand and against a plain reference.
#include <gtest/gtest.h>

#include <cmath>

#include "winokit/core/error.hpp"
#include "winokit/eval/benchmark.hpp"
#include "winokit/eval/compare.hpp"

namespace winokit {
namespace {

TEST(BenchmarkItems, ChecksAreStrictAndListTheirComparisons) {
  // 1 image, 3 texts, the first true: right only when it beats both others.
  const ItemCheck c = true_text_check("t", {0.5, 0.2, 0.4}, {1, 0, 0}, 3, 1);
  EXPECT_TRUE(c.right);
  ASSERT_EQ(c.comparisons.size(), 2u);
  EXPECT_EQ(c.comparisons[1].other_text, 2u);
  EXPECT_FALSE(true_text_check("t", {0.5, 0.5, 0.4}, {1, 0, 0}, 3, 1).right) << "a tie is wrong";
  // ARO's order: [false, true].
  EXPECT_TRUE(true_text_check("t", {0.1, 0.2}, {0, 1}, 2, 1).right);
  EXPECT_THROW(item_check("t", {0.1, 0.2}, 1, {{0, 0, 2, 0}}), UsageError);
  // Winoground-style: c0_i0, c0_i1, c1_i0, c1_i1 = 0.9, 0.1, 0.9, 0.95: text wrong (a tie on
  // image 0), image right, group wrong.
  const auto w = winoground_style_checks({0.9, 0.1, 0.9, 0.95});
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[0].name, "group score");
  EXPECT_FALSE(w[0].right);
  EXPECT_FALSE(w[1].right);
  EXPECT_TRUE(w[2].right);
  EXPECT_EQ(w[0].comparisons.size(), 4u);
}

// Two runs' outcomes on 6 items of two subsets, one check: a plain reference of the counts.
BenchmarkRun run_of(const std::string& name, const std::vector<int>& right,
                    const std::vector<std::string>& subsets) {
  BenchmarkRun r{name, {}, {}};
  for (std::size_t i = 0; i < right.size(); ++i) {
    const ItemScores s = right[i] ? ItemScores{0.9, 0.1} : ItemScores{0.1, 0.9};
    r.summary.items.push_back(
        {subsets[i], {1, 0}, {true_text_check("right", s, {1, 0}, 2, 1)}, {}, s});
  }
  return r;
}

TEST(BenchmarkCompare, DiscordantCountsMcNemarAndIntervalsPerSubset) {
  BenchmarkData data;
  data.benchmark = "toy";
  const std::vector<std::string> subsets = {"x", "x", "x", "y", "y", "y"};
  for (int i = 0; i < 6; ++i)
    data.items.push_back({"i" + std::to_string(i), {"a", "b"}, {unread_image("im")}});
  // a: 1 1 1 1 0 0; b: 0 0 1 0 1 0 -> a only on items 0, 1, 3; b only on item 4.
  const auto a = run_of("a", {1, 1, 1, 1, 0, 0}, subsets);
  const auto b = run_of("b", {0, 0, 1, 0, 1, 0}, subsets);
  BenchmarkOptions o;
  o.bootstrap_resamples = 2000;
  const BenchmarkCompareResult r = compare_benchmark_runs(data, {a, b}, o);
  EXPECT_EQ(r.checks, std::vector<std::string>{"right"});
  EXPECT_EQ(r.subsets, (std::vector<std::string>{"x", "y"}));
  ASSERT_EQ(r.pairwise.size(), 3u);  // all, x, y
  const BenchmarkPairRow& all = r.pairwise[0];
  EXPECT_EQ(all.subset, "");
  EXPECT_EQ(all.a_only, 3u);
  EXPECT_EQ(all.b_only, 1u);
  EXPECT_EQ(all.a_right, 4u);
  EXPECT_EQ(all.b_right, 2u);
  // Exact McNemar: 2 * P(X <= 1), X ~ Bin(4, 1/2) = 2 * 5/16.
  EXPECT_DOUBLE_EQ(all.p_mcnemar, 0.625);
  EXPECT_NEAR(all.difference, 100.0 * 2 / 6, 1e-12);
  EXPECT_TRUE(all.paired_bootstrap.valid());
  EXPECT_LE(all.paired_bootstrap.low, all.difference);
  EXPECT_GE(all.paired_bootstrap.high, all.difference);
  const BenchmarkPairRow& x = r.pairwise[1];
  EXPECT_EQ(x.subset, "x");
  EXPECT_EQ(x.a_only, 2u);
  EXPECT_EQ(x.b_only, 0u);
  EXPECT_DOUBLE_EQ(x.p_mcnemar, 0.5);  // 2 * (1/2)^2
  // Accuracy rows: per run, overall then per subset.
  ASSERT_EQ(r.accuracy.size(), 6u);
  EXPECT_EQ(r.accuracy[0].run, "a");
  EXPECT_EQ(r.accuracy[0].right, 4u);
  EXPECT_NEAR(r.accuracy[0].percent, 400.0 / 6, 1e-12);
  // Per item: each run's outcome.
  ASSERT_EQ(r.items.size(), 6u);
  EXPECT_EQ(r.items[4].right[0][0], 0);
  EXPECT_EQ(r.items[4].right[1][0], 1);
  // Errors: one run, two runs of one name, a run that does not cover the items.
  EXPECT_THROW(compare_benchmark_runs(data, {a}, o), UsageError);
  EXPECT_THROW(compare_benchmark_runs(data, {a, a}, o), UsageError);
  auto short_run = run_of("c", {1, 1}, subsets);
  EXPECT_THROW(compare_benchmark_runs(data, {a, short_run}, o), UsageError);
}

}  // namespace
}  // namespace winokit
