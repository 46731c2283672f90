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

TEST(Swow, GeneratesValidDeterministicInstances) {
  test::TempDir dir;
  std::string graph = "cue,R1,R2,R3\n";
  const std::vector<std::string> words = {"sun",  "moon", "star",      "sea",  "sand",
                                          "tree", "leaf", "dog",       "cat",  "fish",
                                          "rock", "snow", "ice cream", "fire", "rain"};
  graph +=
      "sky,sun,moon,star\nbeach,sea,sand,sun\nforest,tree,leaf,rain\npet,dog,cat,fish\n"
      "winter,snow,ice cream,fire\nempty,nothing,NA,\n";
  auto g = dir.write("swow.csv", graph);
  for (const auto& w : words)
    dir.write("images/" + w + ".png", "x");
  SwowOptions o;
  o.seed = 4;
  std::size_t made = 0;
  const std::string csv =
      generate_swow_instances(load_swow(g.string()), image_names(dir.path() / "images"), o, &made);
  EXPECT_EQ(made, 5u);  // "empty" has no association with an image
  EXPECT_EQ(csv,
            generate_swow_instances(load_swow(g.string()), image_names(dir.path() / "images"), o));
  auto ds = parse_winogavil(csv, "swow-instances.csv");
  auto sw = load_swow(g.string());
  for (const auto& inst : ds.instances) {
    EXPECT_TRUE(inst.n() == 5 || inst.n() == 6);
    EXPECT_GE(inst.k(), 2);
    EXPECT_LE(inst.k(), 4);
    for (const auto& c : inst.candidates) {
      const bool gold = std::find(inst.associations.begin(), inst.associations.end(), c) !=
                        inst.associations.end();
      EXPECT_EQ(gold, sw.associated(inst.cue, c)) << inst.cue << " / " << c;
    }
  }
}

}  // namespace
}  // namespace winokit
