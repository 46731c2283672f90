// Image decoding (PIL modes) and corrupt files.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "test_util.hpp"
#include "winokit/core/error.hpp"
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

}  // namespace
}  // namespace winokit
