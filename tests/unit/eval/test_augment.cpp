#include <gtest/gtest.h>

#include <algorithm>

#include "test_util.hpp"
#include "winokit/core/error.hpp"
#include "winokit/core/text.hpp"
#include "winokit/data/variants.hpp"
#include "winokit/eval/augment.hpp"

namespace winokit {
namespace {

WinogroundDataset pair_dataset() {
  return parse_examples(
      R"({"id": 0, "caption_0": "an old dog bites a young cat", "caption_1": "a young dog bites an old cat", "image_0": "a", "image_1": "b"})"
      "\n",
      "e.jsonl");
}

TEST(Variants, AugmentedScoreByHand) {
  WinogroundDataset ds = pair_dataset();
  // Original: c0 prefers i1 (image wrong); a variant of caption 0 prefers i0 strongly.
  std::vector<WinogroundScores> original = {{{0.4, 0.6, 0.1, 0.9}}};
  std::vector<CaptionVariant> variants = {{0, 0, "x", "v1"}, {0, 0, "x", "v2"}};
  std::vector<std::array<double, 2>> vs = {{1.0, 0.0}, {0.2, 0.0}};
  auto settings = augmented_scores(ds, original, variants, vs, {0, 0.5, 1});
  ASSERT_EQ(settings.size(), 6u);
  EXPECT_EQ(settings[0].agg, "mean");
  EXPECT_DOUBLE_EQ(settings[0].scores[1], 0.0);  // lambda 0: the original, image wrong
  // mean, lambda 0.5: s(c0,i0) = 0.5*0.4 + 0.5*0.6 = 0.5, s(c0,i1) = 0.3: image right.
  EXPECT_DOUBLE_EQ(settings[1].scores[1], 1.0);
  EXPECT_DOUBLE_EQ(settings[1].scores[2], 1.0);
  EXPECT_EQ(settings[3].agg, "max");
}

// Issue 12, item 7: the original caption is the identity variant in the aggregate (appendix D and
// the official winoground_text_aug_expts.py, whose scores[0] is the original); optionally not.

TEST(Variants, AugmentedScoreIncludesTheOriginalUnlessExcluded) {
  WinogroundDataset ds = pair_dataset();
  std::vector<WinogroundScores> original = {{{0.5, 0.6, 0.1, 0.9}}};  // c0 prefers i1: image wrong
  std::vector<CaptionVariant> variants = {{0, 0, "x", "v1"}};
  std::vector<std::array<double, 2>> vs = {{0.7, 0.65}};
  auto with = augmented_scores(ds, original, variants, vs, {1});
  auto without = augmented_scores(ds, original, variants, vs, {1}, false);
  ASSERT_EQ(with.size(), 2u);
  // mean, lambda 1: with the original, s(c0,i0) = (0.5+0.7)/2 = 0.6 < s(c0,i1) = 0.625: wrong;
  // the variant alone: 0.7 > 0.65: right.
  EXPECT_DOUBLE_EQ(with[0].scores[1], 0.0);
  EXPECT_DOUBLE_EQ(without[0].scores[1], 1.0);
  // max, lambda 1: max(0.5, 0.7) = 0.7 > max(0.6, 0.65) = 0.65 either way.
  EXPECT_DOUBLE_EQ(with[1].scores[1], 1.0);
  EXPECT_DOUBLE_EQ(without[1].scores[1], 1.0);
}

// Item 12: variants made elsewhere, in the official examples_augmented.jsonl layout.

}  // namespace
}  // namespace winokit
