// MMVP-VLM: the loader of the official Questions.csv layout and evaluate_vlm.py's pair metric
// (strict and official tie conventions) on hand-computed cases.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <string>

#include "test_util.hpp"
#include "winokit/core/error.hpp"
#include "winokit/data/mmvp.hpp"
#include "winokit/eval/benchmark.hpp"

namespace winokit {
namespace {

namespace fs = std::filesystem;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// The release's 270 rows: ids 1..270, the type of each block of 30 rows, statements "s<id>".
std::string questions(std::size_t rows = 270) {
  const char* types[] = {"Orientation",
                         "Presence",
                         "State",
                         "Quantity",
                         "Spatial",
                         "Color",
                         "Structural Character",
                         "Text",
                         "Camera Perspective"};
  std::string csv = "Question ID,Type,Statement\n";
  for (std::size_t i = 1; i <= rows; ++i)
    csv += std::to_string(i) + "," + types[((i - 1) / 30) % 9] + ",s" + std::to_string(i) + "\n";
  return csv;
}

TEST(CompositionalMmvp, ReadsTheReleaseLayout) {
  test::TempDir dir;
  dir.write("Questions.csv", questions());
  const MmvpDataset d = load_mmvp_vlm(dir.path());
  ASSERT_EQ(d.pairs.size(), 135u);
  EXPECT_EQ(d.pairs[0].qid1, 1);
  EXPECT_EQ(d.pairs[0].qid2, 2);
  EXPECT_EQ(d.pairs[0].statement2, "s2");
  EXPECT_EQ(d.pairs[0].image2, dir.path() / "MLLM_VLM Images" / "Orientation" / "2.jpg");
  EXPECT_EQ(d.pairs[14].category, "Orientation and Direction");
  EXPECT_EQ(d.pairs[15].category, "Presence of Specific Features");  // categories[15 // 15]
  EXPECT_EQ(d.pairs[134].category, "Viewpoint and Perspective");
  EXPECT_EQ(d.pairs[134].image1.parent_path().filename(), "Camera Perspective");
  EXPECT_EQ(d.sha256.size(), 64u);
  // The README's image folder name when only that one exists.
  fs::create_directories(dir.path() / "MMVP_VLM_Images");
  EXPECT_EQ(load_mmvp_vlm(dir.path()).images, dir.path() / "MMVP_VLM_Images");
  // Fewer pairs than the release's: an error, never a smaller N.
  dir.write("short/Questions.csv", questions(268));
  EXPECT_NE(error_of([&] { load_mmvp_vlm(dir.path() / "short"); }).find("134"), std::string::npos);
  std::string bad = questions();
  bad.replace(bad.find("\n5,"), 3, "\nx5,");
  dir.write("bad/Questions.csv", bad);
  const std::string e = error_of([&] { load_mmvp_vlm(dir.path() / "bad" / "Questions.csv"); });
  EXPECT_NE(e.find("Questions.csv:6"), std::string::npos) << e;
  EXPECT_NE(e.find("question id"), std::string::npos) << e;
}

TEST(CompositionalMmvp, PairAccuracyAsEvaluateVlm) {
  test::TempDir dir;
  std::string csv = questions();
  // Pair 16 (the second pattern's first) lists the even id first: its truth is swapped.
  csv.replace(csv.find("\n31,"), 4, "\n32,");
  csv.replace(csv.find("\n32,Presence,s32"), 16, "\n31,Presence,s32");
  dir.write("Questions.csv", csv);
  const Benchmark& b = find_benchmark("mmvp-vlm");
  const BenchmarkData data = b.load({.data = dir.path(), .need_images = false});
  ASSERT_EQ(data.items.size(), 135u);
  EXPECT_EQ(data.items[0].texts[0], "a photo of s1");
  EXPECT_EQ(data.items[0].images[1].name, "Orientation/2.jpg");
  EXPECT_EQ(data.items[15].id, "32-31");
  // [s(t1, i1), s(t1, i2), s(t2, i1), s(t2, i2)]
  std::vector<ItemScores> s(135, ItemScores{0.1, 0.9, 0.9, 0.1});  // both wrong
  for (int k = 0; k < 15; ++k)
    s[k] = {0.9, 0.1, 0.1, 0.9};  // pattern 1: all right
  s[1] = {0.9, 0.1, 0.5, 0.5};    // t2 tie, truth image 2: strict wrong, official right
  s[2] = {0.5, 0.5, 0.1, 0.9};    // t1 tie, truth image 1: wrong under both
  s[15] = {0.1, 0.9, 0.9, 0.1};   // qid 32 (even) then 31 (odd): right under both
  s[16] = {0.9, 0.1, 0.1, 0.9};   // pattern 2, right
  const BenchmarkSummary r = b.evaluate(data, s, {.bootstrap_resamples = 200});
  ASSERT_EQ(r.metrics.size(), 11u);
  EXPECT_NEAR(r.metrics[0].percent, 13.0 / 15 * 100, 1e-9);
  EXPECT_EQ(r.metrics[0].n, 15u);
  EXPECT_NEAR(r.metrics[1].percent, 2.0 / 15 * 100, 1e-9);
  EXPECT_NEAR(r.metrics[9].percent, 15.0 / 135 * 100, 1e-9);   // the mean of equal patterns
  EXPECT_NEAR(r.metrics[10].percent, 16.0 / 135 * 100, 1e-9);  // official: the t2 tie right
  EXPECT_EQ(r.details["ties"], 2);
  EXPECT_EQ(r.details["per_item"][1]["correct"], false);
  EXPECT_EQ(r.details["per_item"][1]["correct_official"], true);
  s[0] = {1.0, 2.0};
  EXPECT_NE(error_of([&] { b.evaluate(data, s, {}); }).find("needs 4 scores"), std::string::npos);
}

}  // namespace
}  // namespace winokit
