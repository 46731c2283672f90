#include <gtest/gtest.h>
#include <zip.h>

#include "test_util.hpp"
#include "winokit/core/error.hpp"
#include "winokit/data/tag_set.hpp"
#include "winokit/data/winoground.hpp"
#include "winokit/io/image_store.hpp"
#include "winokit/io/png_writer.hpp"

namespace winokit {
namespace {

const std::string kPublishedLine =
    R"({"id": 0, "caption_0": "an old person kisses a young person", "caption_1": "a young person kisses an old person", "image_0": "ex_0_img_0", "image_1": "ex_0_img_1", "tag": "Adjective-Age", "secondary_tag": "", "num_main_preds": 1, "collapsed_tag": "Relation"})";

TEST(TagSet, PublishedFormatWithNoTagGroup) {
  test::TempDir dir;
  WinogroundDataset ds = test::dataset_of(4);
  auto file = dir.write(
      "hard.json",
      R"({"0": [], "3": ["Ambiguously Correct"], "1": ["Unusual Image", "Visually Difficult"]})");
  TagSet t = load_tag_set(file.string(), ds);
  EXPECT_EQ(t.name, "hard");
  ASSERT_TRUE(t.tags[0]);
  EXPECT_TRUE(t.tags[0]->empty());
  EXPECT_FALSE(t.tags[2]);
  EXPECT_EQ(t.tags[1]->size(), 2u);
  TagSet named = load_tag_set("why=" + file.string(), ds);
  EXPECT_EQ(named.name, "why");
}

TEST(TagSet, UnknownIdNamesFileAndLine) {
  test::TempDir dir;
  WinogroundDataset ds = test::dataset_of(2);
  auto file = dir.write("t.json", "{\n\"0\": [],\n\"77\": [\"X\"]\n}");
  try {
    load_tag_set(file.string(), ds);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.location().line, 3u);
    EXPECT_NE(std::string(e.what()).find("unknown example id '77'"), std::string::npos);
  }
  auto bad = dir.write("b.json", R"({"0": "Ambiguously Correct"})");
  EXPECT_THROW(load_tag_set(bad.string(), ds), InputError);
}

// The official 400-id file on a debug subset: the extra ids are ignored and counted; with an
// example of the dataset missing as well, the file is for another dataset and refused.
TEST(TagSet, FileForALargerSetIsReadOnASubset) {
  test::TempDir dir;
  WinogroundDataset ds = test::dataset_of(2);
  auto file = dir.write("all.json", R"({"0": [], "1": ["X"], "2": ["Y"], "3": [], "4": ["X"]})");
  TagSet t = load_tag_set(file.string(), ds);
  EXPECT_EQ(t.ignored_ids, 3u);
  EXPECT_TRUE(t.tags[0] && t.tags[0]->empty());
  EXPECT_EQ(*t.tags[1], std::vector<std::string>{"X"});
  auto other = dir.write("other.json", "{\n\"1\": [],\n\"5\": [\"X\"],\n\"6\": []\n}");
  try {
    load_tag_set(other.string(), ds);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.location().line, 3u);
    EXPECT_NE(std::string(e.what()).find("unknown example id '5' (2 ids not in the dataset, and 1 "
                                         "of its 2 examples not in the file)"),
              std::string::npos)
        << e.what();
  }
  // A file that covers fewer examples and nothing else keeps its meaning: the rest in no group.
  EXPECT_EQ(load_tag_set(dir.write("part.json", R"({"1": []})").string(), ds).ignored_ids, 0u);
}

}  // namespace
}  // namespace winokit
