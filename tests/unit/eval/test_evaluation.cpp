#include <gtest/gtest.h>

#include "test_util.hpp"
#include "winokit/core/error.hpp"
#include "winokit/eval/compare.hpp"
#include "winokit/eval/evaluation.hpp"
#include "winokit/report/csv_report.hpp"
#include "winokit/report/example_browser.hpp"
#include "winokit/report/format.hpp"
#include "winokit/report/html_report.hpp"
#include "winokit/report/json_report.hpp"
#include "winokit/report/markdown.hpp"

namespace winokit {
namespace {

WinogroundScores ps(double c0i0, double c0i1, double c1i0, double c1i1) {
  return {{c0i0, c0i1, c1i0, c1i1}};
}

TEST(Judge, DefinitionsFromThePaper) {
  auto both = judge(ps(0.9, 0.1, 0.2, 0.8));
  EXPECT_TRUE(both.text && both.image && both.group);
  // Text right, image wrong: c0 prefers i1.
  auto text_only = judge(ps(0.5, 0.6, 0.1, 0.7));
  EXPECT_TRUE(text_only.text);
  EXPECT_FALSE(text_only.image);
  EXPECT_FALSE(text_only.group);
  // Image right, text wrong: i0 prefers c1.
  auto image_only = judge(ps(0.5, 0.1, 0.6, 0.7));
  EXPECT_FALSE(image_only.text);
  EXPECT_TRUE(image_only.image);
}

TEST(Judge, TiesCountAsWrongAndAreCounted) {
  auto o = judge(ps(1, 1, 1, 1));
  EXPECT_FALSE(o.text || o.image || o.group);
  EXPECT_EQ(o.text_ties, 2);
  EXPECT_EQ(o.image_ties, 2);
  auto half = judge(ps(0.9, 0.1, 0.9, 0.95));  // c0i0 == c1i0 only
  EXPECT_FALSE(half.text);
  EXPECT_TRUE(half.image);
  EXPECT_EQ(half.text_ties, 1);
  EXPECT_EQ(half.image_ties, 0);
}

TEST(Evaluate, OverallFiguresAndTies) {
  WinogroundDataset ds = test::dataset_of(8);
  std::vector<WinogroundScores> s(8, ps(0.1, 0.9, 0.9, 0.1));  // all wrong
  s[0] = s[1] = s[2] = ps(0.9, 0.1, 0.2, 0.8);                 // group right
  s[3] = ps(0.5, 0.6, 0.1, 0.7);                               // text only
  s[4] = ps(1, 1, 1, 1);                                       // four ties
  EvalOptions opt;
  opt.bootstrap_resamples = 500;
  EvalResult r = evaluate(ds, s, {}, opt);
  EXPECT_EQ(r.overall.n, 8u);
  EXPECT_EQ(r.overall.metrics[kText].correct, 4u);
  EXPECT_DOUBLE_EQ(r.overall.metrics[kText].value, 0.5);
  EXPECT_EQ(r.overall.metrics[kImage].correct, 3u);
  EXPECT_EQ(r.overall.metrics[kGroup].correct, 3u);
  EXPECT_EQ(r.overall.ties.text + r.overall.ties.image, 4u);
  EXPECT_EQ(r.overall.ties.comparisons, 32u);
  EXPECT_EQ(r.overall.ties.examples_with_ties, 1u);
  EXPECT_NEAR(r.overall.metrics[kText].p_vs_chance, binomial_upper_tail(4, 8, 0.25), 1e-15);
  ASSERT_TRUE(r.overall.metrics[kGroup].fold_t);
  // The paper's split: Python's random.seed(0); shuffle(list(range(8))) = [4, 1, 5, 2, 0, 3, 7,
  // 6], group outcomes 0,1 | 0,1 | 1,0 | 0,0.
  EXPECT_EQ(r.overall.metrics[kGroup].fold_t->fold_means, (std::vector<double>{0.5, 0.5, 0.5, 0}));
  EXPECT_NE(fold_method_text(opt).find("random.shuffle"), std::string::npos);
  // Folds of two in id order: group outcomes 1,1 | 1,0 | 0,0 | 0,0.
  opt.fold_split = FoldSplit::IdOrder;
  EvalResult id = evaluate(ds, s, {}, opt);
  EXPECT_EQ(id.overall.metrics[kGroup].fold_t->fold_means, (std::vector<double>{1, 0.5, 0, 0}));
  EXPECT_EQ(fold_column_label(opt), "t over 4 folds (id order)");
  EXPECT_EQ(fold_method_text(opt).find("paper's interval"), std::string::npos);
}

TEST(Evaluate, BreakdownsMembershipVersusExactSecondaryTags) {
  std::string text;
  const std::vector<std::string> secondary = {
      "Symbolic",         "Symbolic", "Symbolic", "Symbolic, Series",
      "Symbolic, Series", "Series",   "",         "Pragmatics"};
  for (int i = 0; i < 8; ++i) {
    text += test::example_line(i, i % 2 ? "Negation, Scope" : "Noun", secondary[i],
                               i < 3 ? "Object" : (i < 7 ? "Relation" : "Both"), i < 6 ? 1 : 2);
  }
  WinogroundDataset ds = parse_examples(text, "e.jsonl");
  std::vector<WinogroundScores> s(8, ps(0.9, 0.1, 0.2, 0.8));
  EvalOptions opt;
  opt.bootstrap_resamples = 200;
  auto find = [](const EvalResult& r, const std::string& key) -> const Breakdown& {
    for (const auto& b : r.breakdowns) {
      if (b.key == key) return b;
    }
    throw std::runtime_error("no breakdown " + key);
  };
  EvalResult member = evaluate(ds, s, {}, opt);
  const auto& sec = find(member, "secondary_tag");
  ASSERT_EQ(sec.groups.size(), 3u);
  EXPECT_EQ(sec.groups[0].name, "Symbolic");
  EXPECT_EQ(sec.groups[0].n, 5u);
  EXPECT_EQ(sec.groups[1].name, "Pragmatics");
  EXPECT_EQ(sec.groups[2].name, "Series");
  EXPECT_EQ(sec.groups[2].n, 3u);
  opt.secondary = SecondaryGrouping::ExactSingle;
  EvalResult exact = evaluate(ds, s, {}, opt);
  const auto& sec2 = find(exact, "secondary_tag");
  EXPECT_EQ(sec2.groups[0].n, 3u);
  EXPECT_EQ(sec2.groups[2].n, 1u);
  const auto& collapsed = find(member, "collapsed_tag");
  EXPECT_EQ(collapsed.groups[0].name, "Object");
  EXPECT_EQ(collapsed.groups[0].n, 3u);
  EXPECT_EQ(collapsed.groups[2].name, "Both");
  const auto& preds = find(member, "num_main_preds");
  EXPECT_EQ(preds.groups[0].name, "1 Main Pred");
  EXPECT_EQ(preds.groups[1].name, "2 Main Preds");
  EXPECT_EQ(preds.groups[1].n, 2u);
  const auto& fine = find(member, "tag");
  EXPECT_EQ(fine.groups[0].name, "Negation, Scope");
  EXPECT_EQ(fine.groups[0].n, 4u);
}

TEST(Evaluate, ExtraTagSetsAndCorrelations) {
  WinogroundDataset ds = test::dataset_of(6);
  TagSet set;
  set.name = "hard";
  set.file = "hard.json";
  set.tags = {std::vector<std::string>{},
              std::vector<std::string>{"Unusual Image"},
              std::vector<std::string>{"Unusual Image", "Visually Difficult"},
              std::nullopt,
              std::vector<std::string>{},
              std::nullopt};
  Covariate cov{"ppl", "ppl.csv", "", {1.0, 2.0, 3.0, 4.0, 5.0, 6.0}};
  std::vector<WinogroundScores> s(6, ps(0.1, 0.9, 0.9, 0.1));
  s[3] = s[4] = s[5] = ps(0.9, 0.1, 0.2, 0.8);
  EvalOptions opt;
  opt.bootstrap_resamples = 200;
  EvalResult r = evaluate(ds, s, {{set}, {cov}}, opt);
  const Breakdown& b = r.breakdowns.back();
  EXPECT_EQ(b.key, "tags:hard");
  ASSERT_EQ(b.groups.size(), 3u);
  EXPECT_EQ(b.groups[0].name, "No Tag");
  EXPECT_EQ(b.groups[0].n, 2u);
  EXPECT_EQ(b.groups[1].name, "Unusual Image");
  EXPECT_EQ(b.groups[1].n, 2u);
  // Built-in caption length (constant here: undefined) and the given covariate, 3 metrics each.
  ASSERT_EQ(r.correlations.size(), 6u);
  EXPECT_TRUE(std::isnan(r.correlations[0].pearson.r));
  const auto& group_ppl = r.correlations[5];
  EXPECT_EQ(group_ppl.covariate, "ppl");
  EXPECT_EQ(group_ppl.metric, kGroup);
  EXPECT_NEAR(group_ppl.pearson.r, pearson({1, 2, 3, 4, 5, 6}, {0, 0, 0, 1, 1, 1}).r, 1e-15);
  EXPECT_GT(group_ppl.spearman.r, 0.8);
}

TEST(Evaluate, IndependentOfGroupOrderAndRepeatable) {
  WinogroundDataset ds = test::dataset_of(40);
  std::vector<WinogroundScores> s;
  for (int i = 0; i < 40; ++i)
    s.push_back(i % 3 ? ps(0.9, 0.1, 0.2, 0.8) : ps(1, 2, 3, 4));
  EvalOptions opt;
  opt.bootstrap_resamples = 1000;
  auto a = evaluate(ds, s, {}, opt);
  auto b = evaluate(ds, s, {}, opt);
  EXPECT_EQ(a.overall.metrics[kGroup].bootstrap_bca.low,
            b.overall.metrics[kGroup].bootstrap_bca.low);
  // A group's bootstrap stream depends only on its name: "Overall" over all examples equals
  // group_stats computed alone.
  auto alone = group_stats("Overall", ds.id_order(), a.outcomes, opt, "overall");
  EXPECT_EQ(alone.metrics[kText].bootstrap_percentile.high,
            a.overall.metrics[kText].bootstrap_percentile.high);
}

TEST(Compare, LeaderboardAndMcNemar) {
  WinogroundDataset ds = test::dataset_of(10);
  std::vector<WinogroundScores> good(10, ps(0.9, 0.1, 0.2, 0.8)), bad(10, ps(0.1, 0.9, 0.9, 0.1));
  std::vector<WinogroundScores> mid = good;
  for (int i = 0; i < 5; ++i)
    mid[static_cast<std::size_t>(i)] = bad[0];
  EvalOptions opt;
  opt.bootstrap_resamples = 300;
  auto c = compare_runs(ds, {{"bad", bad, {}}, {"good", good, {}}, {"mid", mid, {}}}, opt);
  ASSERT_EQ(c.leaderboard.size(), 3u);
  EXPECT_EQ(c.leaderboard[0].name, "good");
  EXPECT_EQ(c.leaderboard[1].name, "mid");
  EXPECT_EQ(c.leaderboard[2].name, "bad");
  ASSERT_EQ(c.pairwise.size(), 9u);  // 3 pairs x 3 metrics
  const auto& bad_good_group = c.pairwise[2];
  EXPECT_EQ(bad_good_group.a, "bad");
  EXPECT_EQ(bad_good_group.b, "good");
  EXPECT_EQ(bad_good_group.b_only, 10u);
  EXPECT_NEAR(bad_good_group.p_mcnemar, 2.0 / 1024.0, 1e-15);
  EXPECT_DOUBLE_EQ(bad_good_group.difference, -1.0);
  EXPECT_THROW(compare_runs(ds, {{"x", bad, {}}}, opt), UsageError);
  EXPECT_THROW(compare_runs(ds, {{"x", bad, {}}, {"x", good, {}}}, opt), UsageError);
}

}  // namespace
}  // namespace winokit

namespace winokit {
namespace {

// Issue 12, item 5: the papers' "> chance" (strictly above, no test) next to the binomial test.
TEST(AboveChance, PaperDefinitionAndSignificanceAreBothReported) {
  // 400 examples: text 26% (above chance as the paper bolds it, not significant), image 35%
  // (both), group 66 of 400 = 16.5% (not above 16.67%).
  std::vector<Outcome> outcomes(400);
  for (std::size_t i = 0; i < 400; ++i) {
    outcomes[i].text = i < 104;
    outcomes[i].image = i < 140;
    outcomes[i].group = i < 66;  // 66 / 400 = 16.5% < 16.67%
  }
  std::vector<std::size_t> members(400);
  for (std::size_t i = 0; i < 400; ++i)
    members[i] = i;
  EvalOptions o;
  o.bootstrap_resamples = 100;
  GroupStats g = group_stats("All", members, outcomes, o, "t");
  EXPECT_TRUE(g.metrics[kText].above_chance_paper);
  EXPECT_FALSE(g.metrics[kText].above_chance);  // P(X >= 104 | 400, 0.25) ~ 0.33
  EXPECT_TRUE(g.metrics[kImage].above_chance_paper);
  EXPECT_TRUE(g.metrics[kImage].above_chance);
  EXPECT_FALSE(g.metrics[kGroup].above_chance_paper);
  // Exactly at chance is not above (strict >): 100 of 400 text, 1 of 6 group.
  for (std::size_t i = 0; i < 400; ++i)
    outcomes[i].text = i < 100;
  std::vector<std::size_t> six = {0, 100, 200, 300, 350, 399};
  GroupStats at = group_stats("At", members, outcomes, o, "t");
  EXPECT_FALSE(at.metrics[kText].above_chance_paper);
  GroupStats g6 = group_stats("Six", six, outcomes, o, "t");
  EXPECT_EQ(g6.metrics[kGroup].correct, 1u);
  EXPECT_FALSE(g6.metrics[kGroup].above_chance_paper);
  // Reports label both.
  EvalResult r;
  r.overall = g;
  r.options = o;
  ReportContext ctx;
  ctx.model = "m";
  const std::string md = markdown_report(r, ctx);
  EXPECT_NE(md.find("> chance (paper) | significant (binomial p < 0.05) |"), std::string::npos)
      << md;
  EXPECT_NE(md.find("| yes | no |"), std::string::npos) << md;  // text: paper yes, test no
  EXPECT_NE(csv_report(r, ctx).find("above_chance_paper,significant_vs_chance"), std::string::npos);
}

}  // namespace
}  // namespace winokit
