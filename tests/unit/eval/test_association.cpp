#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "model/families/clip/clip_model.hpp"
#include "test_util.hpp"
#include "winokit/core/error.hpp"
#include "winokit/core/rng.hpp"
#include "winokit/data/swow.hpp"
#include "winokit/data/winogavil.hpp"
#include "winokit/eval/association.hpp"
#include "winokit/eval/association_solver.hpp"
#include "winokit/eval/supervised.hpp"
#include "winokit/model/compute.hpp"
#include "winokit/report/winogavil_report.hpp"

namespace winokit {
namespace {

const std::string kCsv =
    "candidates,cue,associations,score_fool_the_ai,num_associations,num_candidates,"
    "solvers_jaccard_mean,solvers_jaccard_std,ID,clip_vit_32_predictions\n"
    "\"[\"\"eagle\"\", \"\"teepee\"\", \"\"factory\"\", \"\"metal\"\", \"\"ash\"\"]\",bald,"
    "\"[\"\"eagle\"\", \"\"ash\"\"]\",0,2,5,1.0,0.0,0,\"['eagle', 'metal']\"\n"
    "\"['rose', 'splinter', 'cat', 'dog', 'sun', 'moon', 'ice cream', 'x', 'y', 'z']\",thorn,"
    "\"['rose', 'splinter', 'cat']\",50,3,10,0.8,0.1,7,\"['rose', 'splinter', 'cat']\"\n";

TEST(WinoGAViL, JaccardAndExactChanceAgainstEnumeration) {
  EXPECT_DOUBLE_EQ(jaccard({"a", "b"}, {"b", "c"}), 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(jaccard({"a"}, {"a"}), 1.0);
  for (int n : {5, 6, 10, 12}) {
    for (int k = 1; k <= std::min(n, 5); ++k) {
      // Enumerate every k-subset of n against the gold set {0..k-1}.
      double total = 0, count = 0;
      for (unsigned mask = 0; mask < (1u << n); ++mask) {
        if (__builtin_popcount(mask) != k) continue;
        const int inter = __builtin_popcount(mask & ((1u << k) - 1));
        total += static_cast<double>(inter) / (2 * k - inter);
        ++count;
      }
      EXPECT_NEAR(expected_random_jaccard(n, k), total / count, 1e-12) << n << " " << k;
    }
  }
}

TEST(WinoGAViL, MetricsBreakdownsHumansAndPredictionsCsv) {
  auto ds = parse_winogavil(kCsv, "wg.csv");
  auto preds = predictions_from_column(ds, "clip_vit_32_predictions");
  AssociationOptions o;
  o.bootstrap_resamples = 200;
  auto r = evaluate_associations(ds, preds, o);
  EXPECT_NEAR(r.overall.mean, (1.0 / 3.0 + 1.0) / 2, 1e-12);
  EXPECT_NEAR(*r.overall.human, 0.9, 1e-12);
  EXPECT_NEAR(r.overall.chance,
              (expected_random_jaccard(5, 2) + expected_random_jaccard(10, 3)) / 2, 1e-12);
  const auto& cands = r.breakdowns[0];
  std::set<std::string> names;
  for (const auto& g : cands.groups)
    names.insert(g.name);
  EXPECT_EQ(names, (std::set<std::string>{"5", "10", "5&6", "10&12"}));
  EXPECT_EQ(truncated_percent(0.41), 41);
  EXPECT_EQ(truncated_percent(0.419), 41);
  std::string md = markdown_associations(r, "clip_vit_32");
  EXPECT_NE(md.find("| All | 2 | 66.7 | 66 |"), std::string::npos) << md;
  // The predictions CSV is the input plus two columns, and reads back to the same predictions.
  auto out = parse_winogavil(predictions_csv(ds, preds, r, "mine"), "out.csv");
  EXPECT_EQ(predictions_from_column(out, "mine_predictions"), preds);
  EXPECT_EQ(out.table.header.back(), "mine_jaccard");
  EXPECT_THROW(predictions_from_column(ds, "nope"), InputError);
}

// Issue 12, item 3: every CSV the official repository publishes under assets/ reads as it is.

TEST(WinoGAViL, BootstrapIsSeededAndIndependentOfThreads) {
  std::vector<double> v;
  for (int i = 0; i < 500; ++i)
    v.push_back((i % 7) / 6.0);
  set_compute_threads(1);
  auto one = bootstrap_mean_interval(v, 2000, 0.95, 9);
  set_compute_threads(2);
  auto two = bootstrap_mean_interval(v, 2000, 0.95, 9);
  EXPECT_EQ(one.low, two.low);
  EXPECT_EQ(one.high, two.high);
  EXPECT_LT(one.low, 0.5);
  EXPECT_GT(one.high, 0.5);
  set_compute_threads(0);
}

}  // namespace
}  // namespace winokit
