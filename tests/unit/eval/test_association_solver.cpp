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

TEST(Solver, PromptArticleAndTopKTies) {
  EXPECT_EQ(cue_prompt("eagle", "{A} {cue}"), "An eagle");
  EXPECT_EQ(cue_prompt("bald", "{A} {cue}"), "A bald");
  EXPECT_EQ(cue_prompt("Owl", "a photo of {a} {cue}"), "a photo of an Owl");
  EXPECT_EQ(select_top_k({"a", "b", "c", "d"}, {0.5, 0.9, 0.9, 0.1}, 2),
            (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(select_top_k({"a", "b", "c"}, {1, 1, 1}, 2), (std::vector<std::string>{"a", "b"}));
}

}  // namespace
}  // namespace winokit
