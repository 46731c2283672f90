// ARO (VG-Relation, VG-Attribution): the loader of the official layout, the exact crop of each
// item's box, and the official metric (macro accuracy, ties wrong) on hand-computed cases.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "test_util.hpp"
#include "winokit/core/error.hpp"
#include "winokit/data/aro.hpp"
#include "winokit/data/aro_order.hpp"
#include "winokit/eval/benchmark.hpp"
#include "winokit/io/png_writer.hpp"

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

std::string vg_item(
    const std::string& image, const std::string& group_field,
    const std::string& box = R"("bbox_x": 0, "bbox_y": 0, "bbox_w": 2, "bbox_h": 2)") {
  return R"({"image_path": ")" + image + R"(", )" + box + ", " + group_field +
         R"(, "true_caption": "the horse is eating the grass", "false_caption": "the grass is eating the horse"})";
}

// A release folder: VG-R with relations "on" (3 items), "wearing" (1) and the symmetric "near"
// (2); VG-A with "white_black" (25 items) and "red_blue" (2).
void write_release(const test::TempDir& dir) {
  std::string r = "[";
  const char* rel[] = {"on", "on", "on", "wearing", "near", "near"};
  for (int i = 0; i < 6; ++i)
    r += std::string(i ? ", " : "") +
         vg_item("1.jpg", std::string(R"("relation_name": ")") + rel[i] + "\"");
  dir.write("visual_genome_relation.json", r + "]");
  std::string a = "[";
  for (int i = 0; i < 27; ++i)
    a +=
        std::string(i ? ", " : "") + vg_item("2.jpg", i < 25 ? R"("attributes": ["white", "black"])"
                                                             : R"("attributes": ["red", "blue"])");
  dir.write("visual_genome_attribution.json", a + "]");
}

TEST(CompositionalAro, ReadsTheReleaseLayout) {
  test::TempDir dir;
  write_release(dir);
  const AroDataset d = load_aro(dir.path());
  ASSERT_EQ(d.items.size(), 33u);
  EXPECT_EQ(d.items[0].subset, "vg_relation");
  EXPECT_EQ(d.items[0].group, "on");
  EXPECT_EQ(d.items[0].image, dir.path() / "images" / "1.jpg");  // images/ as the official code
  EXPECT_EQ(d.items[0].bbox_w, 2);
  EXPECT_EQ(d.items[6].subset, "vg_attribution");
  EXPECT_EQ(d.items[6].group, "white_black");  // f"{attributes[0]}_{attributes[1]}"
  EXPECT_EQ(d.sha256.size(), 64u);
  EXPECT_EQ(load_aro(dir.path(), "elsewhere").items[0].image, fs::path("elsewhere") / "1.jpg");
  // A box of no width names the file, the item and the field.
  dir.write("bad/visual_genome_relation.json",
            "[" + vg_item("1.jpg", R"("relation_name": "on")") + ", " +
                vg_item("1.jpg", R"("relation_name": "on")",
                        R"("bbox_x": 0, "bbox_y": 0, "bbox_w": 0, "bbox_h": 2)") +
                "]");
  const std::string e =
      error_of([&] { load_aro(dir.path() / "bad" / "visual_genome_relation.json"); });
  EXPECT_NE(e.find("visual_genome_relation.json"), std::string::npos) << e;
  EXPECT_NE(e.find("1.bbox_w"), std::string::npos) << e;
  fs::remove(dir.path() / "visual_genome_attribution.json");
  EXPECT_NE(error_of([&] { load_aro(dir.path()); }).find("missing: visual_genome_attribution.json"),
            std::string::npos);
}

DecodedImage pattern(int w, int h) {
  DecodedImage im;
  im.width = w;
  im.height = h;
  im.mode = PixelMode::RGB;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      im.pixels.insert(im.pixels.end(),
                       {static_cast<std::uint8_t>(10 * y + x + 1),
                        static_cast<std::uint8_t>(100 + x), static_cast<std::uint8_t>(200 + y)});
  return im;
}

TEST(CompositionalAro, CropsAsPil) {
  const DecodedImage im = pattern(4, 3);
  // PIL: crop((-1, 0.5, 1, 2.5)) -> edges round(-1) = -1, round(0.5) = 0, round(1) = 1,
  // round(2.5) = 2 (half to even): 2 x 2, the column x = -1 black.
  const DecodedImage c = crop_image(im, {-1, 0.5, 2, 2});
  ASSERT_EQ(c.width, 2);
  ASSERT_EQ(c.height, 2);
  const std::vector<std::uint8_t> want = {0, 0, 0, 1, 100, 200, 0, 0, 0, 11, 100, 201};
  EXPECT_EQ(c.pixels, want);
  // Right beyond the image: black. Edges round(2.5) = 2, round(5.5) = 6, round(1.5) = 2,
  // round(2.7) = 3: 4 x 1, row y = 2, columns 2..5.
  const DecodedImage d = crop_image(im, {2.5, 1.5, 3, 1.2});
  ASSERT_EQ(d.width, 4);
  ASSERT_EQ(d.height, 1);
  const std::vector<std::uint8_t> want_d = {23, 102, 202, 24, 103, 202, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(d.pixels, want_d);
  EXPECT_NE(error_of([&] {
              crop_image(im, {1.5, 0, 0.9, 1});
            }).find("no area"),
            std::string::npos);  // round(1.5) = 2 = round(2.4)
  // Gray images are converted to RGB first.
  DecodedImage gray;
  gray.width = 1;
  gray.height = 1;
  gray.mode = PixelMode::L;
  gray.pixels = {77};
  EXPECT_EQ(crop_image(gray, {0, 0, 1, 1}).pixels, (std::vector<std::uint8_t>{77, 77, 77}));
  // The request hands the model the crop's exact pixels, named with the box.
  test::TempDir dir;
  const fs::path png = dir.write("p.png", encode_png_rgb8(im.pixels, 4, 3));
  const ImageRequest r = cropped_image_request(png, "p.png", {-1, 0.5, 2, 2});
  EXPECT_EQ(r.name, "p.png@-1,0.5,2,2");
  EXPECT_FALSE(r.file);  // the cache key comes from the crop's bytes, not the whole file
  const ImageBytes b = r.read();
  EXPECT_EQ(b.format, ImageFormat::Png);
  EXPECT_EQ(decode_image(b).pixels, want);
}

TEST(CompositionalAro, MacroAccuracyAsTheOfficialEvaluation) {
  test::TempDir dir;
  write_release(dir);
  const Benchmark& b = find_benchmark("aro");
  const BenchmarkData data = b.load({.data = dir.path(), .need_images = false});
  ASSERT_EQ(data.items.size(), 33u);
  EXPECT_EQ(data.items[0].texts[0], "the grass is eating the horse");  // [false, true]
  EXPECT_EQ(data.items[0].images[0].name, "1.jpg@0,0,2,2");
  std::vector<ItemScores> s;
  // VG-R: on: right, right, tie (wrong); wearing: wrong; near (symmetric, dropped): right, right.
  for (const ItemScores& row : std::vector<ItemScores>{
           {0.1, 0.9}, {0.2, 0.3}, {0.5, 0.5}, {0.9, 0.1}, {0.1, 0.9}, {0.1, 0.9}})
    s.push_back(row);
  // VG-A: white_black 20 of 25 right; red_blue (2 items, under 25: dropped) both wrong.
  for (int i = 0; i < 27; ++i)
    s.push_back(i < 20 ? ItemScores{0.0, 1.0} : ItemScores{1.0, 0.0});
  const BenchmarkSummary r = b.evaluate(data, s, {.bootstrap_resamples = 200});
  ASSERT_EQ(r.metrics.size(), 4u);
  EXPECT_EQ(r.metrics[0].name, "vg_relation macro accuracy");
  EXPECT_NEAR(r.metrics[0].percent, (200.0 / 3 + 0) / 2, 1e-9);  // mean of on, wearing
  EXPECT_EQ(r.metrics[0].n, 4u);
  EXPECT_NEAR(r.metrics[1].percent, 400.0 / 6, 1e-9);  // all 6 items, the tie wrong
  EXPECT_TRUE(r.metrics[1].low.has_value());
  EXPECT_NEAR(r.metrics[2].percent, 80.0, 1e-9);  // white_black alone
  EXPECT_EQ(r.metrics[2].n, 25u);
  EXPECT_NEAR(r.metrics[3].percent, 2000.0 / 27, 1e-9);
  EXPECT_EQ(r.details["subsets"]["vg_relation"]["ties"], 1);
  EXPECT_EQ(r.details["per_item"].size(), 33u);
  EXPECT_EQ(r.details["per_item"][2]["correct"], false);
  // A row of the wrong width is refused.
  s[0] = {1.0};
  EXPECT_NE(error_of([&] { b.evaluate(data, s, {}); }).find("needs 2 scores"), std::string::npos);
}

TEST(CompositionalAro, OrderPrecisionAtOneStrictAndOfficial) {
  test::TempDir dir;
  const std::string opts = R"(["a dog on a mat", "mat a on dog a", "a mat on a dog",
                                "on a dog a mat", "dog a mat on a"])";
  dir.write("coco_order.json", R"([{"image": "val2014/x.jpg", "caption_options": )" + opts +
                                   R"(}, {"image": "val2014/y.jpg", "caption_options": )" + opts +
                                   R"(}, {"image": "val2014/z.jpg", "caption_options": )" + opts +
                                   "}]");
  const AroOrderDataset d = load_aro_order(dir.path() / "coco_order.json");
  ASSERT_EQ(d.items.size(), 3u);
  EXPECT_EQ(d.subset, "coco_order");
  EXPECT_EQ(d.items[1].captions.size(), 5u);
  const Benchmark& b = find_benchmark("aro-order");
  const BenchmarkData data = b.load({.data = dir.path() / "coco_order.json", .need_images = false});
  EXPECT_EQ(data.items[0].images[0].name, "val2014/x.jpg");
  // right; a tie with a reordering (strict wrong, argmax == 0 right); a reordering above
  const std::vector<ItemScores> s = {
      {0.9, 0.1, 0.2, 0.3, 0.4}, {0.5, 0.5, 0.1, 0.1, 0.1}, {0.5, 0.1, 0.6, 0.1, 0.1}};
  const BenchmarkSummary r = b.evaluate(data, s, {.bootstrap_resamples = 200});
  ASSERT_EQ(r.metrics.size(), 2u);
  EXPECT_NEAR(r.metrics[0].percent, 100.0 / 3, 1e-9);
  EXPECT_NEAR(r.metrics[1].percent, 200.0 / 3, 1e-9);
  EXPECT_EQ(r.details["ties"], 1);
  dir.write("bad.json", R"([{"image": "x.jpg", "caption_options": ["only one"]}])");
  EXPECT_NE(error_of([&] { load_aro_order(dir.path() / "bad.json"); }).find("0.caption_options"),
            std::string::npos);
}

}  // namespace
}  // namespace winokit
