// CLIP configurations (winokit/model/clip_config.hpp): fields checked with messages that name
// the file, the field and what was expected.
#include <gtest/gtest.h>

#include <string>

#include "../test_util.hpp"
#include "model/families/clip/clip_config.hpp"
#include "winokit/core/error.hpp"

namespace winokit {
namespace {

std::string config_error(const test::TempDir& dir) {
  try {
    load_clip_config(dir.path());
  } catch (const InputError& e) {
    return e.what();
  }
  return "(accepted)";
}

// Issue 23, item 7: a 2-value image_mean said "unexpected type array".
TEST(ClipConfig, ImageMeanAndStdTakeThreeValues) {
  test::TempDir dir;
  dir.write("config.json", R"({"projection_dim": 8})");
  dir.write("preprocessor_config.json", R"({"image_mean": [0.5, 0.5]})");
  const std::string e = config_error(dir);
  EXPECT_NE(e.find("preprocessor_config.json: field 'image_mean': 3 values expected"),
            std::string::npos)
      << e;
  dir.write("preprocessor_config.json", R"({"image_std": [0.5, "x", 0.5]})");
  EXPECT_NE(config_error(dir).find("field 'image_std': 3 values expected"), std::string::npos)
      << config_error(dir);
  dir.write("preprocessor_config.json", R"({"image_mean": [0.25, 0.5, 0.75], "image_std": 0.5})");
  const ClipConfig c = load_clip_config(dir.path());
  EXPECT_EQ(c.preprocess.mean[2], 0.75f);
  EXPECT_EQ(c.preprocess.std[0], 0.5f);
  EXPECT_EQ(c.preprocess.std[2], 0.5f);
}

}  // namespace
}  // namespace winokit
