// EqBen's released subset: the loader, the text / image / group scores of
// eqben_acc.cal_wino_score (ties wrong) on hand-computed cases, and YouCook2's .npy frames.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <string>

#include "test_util.hpp"
#include "winokit/core/error.hpp"
#include "winokit/data/eqben.hpp"
#include "winokit/eval/benchmark.hpp"
#include "winokit/io/image_decode.hpp"

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

std::string pair(const std::string& a, const std::string& b) {
  return R"({"image0": ")" + a + R"(", "caption0": "the door is open", "image1": ")" + b +
         R"(", "caption1": "the door is closed"})";
}

TEST(CompositionalEqBen, ReadsTheSubsetAndScoresAsCalWinoScore) {
  test::TempDir dir;
  dir.write("eqben.json", "[" + pair("eqbenag/v1/a.png", "eqbenag/v1/b.png") + ", " +
                              pair("eqbensd/x.png", "eqbensd/y.png") + ", " +
                              pair("eqbenyoucook2/f1.npy", "eqbenyoucook2/f2.npy") + "]");
  const EqBenDataset d = load_eqben(dir.path() / "eqben.json");
  ASSERT_EQ(d.items.size(), 3u);
  EXPECT_EQ(d.items[0].source, "eqbenag");
  EXPECT_EQ(d.images, dir.path() / "image_subset");
  const Benchmark& b = find_benchmark("eqben");
  const BenchmarkData data = b.load({.data = dir.path() / "eqben.json", .need_images = false});
  ASSERT_EQ(data.items.size(), 3u);
  EXPECT_EQ(data.items[0].images[1].name, "eqbenag/v1/b.png");
  // [c0_i0, c0_i1, c1_i0, c1_i1]
  const std::vector<ItemScores> s = {
      {0.9, 0.1, 0.2, 0.8},   // text, image, group right
      {0.9, 0.1, 0.9, 0.95},  // c0_i0 == c1_i0: text wrong (a tie); image right
      {0.5, 0.6, 0.1, 0.9},   // text right (0.5 > 0.1, 0.9 > 0.6); image wrong (0.5 < 0.6)
  };
  const BenchmarkSummary r = b.evaluate(data, s, {.bootstrap_resamples = 200});
  ASSERT_EQ(r.metrics.size(), 3u);
  EXPECT_NEAR(r.metrics[0].percent, 200.0 / 3, 1e-9);  // text
  EXPECT_NEAR(r.metrics[1].percent, 200.0 / 3, 1e-9);  // image
  EXPECT_NEAR(r.metrics[2].percent, 100.0 / 3, 1e-9);  // group
  ASSERT_EQ(r.sections[0].rows.size(), 3u);
  EXPECT_EQ(r.sections[0].rows[1],
            (std::vector<std::string>{"eqbensd", "1", "0.00", "100.00", "0.00"}));
  dir.write("bad.json", "[" + pair("a.png", "b.png") + R"(, {"image0": "a.png"}])");
  EXPECT_NE(error_of([&] { load_eqben(dir.path() / "bad.json"); }).find("1.image1"),
            std::string::npos);
}

TEST(CompositionalEqBen, ReadsYouCook2NpyFramesAsRgb) {
  test::TempDir dir;
  std::string header = "{'descr': '|u1', 'fortran_order': False, 'shape': (1, 2, 3), }";
  while ((10 + header.size() + 1) % 64 != 0)
    header += ' ';
  header += '\n';
  std::string npy = std::string("\x93NUMPY\x01\x00", 8);
  npy += static_cast<char>(header.size() & 0xff);
  npy += static_cast<char>(header.size() >> 8);
  npy += header;
  npy += std::string("\x01\x02\x03\x0a\x14\x1e", 6);  // BGR (1, 2, 3), (10, 20, 30)
  const fs::path f = dir.write("f.npy", npy);
  const ImageBytes b = npy_bgr_image_request(f, "f.npy").read();
  const DecodedImage im = decode_image(b);
  EXPECT_EQ(im.width, 2);
  EXPECT_EQ(im.height, 1);
  EXPECT_EQ(im.pixels, (std::vector<std::uint8_t>{3, 2, 1, 30, 20, 10}));  // [:, :, [2, 1, 0]]
  const fs::path g = dir.write("g.npy", npy.replace(npy.find("(1, 2, 3)"), 9, "(1, 6, 1)"));
  EXPECT_NE(error_of([&] { npy_bgr_image_request(g, "g.npy").read(); }).find("height x width"),
            std::string::npos);
}

}  // namespace
}  // namespace winokit
