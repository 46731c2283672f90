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

const std::string kAssets = std::string(WINOKIT_SOURCE_DIR) + "/tests/fixtures/winogavil/";

TEST(WinoGAViL, ReadsThePublishedLayoutByHeaderName) {
  auto ds = parse_winogavil(kCsv, "wg.csv");
  ASSERT_EQ(ds.instances.size(), 2u);
  EXPECT_EQ(ds.instances[0].cue, "bald");
  EXPECT_EQ(ds.instances[0].candidates.size(), 5u);
  EXPECT_EQ(ds.instances[1].id, "7");
  EXPECT_EQ(ds.instances[1].candidates[6], "ice cream");
  EXPECT_EQ(*ds.instances[1].solvers_jaccard_mean, 0.8);
  // ID first and extra columns: same instances.
  auto moved = parse_winogavil(
      "ID,extra,cue,associations,candidates\n3,x,bald,\"[\"\"a\"\"]\",\"[\"\"a\"\", \"\"b\"\"]\"\n",
      "m.csv");
  EXPECT_EQ(moved.instances[0].id, "3");
  EXPECT_EQ(moved.instances[0].k(), 1);
}

TEST(WinoGAViL, BadRowsNameFileLineAndColumn) {
  const std::string head = "candidates,cue,associations,num_associations\n";
  struct Case {
    std::string row, expect;
  };
  for (const Case& c : std::vector<Case>{
           {"\"[\"\"a\"\", \"\"b\"\"]\",x,\"[\"\"c\"\"]\",1",
            "w.csv:2: field 'associations': 'c' is not a candidate"},
           {"\"[\"\"a\"\", \"\"b\"\"]\",x,\"[\"\"a\"\"]\",2",
            "field 'num_associations': '2' disagrees"},
           {"not a list,x,\"[\"\"a\"\"]\",1", "field 'candidates': expected a non-empty list"},
           {"\"[\"\"a\"\", \"\"a\"\"]\",x,\"[\"\"a\"\"]\",1", "a candidate appears twice"},
       }) {
    try {
      parse_winogavil(head + c.row + "\n", "w.csv");
      ADD_FAILURE() << c.row;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(c.expect), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(parse_winogavil("cue,associations\nx,[]\n", "w.csv"),
               InputError);  // no candidates column
}

// Issue 23, item 7: a NUL inside a cue was accepted and written raw to --predictions-out.
TEST(WinoGAViL, AControlCharacterInACueIsRefused) {
  using namespace std::string_literals;
  const std::string head = "candidates,cue,associations\n";
  for (const std::string& cue : {"sk\0y"s, "sk\x01y"s, "\"sk\ny\""s}) {
    try {
      parse_winogavil(head + "\"[\"\"a\"\", \"\"b\"\"]\"," + cue + ",\"[\"\"a\"\"]\"\n", "w.csv");
      ADD_FAILURE() << "accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("w.csv:2: field 'cue': control character"),
                std::string::npos)
          << e.what();
    }
  }
  EXPECT_EQ(
      parse_winogavil(head + "\"[\"\"a\"\", \"\"b\"\"]\",ice cream,\"[\"\"a\"\"]\"\n", "w.csv")
          .instances.at(0)
          .cue,
      "ice cream");
}

TEST(WinoGAViL, NameListsJsonOrPython) {
  EXPECT_EQ(*parse_name_list(R"(["a", "b c"])"), (std::vector<std::string>{"a", "b c"}));
  EXPECT_EQ(*parse_name_list(R"(['a', "it's", 'x\'y'])"),
            (std::vector<std::string>{"a", "it's", "x'y"}));
  EXPECT_TRUE(parse_name_list("[]")->empty());
  EXPECT_FALSE(parse_name_list("a, b"));
  EXPECT_FALSE(parse_name_list("[1, 2]"));
}

TEST(WinoGAViL, ReadsEveryPublishedAssetsCsvAsItIs) {
  for (const char* f : {"game_5_6.csv", "game_10_12.csv", "swow.csv", "winogavil_dataset.csv",
                        "model_analysis_on_different_association_types.csv",
                        "test_sets_with_zero_shot_predictions/game_5_6_with_predictions.csv",
                        "test_sets_with_zero_shot_predictions/game_10_12_with_predictions.csv",
                        "test_sets_with_zero_shot_predictions/swow_with_predictions.csv"}) {
    SCOPED_TRACE(f);
    AssociationDataset ds;
    ASSERT_NO_THROW(ds = load_winogavil(kAssets + f));
    EXPECT_EQ(ds.instances.size(), 2u);
  }
  auto swow = load_winogavil(kAssets + "swow.csv");
  EXPECT_EQ(swow.instances[1].id, "1767");
  EXPECT_EQ(swow.instances[0].candidates[1], "nail polish");
  auto preds =
      load_winogavil(kAssets + "test_sets_with_zero_shot_predictions/swow_with_predictions.csv");
  auto r =
      evaluate_associations(preds, predictions_from_column(preds, "clip_vit_32_predictions"), {});
  EXPECT_NEAR(r.per_instance[1], 1.0 / 3.0, 1e-12);  // the file's clip_vit_32_jaccard
  // The text-only captions file names its image column img_name.
  auto captions = load_candidate_captions(kAssets + "ofa_image_caption_predictions.csv");
  EXPECT_EQ(captions.at("lava"), "a volcano erupting at sunset");
}

// Item 2: a type name may hold a comma; the analysis CSV maps a candidate to one type.

TEST(WinoGAViL, AssociationTypesKeepCommasInsideANameAsPublished) {
  auto ds = load_winogavil(kAssets + "model_analysis_on_different_association_types.csv");
  EXPECT_EQ(ds.instances[0].association_types.at("rose"),
            std::vector<std::string>{"Non Visual, Concept Related"});
  auto r = evaluate_associations(ds, predictions_from_column(ds, "clip_vit32_predictions"), {});
  const AssociationBreakdown* types = nullptr;
  for (const auto& b : r.breakdowns)
    if (b.key == "association_type") types = &b;
  ASSERT_NE(types, nullptr);
  std::set<std::string> names;
  for (const auto& g : types->groups)
    names.insert(g.name);
  EXPECT_EQ(names, (std::set<std::string>{"Non Visual, Concept Related", "Visually Non-Salient",
                                          "Visually Salient Object"}));
  for (const auto& g : types->groups) {
    // rose (picked) and heroin (picked), marshmallow (not): 2 of 3.
    if (g.name == "Non Visual, Concept Related") EXPECT_NEAR(*g.recall, 2.0 / 3.0, 1e-12);
  }
  // --types from the analysis file onto the test set with predictions (joined by ID).
  auto test = load_winogavil(
      kAssets + "test_sets_with_zero_shot_predictions/game_10_12_with_predictions.csv");
  load_association_types(test, kAssets + "model_analysis_on_different_association_types.csv");
  EXPECT_EQ(test.instances[1].association_types.at("tea"),
            std::vector<std::string>{"Visually Salient Object"});
  // A list of names is several types.
  auto listed = parse_winogavil(
      "candidates,cue,associations,annotations_label\n\"[\"\"a\"\", \"\"b\"\"]\",x,\"[\"\"a\"\"]\","
      "\"{\"\"a\"\": [\"\"Colors\"\", \"\"OCR\"\"]}\"\n",
      "l.csv");
  EXPECT_EQ(listed.instances[0].association_types.at("a"),
            (std::vector<std::string>{"Colors", "OCR"}));
}

// Item 1: solvers' Jaccard on the published 0-1 scale; anything else names the row and column.

TEST(WinoGAViL, OutOfScaleScoresAreRejectedWithRowAndColumn) {
  const std::string head =
      "candidates,cue,associations,score_fool_the_ai,num_associations,num_candidates,"
      "solvers_jaccard_mean,solvers_jaccard_std,ID\n";
  const std::string lists = "\"[\"\"a\"\", \"\"b\"\"]\",x,\"[\"\"a\"\"]\",";
  for (const auto& [row, expect] : std::vector<std::pair<std::string, std::string>>{
           {lists + "50,1,2,77.78,0.1,0",
            "e.csv:2: field 'solvers_jaccard_mean': '77.78' is outside the 0-1 scale"},
           {lists + "50,1,2,0.7,12,0", "e.csv:2: field 'solvers_jaccard_std': '12' is outside"},
           {lists + "150,1,2,0.7,0.1,0",
            "e.csv:2: field 'score_fool_the_ai': '150' is outside the 0-100"}}) {
    try {
      parse_winogavil(head + row + "\n", "e.csv");
      ADD_FAILURE() << row;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(expect), std::string::npos) << e.what();
    }
  }
}

// Items 9, 10 and 11 (Table 10): labelled solvers' column, the paper's reference values, and the
// candidates x k table with N.

}  // namespace
}  // namespace winokit
