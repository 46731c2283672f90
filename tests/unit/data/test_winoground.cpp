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

TEST(Dataset, ParsesThePublishedLayout) {
  WinogroundDataset ds = parse_examples(
      kPublishedLine + "\n" +
          R"({"id": 1, "caption_0": "x y", "caption_1": "y x", "image_0": "a", "image_1": "b", "tag": "Negation, Scope", "secondary_tag": "Symbolic, Series", "num_main_preds": 2, "collapsed_tag": "Both"})",
      "examples.jsonl");
  ASSERT_EQ(ds.examples.size(), 2u);
  EXPECT_EQ(ds.examples[0].captions[1], "a young person kisses an old person");
  EXPECT_TRUE(ds.examples[0].secondary_tags.empty());
  EXPECT_EQ(ds.examples[1].tag, "Negation, Scope");  // one label despite the comma
  EXPECT_EQ(ds.examples[1].secondary_tags, (std::vector<std::string>{"Symbolic", "Series"}));
  EXPECT_EQ(*ds.examples[1].num_main_preds, 2);
  EXPECT_EQ(*ds.find("1"), 1u);
  EXPECT_TRUE(ds.numeric_ids);
}

TEST(Dataset, IdOrderIsNumeric) {
  WinogroundDataset ds = parse_examples(
      test::example_line(10) + test::example_line(9) + test::example_line(100), "e.jsonl");
  EXPECT_EQ(ds.id_order(), (std::vector<std::size_t>{1, 0, 2}));
}

struct BadCase {
  std::string text;
  std::string expect;  // substring of the message
};

TEST(Dataset, BadLinesNameFileLineAndField) {
  std::vector<BadCase> cases = {
      {test::example_line(0) + "{not json\n", "e.jsonl:2: malformed JSON"},
      {R"({"id": 0, "caption_1": "a", "image_0": "a", "image_1": "b"})",
       "field 'caption_0': missing"},
      {R"({"id": 0, "caption_0": 5, "caption_1": "a", "image_0": "a", "image_1": "b"})",
       "field 'caption_0': expected a string"},
      {R"({"id": [1], "caption_0": "a", "caption_1": "a", "image_0": "a", "image_1": "b"})",
       "field 'id'"},
      {test::example_line(3) + test::example_line(3), "e.jsonl:2: field 'id': duplicate id 3"},
      {R"({"id": 0, "caption_0": "a", "caption_1": "a", "image_0": "a", "image_1": "b", "num_main_preds": 0})",
       "field 'num_main_preds'"},
      {"[1, 2]\n", "expected a JSON object"},
      {"\n\n", "no examples"},
      {"{\"id\": 0, \"caption_0\": \"\xC3\", \"caption_1\": \"a\"}\n", "e.jsonl:1: invalid UTF-8"},
  };
  for (const auto& c : cases) {
    try {
      parse_examples(c.text, "e.jsonl");
      ADD_FAILURE() << "no error for: " << c.text;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(c.expect), std::string::npos)
          << e.what() << " (wanted " << c.expect << ")";
    }
  }
}

TEST(Dataset, AcceptsFolderParentWithDataOrFile) {
  test::TempDir dir;
  dir.write("clone/data/examples.jsonl", test::example_line(0));
  EXPECT_EQ(load_dataset(dir.path() / "clone").examples.size(), 1u);
  EXPECT_EQ(load_dataset(dir.path() / "clone" / "data").examples.size(), 1u);
  auto ds = load_dataset(dir.path() / "clone" / "data" / "examples.jsonl");
  EXPECT_EQ(ds.root, dir.path() / "clone" / "data");
  EXPECT_EQ(ds.examples_sha256.size(), 64u);
  EXPECT_THROW(load_dataset(dir.path() / "nothing"), IoError);
  EXPECT_THROW(load_dataset(dir.path()), IoError);
}

}  // namespace
}  // namespace winokit
