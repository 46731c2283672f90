// The CLIP model with seeded random weights.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "model/families/clip/clip_model.hpp"
#include "winokit/core/error.hpp"
#include "winokit/model/tokenizer.hpp"

namespace winokit {
namespace fs = std::filesystem;
namespace {

TEST(RandomModel, SeededAndDeterministic) {
  ClipConfig c = vit_b32_config();
  c.vision = {64, 1, 2, 128, 1e-5, Activation::QuickGelu};
  c.text = {32, 1, 2, 64, 1e-5, Activation::Gelu};
  c.embed_dim = 16;
  auto a = ClipModel::random(c, 3), b = ClipModel::random(c, 3), d = ClipModel::random(c, 4);
  auto tok = ClipTokenizer::byte_level();
  std::vector<std::vector<int>> ids = {tok.encode("a red cube")};
  EXPECT_EQ(a.encode_texts(ids).embeds, b.encode_texts(ids).embeds);
  EXPECT_NE(a.encode_texts(ids).embeds, d.encode_texts(ids).embeds);
  EXPECT_EQ(a.weights_id(), "random:3");
  EXPECT_THROW(a.encode_texts({{49406, 60000, 49407}}), UsageError);
  EXPECT_THROW(a.encode_texts({std::vector<int>(78, 1)}), UsageError);
}

}  // namespace
}  // namespace winokit
