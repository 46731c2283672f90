#include <gtest/gtest.h>
#include <zip.h>

#include "test_util.hpp"
#include "winokit/error.hpp"
#include "winokit/image_store.hpp"
#include "winokit/png_writer.hpp"
#include "winokit/tag_set.hpp"
#include "winokit/winoground.hpp"

namespace winokit {
namespace {

const std::string kPublishedLine =
    R"({"id": 0, "caption_0": "an old person kisses a young person", "caption_1": "a young person kisses an old person", "image_0": "ex_0_img_0", "image_1": "ex_0_img_1", "tag": "Adjective-Age", "secondary_tag": "", "num_main_preds": 1, "collapsed_tag": "Relation"})";

TEST(Dataset, ParsesThePublishedLayout) {
  Dataset ds = parse_examples(
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
  Dataset ds = parse_examples(
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

std::string tiny_png() {
  return encode_png_rgb8(std::vector<std::uint8_t>(4 * 4 * 3, 9), 4, 4);
}

TEST(ImageStore, ResolvesExtensionsAndSniffsContent) {
  test::TempDir dir;
  const std::string jpeg_bytes = std::string("\xFF\xD8\xFF\xE0", 4) + "rest";
  dir.write("images/ex_0_img_0.png", jpeg_bytes);  // JPEG bytes named .png
  dir.write("images/ex_0_img_1.jpeg", tiny_png());
  auto store = ImageStore::open(dir.path());
  auto a = store.read("ex_0_img_0");
  EXPECT_EQ(a.format, ImageFormat::Jpeg);
  EXPECT_EQ(a.bytes, jpeg_bytes);
  EXPECT_EQ(store.read("ex_0_img_1").format, ImageFormat::Png);
  try {
    store.read("ex_9_img_0");
    FAIL();
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("image 'ex_9_img_0': not found"), std::string::npos);
  }
}

TEST(ImageStore, ReadsImagesZipDirectly) {
  test::TempDir dir;
  const std::string png = tiny_png();
  auto zip_path = dir.path() / "images.zip";
  int err = 0;
  zip_t* z = zip_open(zip_path.c_str(), ZIP_CREATE, &err);
  ASSERT_NE(z, nullptr);
  zip_source_t* src = zip_source_buffer(z, png.data(), png.size(), 0);
  ASSERT_GE(zip_file_add(z, "images/ex_3_img_1.png", src, 0), 0);
  ASSERT_EQ(zip_close(z), 0);
  auto store = ImageStore::open(dir.path());
  auto img = store.read("ex_3_img_1");
  EXPECT_EQ(img.bytes, png);
  EXPECT_EQ(img.format, ImageFormat::Png);
  EXPECT_NE(img.source.find("images.zip:images/ex_3_img_1.png"), std::string::npos);
  EXPECT_THROW(store.read("ex_4_img_0"), IoError);
}

TEST(ImageStore, NoImagesOnlyFailsWhenAnImageIsRequested) {
  test::TempDir dir;
  auto store = ImageStore::open(dir.path());
  EXPECT_THROW(store.read("x"), IoError);
}

TEST(TagSet, PublishedFormatWithNoTagGroup) {
  test::TempDir dir;
  Dataset ds = test::dataset_of(4);
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
  Dataset ds = test::dataset_of(2);
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

}  // namespace
}  // namespace winokit
