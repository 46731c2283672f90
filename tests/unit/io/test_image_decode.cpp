// Image decoding (PIL modes) and corrupt files.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "test_util.hpp"
#include "winokit/core/error.hpp"
#include "winokit/io/files.hpp"
#include "winokit/io/image_decode.hpp"
#include "winokit/io/png_writer.hpp"

namespace winokit {
namespace fs = std::filesystem;
namespace {

TEST(ImageDecode, PngRoundTripAndCorruptFilesNamed) {
  std::vector<std::uint8_t> rgb(7 * 5 * 3);
  for (std::size_t i = 0; i < rgb.size(); ++i)
    rgb[i] = static_cast<std::uint8_t>(i * 7);
  std::string png = encode_png_rgb8(rgb, 7, 5);
  auto im = decode_image(png, "ok.png");
  EXPECT_EQ(im.mode, PixelMode::RGB);
  EXPECT_EQ(im.width, 7);
  EXPECT_EQ(im.pixels, rgb);
  try {
    decode_image(png.substr(0, png.size() / 2), "images/ex_3_img_1.png");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("images/ex_3_img_1.png"), std::string::npos);
  }
  EXPECT_THROW(decode_image(std::string("hello"), "x.png"), InputError);
  EXPECT_THROW(decode_image(std::string("\xFF\xD8\xFF\xE0garbage", 11), "x.jpg"), InputError);
  EXPECT_THROW(decode_image(std::string(""), "empty.png"), InputError);
}

// Issue 23, item 5: headers that claim more pixels than their data holds were decoded into
// canvases of 0.8-1.8 GB (a JPEG's missing data silently filled in). Now refused before the
// canvas is allocated: exit 2 within a 256 MiB address-space allowance.
TEST(ImageDecode, HeadersThatLieAboutTheirSizeAreRefusedBeforeAllocating) {
  const fs::path dir = fs::path(WINOKIT_SOURCE_DIR) / "tests/fuzz/regressions/image";
  for (const char* name :
       {"jpeg-header-claims-16000x16000.jpg", "png-header-claims-16384x16384.png",
        "webp-header-claims-16383x16383.webp"}) {
    const std::string bytes = read_file(dir / name);
    try {
      decode_image(bytes, name);
      ADD_FAILURE() << name << " accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("cannot hold"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    }
    EXPECT_EQ(test::exit_code_with_memory_limit(256u << 20, [&] { decode_image(bytes, name); }), 2)
        << name;
  }
}

// A JPEG whose scan ends early at an EOI marker was accepted with the rest filled in.
TEST(ImageDecode, AJpegCutShortIsAnError) {
  const fs::path dir = fs::path(WINOKIT_SOURCE_DIR) / "tests/fuzz/regressions/image";
  try {
    decode_image(read_file(dir / "jpeg-eoi-after-8-bytes-of-scan.jpg"), "cut.jpg");
    FAIL() << "a truncated JPEG was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cut.jpg: truncated JPEG"), std::string::npos) << e.what();
  }
  // The file it was cut from still decodes.
  const auto im = decode_image(
      read_file(fs::path(WINOKIT_SOURCE_DIR) / "tests/fuzz/corpus/image/rgb.jpg"), "rgb.jpg");
  EXPECT_GT(im.width, 0);
}

}  // namespace
}  // namespace winokit
