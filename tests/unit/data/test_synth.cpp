#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "test_util.hpp"
#include "winokit/core/error.hpp"
#include "winokit/core/text.hpp"
#include "winokit/data/synth.hpp"
#include "winokit/eval/evaluation.hpp"
#include "winokit/eval/scorer.hpp"
#include "winokit/io/image_store.hpp"

namespace winokit {
namespace {

SynthDataset small(std::size_t count, std::uint64_t seed) {
  SynthOptions o;
  o.count = count;
  o.seed = seed;
  o.image_size = 96;
  return generate_synthetic(o);
}

TEST(Synth, DeterministicAndIndependentOfCount) {
  auto a = small(21, 3), b = small(21, 3), c = small(30, 3), d = small(21, 4);
  EXPECT_EQ(a.examples_jsonl, b.examples_jsonl);
  EXPECT_EQ(a.images_png, b.images_png);
  // WinogroundExample i is the same whatever the total count.
  for (std::size_t i = 0; i < 21; ++i) {
    EXPECT_EQ(a.dataset.examples[i].captions, c.dataset.examples[i].captions);
    EXPECT_EQ(a.images_png[i], c.images_png[i]);
  }
  EXPECT_NE(a.examples_jsonl, d.examples_jsonl);
}

TEST(Synth, CaptionPairsUseTheSameWordsInADifferentOrder) {
  auto s = small(70, 9);
  std::set<std::string> collapsed;
  for (const auto& ex : s.dataset.examples) {
    auto w0 = split_whitespace(ex.captions[0]), w1 = split_whitespace(ex.captions[1]);
    EXPECT_NE(w0, w1) << ex.captions[0];
    std::sort(w0.begin(), w0.end());
    std::sort(w1.begin(), w1.end());
    EXPECT_EQ(w0, w1) << ex.captions[0] << " / " << ex.captions[1];
    collapsed.insert(ex.collapsed_tag);
    EXPECT_FALSE(ex.tag.empty());
    EXPECT_TRUE(ex.num_main_preds.has_value());
  }
  EXPECT_EQ(collapsed, (std::set<std::string>{"Object", "Relation", "Both"}));
}

TEST(Synth, OracleIsPerfectBagOfWordsTiesEverywhere) {
  auto s = small(35, 2);
  s.dataset.examples_path = "synthetic/examples.jsonl";
  EvalOptions opt;
  opt.bootstrap_resamples = 100;
  auto oracle = make_baseline_scorer("oracle", 0)->score(s.dataset);
  auto r = evaluate(s.dataset, oracle, {}, opt);
  EXPECT_EQ(r.overall.metrics[kGroup].correct, 35u);
  auto bow = make_baseline_scorer("bag-of-words", 0)->score(s.dataset);
  auto rb = evaluate(s.dataset, bow, {}, opt);
  EXPECT_EQ(rb.overall.metrics[kText].correct, 0u);
  // Both captions of a pair tie on every image: all 2 text comparisons of every example.
  EXPECT_EQ(rb.overall.ties.text, 2u * 35u);
}

TEST(Synth, SceneTruthFollowsTheGrammar) {
  Scene scene;
  scene.width = scene.height = 100;
  scene.objects = {{"circle", "red", "big", 20, 50, 15}, {"square", "blue", "small", 80, 50, 8}};
  EXPECT_DOUBLE_EQ(scene_truth("a red circle and a blue square", scene), 1.0);
  EXPECT_DOUBLE_EQ(scene_truth("a blue circle and a red square", scene), 0.0);
  EXPECT_DOUBLE_EQ(scene_truth("a circle is left of a square", scene), 1.0);
  EXPECT_NEAR(scene_truth("a square is left of a circle", scene), 2.0 / 3.0, 1e-15);
  EXPECT_DOUBLE_EQ(scene_truth("the circle is big and the square is small", scene), 1.0);
  EXPECT_DOUBLE_EQ(scene_truth("one circles and one squares", scene), 1.0);
  EXPECT_THROW(scene_truth("a dog chases a cat", scene), UsageError);
}

TEST(Synth, SceneScorersRefuseRealData) {
  WinogroundDataset ds = test::dataset_of(1);
  EXPECT_THROW(make_baseline_scorer("oracle", 0)->score(ds), UsageError);
  EXPECT_THROW(make_baseline_scorer("nonsense", 0), UsageError);
}

TEST(Synth, WritesFolderOrZipThatLoadsBack) {
  test::TempDir dir;
  auto s = small(7, 1);
  write_synthetic(s, dir.path() / "plain", false, false);
  write_synthetic(s, dir.path() / "zipped", true, false);
  EXPECT_THROW(write_synthetic(s, dir.path() / "plain", false, false), IoError);
  auto plain = load_dataset(dir.path() / "plain");
  auto zipped = load_dataset(dir.path() / "zipped");
  EXPECT_EQ(plain.examples.size(), 7u);
  EXPECT_EQ(plain.examples_sha256, zipped.examples_sha256);
  auto a = ImageStore::open(plain.root).read("ex_6_img_1");
  auto b = ImageStore::open(zipped.root).read("ex_6_img_1");
  EXPECT_EQ(a.bytes, b.bytes);
  EXPECT_EQ(a.format, ImageFormat::Png);
}

}  // namespace
}  // namespace winokit
