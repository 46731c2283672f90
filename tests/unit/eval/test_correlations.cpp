// Table 6 (left): per-caption covariates against the raw image-caption scores; Table 7: run
// information against the runs' scores. Expected values from a second implementation: mpmath at
// 30 digits (Pearson from the definition, p = I_{df/(df+t^2)}(df/2, 1/2), i.e.
// scipy.stats.pearsonr's two-sided p; Spearman as Pearson on average ranks, as
// scipy.stats.spearmanr).
#include <gtest/gtest.h>

#include <cmath>

#include "test_util.hpp"
#include "winokit/core/error.hpp"
#include "winokit/data/covariates.hpp"
#include "winokit/eval/compare.hpp"
#include "winokit/eval/evaluation.hpp"

namespace winokit {
namespace {

WinogroundScores ps(double c0i0, double c0i1, double c1i0, double c1i1) {
  WinogroundScores p;
  p.s = {c0i0, c0i1, c1i0, c1i1};
  return p;
}

TEST(PairCorrelation, RawScoresAgainstPerCaptionCovariate) {
  WinogroundDataset ds = test::dataset_of(5);
  test::TempDir dir;
  // Caption 0 / caption 1 values per example, given as rows id,caption,value (shuffled order).
  const double c0[] = {3.5, 10.2, 7.7, 1.1, 5.0}, c1[] = {8.0, 2.2, 6.1, 9.9, 4.4};
  std::string csv = "# a comment line\nid,caption,perplexity\n";
  for (int i = 4; i >= 0; --i) {
    csv += std::to_string(i) + ",1," + std::to_string(c1[i]) + "\n";
    csv += std::to_string(i) + ",0," + std::to_string(c0[i]) + "\n";
  }
  auto covs = load_covariates(dir.write("ppl.csv", csv).string(), ds);
  ASSERT_EQ(covs.size(), 1u);
  ASSERT_TRUE(covs[0].per_caption());
  std::vector<WinogroundScores> s = {ps(0.31, 0.22, 0.15, 0.40), ps(0.12, 0.35, 0.27, 0.18),
                                     ps(0.25, 0.25, 0.30, 0.11), ps(0.41, 0.19, 0.08, 0.33),
                                     ps(0.20, 0.29, 0.36, 0.24)};
  EvalOptions opt;
  opt.bootstrap_resamples = 100;
  EvalResult r = evaluate(ds, s, {{}, covs}, opt);
  // Caption length (built in, per caption: 3 words each, constant) and the perplexity.
  ASSERT_EQ(r.pair_correlations.size(), 2u);
  EXPECT_TRUE(std::isnan(r.pair_correlations[0].pearson.r));
  const auto& p = r.pair_correlations[1];
  EXPECT_EQ(p.covariate, "perplexity");
  EXPECT_EQ(p.pearson.n, 20u);  // 4 pairs per example
  EXPECT_NEAR(p.pearson.r, -0.16551564502705354, 1e-12);
  EXPECT_NEAR(p.pearson.p, 0.48556469858693111, 1e-10);
  EXPECT_NEAR(p.spearman.r, -0.11476094924911759, 1e-12);
  EXPECT_NEAR(p.spearman.p, 0.62996419749708883, 1e-10);
  // The correctness table still has the per-example (mean) covariate, N = examples.
  ASSERT_EQ(r.correlations.size(), 6u);
  EXPECT_EQ(r.correlations[3].pearson.n, 5u);
  // A comment line shifts error lines: the bad value is on line 4 of the file.
  try {
    load_covariates(dir.write("bad.csv", "# c\nid,caption,perplexity\n0,0,1\n0,1,x\n").string(),
                    ds);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.location().line, 4u);
  }
}

TEST(PairCorrelation, PerplexityCovariatesFromComputedValues) {
  WinogroundDataset ds = test::dataset_of(2);
  // mean_nll, exp(mean_nll), 2^mean_nll
  auto caption = [](std::size_t ex, int c, double nll) {
    return CaptionPerplexity{ex, c, 3, nll, std::exp(nll), std::exp2(nll)};
  };
  std::vector<CaptionPerplexity> v = {caption(0, 0, 1.0), caption(0, 1, 2.0), caption(1, 0, 3.0),
                                      caption(1, 1, 5.0)};
  auto covs = perplexity_covariates(ds, v, "gpt2");
  ASSERT_EQ(covs.size(), 2u);
  // The official computation first, named as such; the textbook perplexity beside it.
  EXPECT_EQ(covs[0].name, "perplexity_exp2");
  EXPECT_EQ(covs[1].name, "perplexity");
  ASSERT_TRUE(covs[0].per_caption());
  EXPECT_EQ(*covs[0].caption_values[1][1], 32.0);
  EXPECT_EQ(*covs[0].values[1], (8.0 + 32.0) / 2);
  EXPECT_DOUBLE_EQ(*covs[1].caption_values[0][1], std::exp(2.0));
  // A plain CSV: header first, no comment line (Python's csv and pandas read it as it is).
  const std::string csv = perplexity_csv(ds, v);
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "id,caption,tokens,mean_nll,perplexity,perplexity_exp2");
  EXPECT_NE(csv.find("\n1,1,3,5,148.4131591025766,32\n"), std::string::npos) << csv;
  // exp and exp2 are both monotone: Spearman's rho agrees, Pearson's r does not.
  std::vector<WinogroundScores> scores = {{{0.1, 0.5, 0.3, 0.9}}, {{0.2, 0.7, 0.4, 0.6}}};
  EvalOptions opt;
  opt.bootstrap_resamples = 10;
  EvalResult r = evaluate(ds, scores, {{}, covs}, opt);
  ASSERT_EQ(r.pair_correlations.size(), 3u);  // caption length, perplexity_exp2, perplexity
  const auto& official = r.pair_correlations[1];
  const auto& textbook = r.pair_correlations[2];
  EXPECT_EQ(official.covariate, "perplexity_exp2");
  EXPECT_DOUBLE_EQ(official.spearman.r, textbook.spearman.r);
  EXPECT_GT(std::abs(official.pearson.r - textbook.pearson.r), 1e-3);
}

CompareResult board(const std::vector<std::pair<std::string, std::array<double, 3>>>& runs) {
  CompareResult c;
  for (const auto& [name, v] : runs) {
    c.names.push_back(name);
    GroupStats g;
    g.name = name;
    for (std::size_t m = 0; m < 3; ++m)
      g.metrics[m].value = v[m];
    c.leaderboard.push_back(g);
  }
  return c;
}

TEST(RunCorrelation, Table7WithAndWithoutExcludedRuns) {
  test::TempDir dir;
  auto file = dir.write("info.csv",
                        "run,pretraining_pairs,params\na,400,1\nb,1800,\nd,12,NA\ne,5,\n"
                        "unused,7,8\n");
  RunInfo info = load_run_info(file.string());
  CompareResult c = board({{"a", {0.30, 0.10, 0.08}},
                           {"b", {0.25, 0.12, 0.07}},
                           {"c", {0.20, 0.08, 0.05}},
                           {"d", {0.40, 0.15, 0.11}},
                           {"e", {0.10, 0.05, 0.02}}});
  RunCorrelations rc = correlate_runs(c, info, {"a"});
  ASSERT_EQ(rc.sets.size(), 2u);
  // All runs: 4 with pretraining_pairs (c has none); params has 2 values (a, unused is not a run).
  const auto& all = rc.sets[0];
  ASSERT_EQ(all.rows.size(), 3u);
  EXPECT_EQ(all.rows[0].runs, (std::vector<std::string>{"a", "b", "d", "e"}));
  const double want_r[] = {-0.020883197218750529, 0.2355113142704729, 0.044294125359497259};
  const double want_p[] = {0.97911680278124947, 0.7644886857295271, 0.95570587464050274};
  const double want_rho[] = {0.2, 0.4, 0.2}, want_rho_p[] = {0.8, 0.6, 0.8};
  for (std::size_t m = 0; m < 3; ++m) {
    EXPECT_EQ(all.rows[m].metric, m);
    EXPECT_NEAR(all.rows[m].pearson.r, want_r[m], 1e-12);
    EXPECT_NEAR(all.rows[m].pearson.p, want_p[m], 1e-10);
    EXPECT_NEAR(all.rows[m].spearman.r, want_rho[m], 1e-12);
    EXPECT_NEAR(all.rows[m].spearman.p, want_rho_p[m], 1e-10);
  }
  ASSERT_EQ(all.messages.size(), 1u);
  EXPECT_NE(all.messages[0].find("'params': 1 run(s)"), std::string::npos) << all.messages[0];
  const auto& without = rc.sets[1];
  ASSERT_EQ(without.rows.size(), 3u);
  EXPECT_EQ(without.rows[0].pearson.n, 3u);
  EXPECT_NEAR(without.rows[0].pearson.r, 0.0033838365165302741, 1e-12);
  EXPECT_NEAR(without.rows[0].pearson.p, 0.99784577865600614, 1e-10);
  EXPECT_NEAR(without.rows[1].pearson.r, 0.22831334894294824, 1e-12);
  EXPECT_NEAR(without.rows[1].pearson.p, 0.85335786818019704, 1e-10);
  EXPECT_NEAR(without.rows[2].spearman.r, 0.5, 1e-12);
  EXPECT_NEAR(without.rows[2].spearman.p, 2.0 / 3.0, 1e-10);
  EXPECT_THROW(correlate_runs(c, info, {"nope"}), UsageError);
}

TEST(RunCorrelation, FewerThanThreeRunsIsAMessageNotNaN) {
  test::TempDir dir;
  RunInfo info = load_run_info(dir.write("i.csv", "name,pairs\na,1\nb,2\n").string());
  RunCorrelations rc =
      correlate_runs(board({{"a", {0.1, 0.1, 0.1}}, {"b", {0.2, 0.2, 0.2}}}), info, {});
  ASSERT_EQ(rc.sets.size(), 1u);
  EXPECT_TRUE(rc.sets[0].rows.empty());
  ASSERT_EQ(rc.sets[0].messages.size(), 1u);
  EXPECT_NE(rc.sets[0].messages[0].find("at least 3"), std::string::npos);
  EXPECT_THROW(load_run_info(dir.write("j.csv", "run,pairs\na,inf\n").string()), InputError);
  EXPECT_THROW(load_run_info(dir.write("k.csv", "run,pairs\na,1\na,2\n").string()), InputError);
}

// The paper's section 6.2: run information that is not numeric (architecture, attention type)
// groups the runs, with the mean score and a t interval over the runs of each value; the
// numeric columns keep their points for the Appendix B scatter plots.
TEST(RunCorrelation, CategoricalColumnsGroupRunsWithMeansAndIntervals) {
  test::TempDir dir;
  RunInfo info = load_run_info(
      dir.write("i.csv", "run,arch,pairs\na,dual,400\nb,cross,1800\nd,dual,12\ne,cross,NA\n")
          .string());
  EXPECT_EQ(info.columns, std::vector<std::string>{"pairs"});
  EXPECT_EQ(info.categorical_columns, std::vector<std::string>{"arch"});
  CompareResult c = board({{"a", {0.30, 0.10, 0.08}},
                           {"b", {0.25, 0.12, 0.07}},
                           {"c", {0.20, 0.08, 0.05}},
                           {"d", {0.40, 0.15, 0.11}},
                           {"e", {0.10, 0.05, 0.02}}});
  c.options.confidence = 0.95;
  RunCorrelations rc = correlate_runs(c, info, {});
  ASSERT_EQ(rc.sets[0].categories.size(), 1u);
  const auto& t = rc.sets[0].categories[0];
  EXPECT_EQ(t.column, "arch");
  ASSERT_EQ(t.groups.size(), 2u);
  EXPECT_EQ(t.groups[0].value, "cross");
  EXPECT_EQ(t.groups[0].runs, (std::vector<std::string>{"b", "e"}));
  EXPECT_NEAR(t.groups[0].mean[kText], 0.175, 1e-12);
  const auto& dual = t.groups[1];
  EXPECT_EQ(dual.runs, (std::vector<std::string>{"a", "d"}));
  EXPECT_NEAR(dual.mean[kText], 0.35, 1e-12);
  // t(0.975, 1 df) = 12.706204736174698; sd = 0.1 / sqrt(2); half = t * sd / sqrt(2) = t * 0.05.
  EXPECT_NEAR(dual.interval[kText].low, 0.35 - 12.706204736174698 * 0.05, 1e-9);
  EXPECT_NEAR(dual.interval[kText].high, 0.35 + 12.706204736174698 * 0.05, 1e-9);
  // The Appendix B points: every run with a value, in compare's order.
  ASSERT_EQ(rc.points.at("pairs").size(), 3u);
  EXPECT_EQ(rc.points.at("pairs")[2], (std::pair<std::string, double>{"d", 12}));
  // A single run of a value has a mean and no interval.
  RunInfo one = load_run_info(dir.write("o.csv", "run,arch\na,dual\nb,cross\n").string());
  auto rc1 = correlate_runs(board({{"a", {0.1, 0.1, 0.1}}, {"b", {0.2, 0.2, 0.2}}}), one, {});
  EXPECT_FALSE(rc1.sets[0].categories[0].groups[0].interval[kGroup].valid());
}

}  // namespace
}  // namespace winokit
