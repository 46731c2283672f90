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

}  // namespace
}  // namespace winokit
