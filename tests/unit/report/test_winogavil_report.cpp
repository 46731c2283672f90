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
#include "winokit/report/format.hpp"
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

const std::string kAssets = std::string(WINOKIT_SOURCE_DIR) + "/tests/fixtures/winogavil/";

TEST(WinoGAViL, ReportLabelsSolversPrintsPaperReferencesAndTable10) {
  auto a = load_winogavil(kAssets +
                          "test_sets_with_zero_shot_predictions/game_5_6_with_predictions.csv");
  auto r = evaluate_associations(a, predictions_from_column(a, "clip_vit_32_predictions"), {});
  ASSERT_EQ(r.cross.size(), 2u);
  EXPECT_EQ(r.cross[0].candidates, 5);
  EXPECT_EQ(r.cross[0].k, 2);
  EXPECT_EQ(r.cross[0].n, 1u);
  EXPECT_NEAR(r.cross[1].mean, 0.5, 1e-12);
  EXPECT_NEAR(r.cross[1].chance, expected_random_jaccard(6, 3), 1e-12);
  const std::string md = markdown_associations(r, "clip");
  EXPECT_NE(md.find("Solvers in the file (%)"), std::string::npos) << md;
  EXPECT_EQ(md.find("Humans (%)"), std::string::npos);
  EXPECT_NE(md.find("| 5 | 1 | 100.0 | 100 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 30.0 | 38 | 100.0 |"), std::string::npos) << md;  // exact, paper's, solvers
  EXPECT_NE(md.find("| 6 | - | 50.0 (1) |"), std::string::npos) << md;   // Table 10 row
  // The paper's model column: the game's rival, 100 - score_fool_the_ai (0 and 33 here).
  ASSERT_TRUE(r.cross[0].rival && r.cross[1].rival);
  EXPECT_NEAR(*r.cross[0].rival, 1.0, 1e-12);
  EXPECT_NEAR(*r.cross[1].rival, 0.67, 1e-12);
  EXPECT_EQ(r.cross[1].rival_n, 1u);
  EXPECT_NE(md.find("The paper's model column of Table 10: the game's rival"), std::string::npos);
  EXPECT_NE(md.find("| 5 | 100.0 (1) | - |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 6 | - | 67.0 (1) |"), std::string::npos) << md;
  EXPECT_NE(md.find("90 / 92 / 95 % Jaccard"), std::string::npos);
  EXPECT_NE(md.find("38/34/24/17"), std::string::npos);
  const auto j = json_associations(r, "clip", nlohmann::json::object());
  EXPECT_EQ(j["candidates_by_k"].size(), 2u);
  EXPECT_NEAR(j["candidates_by_k"][1]["rival_jaccard_percent"].get<double>(), 67.0, 1e-9);
  EXPECT_EQ(j["breakdowns"][0]["groups"][0]["paper_chance_percent"], 38);
  EXPECT_EQ(paper_random_chance_percent(12), 17);
  EXPECT_FALSE(paper_random_chance_percent(7));
}

TEST(WinoGAViL, HtmlHeadlineNamesTheGamesSolversAndBarsCarryAxisAndValues) {
  auto a = load_winogavil(kAssets +
                          "test_sets_with_zero_shot_predictions/game_5_6_with_predictions.csv");
  auto r = evaluate_associations(a, predictions_from_column(a, "clip_vit_32_predictions"), {});
  ASSERT_TRUE(r.overall.human);
  const std::string html = html_associations(r, "clip", nlohmann::json::object());
  const auto start = html.find("class=\"headline\"");
  ASSERT_NE(start, std::string::npos);
  const std::string headline = html.substr(start, html.find("</div>", start) - start);
  EXPECT_EQ(headline.find("humans"), std::string::npos) << headline;
  EXPECT_NE(headline.find("the game's own solvers (in the file, kept at >= 80 by selection, not "
                          "human performance) " +
                          percent(*r.overall.human, 1)),
            std::string::npos)
      << headline;
  for (const char* tick : {">0</text>", ">25</text>", ">50</text>", ">75</text>", ">100</text>"})
    EXPECT_NE(html.find(tick), std::string::npos) << tick;
  EXPECT_NE(html.find("<text class=\"axis-title\""), std::string::npos);
  EXPECT_NE(html.find("font-size=\"11\">" + percent(r.overall.mean, 1) + "</text>"),
            std::string::npos);  // the overall bar's value, printed
}

}  // namespace
}  // namespace winokit
