#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "test_util.hpp"
#include "winokit/association_solver.hpp"
#include "winokit/clip.hpp"
#include "winokit/error.hpp"
#include "winokit/report/winogavil_report.hpp"
#include "winokit/rng.hpp"
#include "winokit/supervised.hpp"
#include "winokit/swow.hpp"
#include "winokit/winogavil.hpp"

namespace winokit {
namespace {

const std::string kCsv =
    "candidates,cue,associations,score_fool_the_ai,num_associations,num_candidates,"
    "solvers_jaccard_mean,solvers_jaccard_std,ID,clip_vit_32_predictions\n"
    "\"[\"\"eagle\"\", \"\"teepee\"\", \"\"factory\"\", \"\"metal\"\", \"\"ash\"\"]\",bald,"
    "\"[\"\"eagle\"\", \"\"ash\"\"]\",0,2,5,1.0,0.0,0,\"['eagle', 'metal']\"\n"
    "\"['rose', 'splinter', 'cat', 'dog', 'sun', 'moon', 'ice cream', 'x', 'y', 'z']\",thorn,"
    "\"['rose', 'splinter', 'cat']\",50,3,10,0.8,0.1,7,\"['rose', 'splinter', 'cat']\"\n";

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

TEST(WinoGAViL, NameListsJsonOrPython) {
  EXPECT_EQ(*parse_name_list(R"(["a", "b c"])"), (std::vector<std::string>{"a", "b c"}));
  EXPECT_EQ(*parse_name_list(R"(['a', "it's", 'x\'y'])"),
            (std::vector<std::string>{"a", "it's", "x'y"}));
  EXPECT_TRUE(parse_name_list("[]")->empty());
  EXPECT_FALSE(parse_name_list("a, b"));
  EXPECT_FALSE(parse_name_list("[1, 2]"));
}

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

const std::string kAssets = std::string(WINOKIT_SOURCE_DIR) + "/tests/fixtures/winogavil/";

// Issue 12, item 3: every CSV the official repository publishes under assets/ reads as it is.
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
  EXPECT_NE(md.find("90 / 92 / 95 % Jaccard"), std::string::npos);
  EXPECT_NE(md.find("38/34/24/17"), std::string::npos);
  const auto j = json_associations(r, "clip", nlohmann::json::object());
  EXPECT_EQ(j["candidates_by_k"].size(), 2u);
  EXPECT_EQ(j["breakdowns"][0]["groups"][0]["paper_chance_percent"], 38);
  EXPECT_EQ(paper_random_chance_percent(12), 17);
  EXPECT_FALSE(paper_random_chance_percent(7));
}

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

TEST(Solver, PromptArticleAndTopKTies) {
  EXPECT_EQ(cue_prompt("eagle", "{A} {cue}"), "An eagle");
  EXPECT_EQ(cue_prompt("bald", "{A} {cue}"), "A bald");
  EXPECT_EQ(cue_prompt("Owl", "a photo of {a} {cue}"), "a photo of an Owl");
  EXPECT_EQ(select_top_k({"a", "b", "c", "d"}, {0.5, 0.9, 0.9, 0.1}, 2),
            (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(select_top_k({"a", "b", "c"}, {1, 1, 1}, 2), (std::vector<std::string>{"a", "b"}));
}

TEST(Supervised, AnalyticGradientMatchesFiniteDifferences) {
  for (bool layer_norm : {false, true}) {
    SCOPED_TRACE(layer_norm ? "with LayerNorm" : "without LayerNorm");
    Mlp mlp(6, 5, 3, layer_norm);
    if (layer_norm) {
      for (std::size_t i = 0; i < 12; ++i)  // LayerNorm weight and bias away from 1 and 0
        mlp.parameters()[i] += 0.05 * static_cast<double>(i % 5) - 0.1;
    }
    std::vector<float> x = {0.1f,  -0.4f, 0.3f, 0.9f,  -0.2f, 0.5f,
                            -0.7f, 0.2f,  0.4f, -0.1f, 0.6f,  0.3f};
    std::vector<float> y = {1.0f, 0.0f};
    std::vector<double> g;
    mlp.loss_and_gradient(x, y, 2, g);
    std::vector<double> ignored;
    constexpr double kStep = 1e-6;
    for (std::size_t i = 0; i < mlp.parameters().size(); ++i) {
      const double saved = mlp.parameters()[i];
      mlp.parameters()[i] = saved + kStep;
      const double up = mlp.loss_and_gradient(x, y, 2, ignored);
      mlp.parameters()[i] = saved - kStep;
      const double down = mlp.loss_and_gradient(x, y, 2, ignored);
      mlp.parameters()[i] = saved;
      EXPECT_NEAR(g[i], (up - down) / (2 * kStep), 1e-6) << "parameter " << i;
    }
  }
}

// Issue 12, item 8: the official head's LayerNorm is nn.LayerNorm (biased variance, eps 1e-5).
TEST(Supervised, LayerNormForwardAsPyTorch) {
  Mlp mlp(4, 1, 0, true);
  auto& p = mlp.parameters();  // [gamma 4, beta 4, W1 1x4, b1 1, w2 1, b2 1]
  ASSERT_EQ(p.size(), 4u + 4u + 4u + 1u + 1u + 1u);
  const double w1[4] = {1, -1, 0.5, 2};
  for (int i = 0; i < 4; ++i)
    p[8 + static_cast<std::size_t>(i)] = w1[i];
  p[12] = 0.1;                                // b1
  p[13] = 1.5;                                // w2
  p[14] = -0.2;                               // b2
  const std::vector<float> x = {1, 2, 3, 6};  // mean 3, biased variance 3.5
  const double inv = 1 / std::sqrt(3.5 + 1e-5);
  double a = 0.1;
  for (int i = 0; i < 4; ++i)
    a += w1[i] * (x[static_cast<std::size_t>(i)] - 3) * inv;
  const double z = 1.5 * std::max(a, 0.0) - 0.2;
  EXPECT_NEAR(mlp.predict(x, 1)[0], 1 / (1 + std::exp(-z)), 1e-12);
}

// The official protocol: per group a 10% test sample, image-disjoint validation, training on
// both groups' pairs minus held-out instances and images; a learnable problem is learnt.
TEST(Supervised, OfficialProtocolPerCandidateGroup) {
  // 40 instances of 5 candidates and 40 of 10; each instance has its own images; the gold
  // images' embeddings are shifted along one fixed direction.
  std::string csv = "candidates,cue,associations,ID\n";
  std::vector<std::vector<float>> text;
  std::map<std::string, std::vector<float>> image;
  constexpr int kDim = 8;
  Rng rng(7);
  for (int i = 0; i < 80; ++i) {
    const int n = i < 40 ? 5 : 10;
    std::vector<float> cue(kDim);
    for (auto& v : cue)
      v = static_cast<float>(rng.uniform() - 0.5);
    std::string cands = "[", gold = "[";
    for (int c = 0; c < n; ++c) {
      const std::string name = "i" + std::to_string(i) + "c" + std::to_string(c);
      std::vector<float> e(kDim);
      for (int d = 0; d < kDim; ++d)
        e[static_cast<std::size_t>(d)] =
            static_cast<float>(rng.uniform() - 0.5) + (c < 2 && d == 0 ? 3.0f : 0.0f);
      image[name] = e;
      cands += std::string(c ? ", " : "") + "\"\"" + name + "\"\"";
      if (c < 2) gold += std::string(c ? ", " : "") + "\"\"" + name + "\"\"";
    }
    csv += "\"" + cands + "]\",cue" + std::to_string(i) + ",\"" + gold + "]\"," +
           std::to_string(i) + "\n";
    text.push_back(cue);
  }
  auto ds = parse_winogavil(csv, "sup.csv");
  std::vector<std::vector<std::string>> zero(ds.instances.size());
  for (std::size_t i = 0; i < ds.instances.size(); ++i)
    zero[i] = {ds.instances[i].candidates[2], ds.instances[i].candidates[3]};  // always wrong
  SupervisedOptions o;
  o.seeds = {0, 1};
  o.select = EpochSelection::Last;
  auto r = run_supervised(ds, text, image, zero, o);
  ASSERT_EQ(r.groups.size(), 2u);
  EXPECT_EQ(r.groups[0].name, "5&6");
  EXPECT_EQ(r.groups[1].name, "10&12");
  for (const auto& g : r.groups) {
    for (const auto& run : g.runs) {
      EXPECT_EQ(run.test, 4u);  // 10% of 40
      EXPECT_EQ(run.validation, 4u);
      // Both groups train, minus the tested group's 8 held-out instances (own images here).
      EXPECT_EQ(run.train_pairs, g.name == "5&6" ? 32u * 5 + 40u * 10 : 40u * 5 + 32u * 10);
      EXPECT_EQ(run.epoch, 7);
      EXPECT_EQ(run.zero_shot_jaccard, 0.0);
    }
    EXPECT_GT(g.mean, 0.8) << g.name;
  }
  EXPECT_NE(r.protocol.find("LayerNorm + Linear(16 -> 4)"), std::string::npos) << r.protocol;
  // The official default tests the first epoch's model.
  o.select = EpochSelection::First;
  auto first = run_supervised(ds, text, image, zero, o);
  EXPECT_EQ(first.groups[0].runs[0].epoch, 1);
  EXPECT_NE(first.protocol.find("--load_epoch 0"), std::string::npos);
}

TEST(Supervised, LearnsASeparableProblem) {
  Mlp mlp(2, 8, 1);
  std::vector<float> x, y;
  for (int i = 0; i < 64; ++i) {
    const float a = static_cast<float>(i % 8) / 8 - 0.5f, b = static_cast<float>(i / 8) / 8 - 0.5f;
    x.push_back(a);
    x.push_back(b);
    y.push_back(a + b > 0 ? 1.0f : 0.0f);
  }
  double first = mlp.train_batch(x, y, 64, 1e-2), last = first;
  for (int s = 0; s < 300; ++s)
    last = mlp.train_batch(x, y, 64, 1e-2);
  EXPECT_LT(last, first / 3);
}

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
