// CLIP preprocessing on decoded images.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "model/families/clip/clip_config.hpp"
#include "winokit/io/image_decode.hpp"
#include "winokit/io/png_writer.hpp"
#include "winokit/model/preprocess.hpp"

namespace winokit {
namespace fs = std::filesystem;
namespace {

TEST(ImageDecode, ResizeIsIdentityAtTheSameSizeAndPreprocessShape) {
  std::vector<std::uint8_t> rgb(300 * 200 * 3, 128);
  auto im = decode_image(encode_png_rgb8(rgb, 300, 200), "flat.png");
  auto same = pil_resize(im, 300, 200);
  EXPECT_EQ(same.pixels, im.pixels);
  // A flat image stays flat through bicubic resampling.
  auto small = pil_resize(im, 100, 67);
  for (auto v : small.pixels)
    ASSERT_EQ(v, 128);
  PreprocessConfig cfg;
  auto chw = preprocess(im, cfg);
  EXPECT_EQ(chw.size(), 3u * 224 * 224);
  EXPECT_NEAR(chw[0], (128.0 / 255.0 - cfg.mean[0]) / cfg.std[0], 1e-6);
}

}  // namespace
}  // namespace winokit
