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

}  // namespace
}  // namespace winokit
