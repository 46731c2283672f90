// The loaders of the compositionality benchmarks' official layouts: SugarCrepe and What'sUp.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "test_util.hpp"
#include "winokit/core/error.hpp"
#include "winokit/data/sugarcrepe.hpp"
#include "winokit/data/whatsup.hpp"

namespace winokit {
namespace {

namespace fs = std::filesystem;

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(SugarCrepe, ReadsTheReleaseLayoutInSubsetOrderWithOlderNames) {
  test::TempDir dir;
  const std::string one =
      R"({"3": {"filename": "a.jpg", "caption": "x y", "negative_caption": "y x"},
          "1": {"filename": "b.jpg", "caption": "p", "negative_caption": "q"}})";
  for (const char* s :
       {"add_ent", "add_att", "replace_obj", "replace_att", "replace_rel", "swap_obj", "swap_att"})
    write(dir.path() / (std::string(s) + ".json"), one);
  const SugarCrepeDataset d = load_sugarcrepe(dir.path());
  ASSERT_EQ(d.items.size(), 14u);
  EXPECT_EQ(d.items[0].subset, "add_obj");  // read from add_ent.json
  EXPECT_EQ(d.items[0].key, "3");           // the file's key order is kept
  EXPECT_EQ(d.items[1].key, "1");
  EXPECT_EQ(d.items[13].subset, "swap_att");
  EXPECT_EQ(d.items[13].negative_caption, "q");
  EXPECT_EQ(sugarcrepe_category("replace_rel"), "Replace");
  EXPECT_EQ(d.files.size(), 7u);
  EXPECT_EQ(d.sha256.size(), 64u);
  // A missing subset is named; one subset's file alone is read.
  fs::remove(dir.path() / "swap_obj.json");
  EXPECT_NE(error_of([&] { load_sugarcrepe(dir.path()); }).find("missing: swap_obj.json"),
            std::string::npos);
  EXPECT_EQ(load_sugarcrepe(dir.path() / "swap_att.json").items.size(), 2u);
  // Malformed content names the file, the key and the field.
  write(dir.path() / "one" / "add_att.json", R"({"7": {"filename": "a.jpg", "caption": ""}})");
  const std::string e = error_of([&] { load_sugarcrepe(dir.path() / "one" / "add_att.json"); });
  EXPECT_NE(e.find("add_att.json"), std::string::npos) << e;
  EXPECT_NE(e.find("7.caption"), std::string::npos) << e;
  write(dir.path() / "one" / "other.json", "{}");
  EXPECT_NE(error_of([&] {
              load_sugarcrepe(dir.path() / "one" / "other.json");
            }).find("not a SugarCrepe subset file"),
            std::string::npos);
}

TEST(WhatsUp, ReadsTheReleaseLayoutAsTheOfficialLoaders) {
  test::TempDir dir;
  const fs::path d = dir.path();
  write(d / "controlled_images_dataset.json",
        R"([{"image_path": "data/controlled_images/dog_left_of_table.jpeg",
             "caption_options": ["a", "b", "c", "d"]},
            {"image_path": "data/controlled_images/dog_on_table.jpeg",
             "caption_options": ["a", "b", "c", "d"]}])");
  write(d / "controlled_clevr_dataset.json",
        R"([{"image_path": "data/controlled_clevr/cube_in-front_of_ball.jpeg",
             "caption_options": ["a", "b", "c", "d"]}])");
  write(d / "coco_qa_one_obj.json", R"([[397133, "A dog on the  left ", "A dog on the right"]])");
  write(d / "coco_qa_two_obj.json", R"([[9, "A dog above a cat", "A dog below a cat"]])");
  write(d / "vg_qa_one_obj.json", R"([[2345, "A cup on the top", "A cup on the bottom"]])");
  write(d / "vg_qa_two_obj.json", R"([[7, "A cup on a plate", "A cup under a plate"]])");
  const WhatsUpDataset w = load_whatsup(d);
  ASSERT_EQ(w.items.size(), 7u);
  EXPECT_EQ(w.items[0].preposition, "left_of");
  EXPECT_EQ(w.items[0].pair_key, "dog|table");
  EXPECT_EQ(w.items[0].slot, "left");
  EXPECT_EQ(w.items[0].image, d / "controlled_images" / "dog_left_of_table.jpeg");
  EXPECT_EQ(w.items[1].preposition, "on");
  EXPECT_EQ(w.items[2].preposition, "in-front_of");
  EXPECT_EQ(w.items[2].slot, "in-front");
  EXPECT_EQ(w.items[3].image, d / "val2017" / "000000397133.jpg");
  EXPECT_EQ(w.items[3].preposition, "left");  // d[1].split()[-1]
  EXPECT_EQ(w.items[4].preposition, "above");
  EXPECT_EQ(w.items[5].image, d / "vg_images" / "2345.jpg");
  EXPECT_EQ(w.items[6].preposition, "top");  // neither left/right/front/behind: 'top'
  // Malformed items name the file and the item.
  write(d / "one" / "coco_qa_two_obj.json", R"([[1, "a", "b"], [2, "only one"]])");
  const std::string e = error_of([&] { load_whatsup(d / "one" / "coco_qa_two_obj.json"); });
  EXPECT_NE(e.find("coco_qa_two_obj.json"), std::string::npos) << e;
  EXPECT_NE(e.find("'1'"), std::string::npos) << e;
  fs::remove(d / "vg_qa_two_obj.json");
  EXPECT_NE(error_of([&] { load_whatsup(d); }).find("missing: vg_qa_two_obj.json"),
            std::string::npos);
}

}  // namespace
}  // namespace winokit
