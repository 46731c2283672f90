// VALSE: the loader of the official piece files (valid set, image folders of config.py) and the
// pairwise accuracy acc_r (ties wrong) on hand-computed cases.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <string>

#include "test_util.hpp"
#include "winokit/core/error.hpp"
#include "winokit/data/valse.hpp"
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

std::string item(const std::string& image, int mturk_caption) {
  return R"({"dataset": "visual7w", "image_file": ")" + image +
         R"(", "caption": "There are exactly 2 cars.", "foil": "There are exactly 3 cars.",
             "mturk": {"foil": 0, "caption": )" +
         std::to_string(mturk_caption) + R"(, "other": 0}})";
}

// Every piece with one valid item; counting-hard with 4 (one not valid: mturk.caption 1).
void write_release(const test::TempDir& dir) {
  for (const std::string& p : valse_pieces()) {
    if (p == "counting-hard") {
      dir.write(p + ".json", R"({"c1": )" + item("v7w_1.jpg", 3) + R"(, "c2": )" +
                                 item("v7w_2.jpg", 2) + R"(, "c3": )" + item("v7w_3.jpg", 1) +
                                 R"(, "c4": )" + item("v7w_4.jpg", 2) + "}");
    } else {
      dir.write(p + ".json", R"({"k": )" + item("a.jpg", 3) + "}");
    }
  }
}

TEST(CompositionalValse, ReadsTheReleaseLayout) {
  test::TempDir dir;
  write_release(dir);
  const ValseDataset d = load_valse(dir.path());
  ASSERT_EQ(d.items.size(), 14u);
  EXPECT_EQ(d.items[0].piece, "existence");
  EXPECT_EQ(d.items[0].image, dir.path() / "visual7w" / "images" / "a.jpg");
  EXPECT_EQ(d.items[2].key, "c1");
  EXPECT_FALSE(d.items[4].valid);                                     // c3: mturk.caption 1
  EXPECT_EQ(d.items.back().image, dir.path() / "val2014" / "a.jpg");  // foil-it
  EXPECT_EQ(valse_image_folder("actant-swap"), "actions/images_512");
  EXPECT_EQ(valse_instrument("counting-adversarial"), "counting");
  dir.write("bad/plurals.json", R"({"x": {"image_file": "a.jpg", "caption": "c", "foil": "f"}})");
  const std::string e = error_of([&] { load_valse(dir.path() / "bad" / "plurals.json"); });
  EXPECT_NE(e.find("x.mturk.caption"), std::string::npos) << e;
  fs::remove(dir.path() / "foil-it.json");
  EXPECT_NE(error_of([&] { load_valse(dir.path()); }).find("missing: foil-it.json"),
            std::string::npos);
}

TEST(CompositionalValse, PairwiseAccuracyOverTheValidSet) {
  test::TempDir dir;
  write_release(dir);
  const Benchmark& b = find_benchmark("valse");
  const BenchmarkData data = b.load({.data = dir.path(), .need_images = false});
  ASSERT_EQ(data.items.size(), 13u);  // c3 is not in the valid set
  EXPECT_EQ(data.items[2].id, "counting-hard/c1");
  EXPECT_EQ(data.items[4].id, "counting-hard/c4");
  EXPECT_EQ(data.items[2].images[0].name, "visual7w/images/v7w_1.jpg");
  std::vector<ItemScores> s(13, ItemScores{0.9, 0.1});
  s[2] = {0.9, 0.1};   // c1 right
  s[3] = {0.4, 0.4};   // c2 a tie: wrong
  s[4] = {0.1, 0.2};   // c4 wrong
  s[12] = {0.2, 0.3};  // foil-it wrong
  const BenchmarkSummary r = b.evaluate(data, s, {.bootstrap_resamples = 200});
  ASSERT_EQ(r.metrics.size(), 12u);
  EXPECT_EQ(r.metrics[2].name, "counting-hard");
  EXPECT_NEAR(r.metrics[2].percent, 100.0 / 3, 1e-9);
  EXPECT_EQ(r.metrics[2].n, 3u);
  EXPECT_NEAR(r.metrics[10].percent, 0.0, 1e-9);
  // mean of the 11 pieces: 9 x 100 + 33.33 + 0
  EXPECT_NEAR(r.metrics[11].percent, (900.0 + 100.0 / 3) / 11, 1e-9);
  EXPECT_EQ(r.sections[0].rows[2][3], "3");  // valid N
  EXPECT_EQ(r.sections[0].rows[2][2], "4");  // items in the file
  EXPECT_EQ(r.sections[0].rows[2][6], "1");  // the tie
  EXPECT_EQ(r.sections[1].rows[2][0], "counting");
  EXPECT_EQ(r.sections[1].rows[2][1], "3");
}

}  // namespace
}  // namespace winokit
