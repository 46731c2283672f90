// ResNet CLIP and OpenAI TorchScript archives against openai/CLIP's own code: the fixtures in
// tests/fixtures/resnet come from tests/fixtures/make_resnet_golden.py (seeded random tiny
// models, every weight and every BatchNorm statistic perturbed, input 96 for the ResNet).
#include <gtest/gtest.h>

#include <cmath>

#include "model/families/clip/clip_model.hpp"
#include "winokit/core/error.hpp"
#include "winokit/io/safetensors.hpp"

namespace winokit {
namespace {

const std::string kFixtures = std::string(WINOKIT_SOURCE_DIR) + "/tests/fixtures/resnet/";
// What a correct float32 implementation meets (the bound; folding BatchNorm and
// oneDNN's summation order move the last bits only).
constexpr double kRelativeTolerance = 1e-5;

double relative_error(const std::vector<float>& got, const std::vector<float>& want) {
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    diff = std::max(diff, static_cast<double>(std::fabs(got[i] - want[i])));
    scale = std::max(scale, static_cast<double>(std::fabs(want[i])));
  }
  return diff / scale;
}

struct Expected {
  std::vector<float> pixels, image_embeds, text_embeds;
  std::vector<std::vector<int>> ids;
  int images = 0;
  float logit_scale = 0;
};

Expected expected(const std::string& name) {
  auto t = read_safetensors_f32(kFixtures + name + "-expected.safetensors");
  Expected e;
  e.pixels = t.at("pixels").second;
  e.images = static_cast<int>(t.at("pixels").first[0]);
  e.image_embeds = t.at("image_embeds").second;
  e.text_embeds = t.at("text_embeds").second;
  e.logit_scale = t.at("logit_scale").second.at(0);
  const auto& shape = t.at("input_ids").first;
  const auto& ids = t.at("input_ids").second;
  for (std::int64_t r = 0; r < shape[0]; ++r) {
    std::vector<int> row;
    for (std::int64_t c = 0; c < shape[1]; ++c) {
      const int id = static_cast<int>(ids[static_cast<std::size_t>(r * shape[1] + c)]);
      row.push_back(id);
      if (c > 0 && id == 513) break;  // end of text: the rest is padding
    }
    e.ids.push_back(row);
  }
  return e;
}

void expect_matches(const ClipModel& model, const Expected& e) {
  const auto img = model.encode_images(e.pixels.data(), e.images);
  ASSERT_EQ(img.embeds.size(), e.image_embeds.size());
  const double image_error = relative_error(img.embeds, e.image_embeds);
  EXPECT_LT(image_error, kRelativeTolerance);
  EXPECT_GT(image_error, 0.0) << "bit-identical to PyTorch is unlikely: is the test comparing "
                                 "the expected values with themselves?";
  const auto txt = model.encode_texts(e.ids);
  ASSERT_EQ(txt.embeds.size(), e.text_embeds.size());
  EXPECT_LT(relative_error(txt.embeds, e.text_embeds), kRelativeTolerance);
  EXPECT_FLOAT_EQ(std::log(model.logit_scale_exp()), e.logit_scale);
}

TEST(GoldenResNet, OpenClipFolderMatchesOpenAiCode) {
  const auto model = ClipModel::load(kFixtures + "tiny-rn-openclip");
  const auto& c = model.config();
  EXPECT_EQ(c.vision_arch, VisionArch::ResNet);
  EXPECT_EQ(c.image_size, 96);
  EXPECT_EQ(c.resnet_layers, (std::array<int, 4>{2, 1, 1, 1}));
  EXPECT_EQ(c.vision.heads, 4);
  expect_matches(model, expected("tiny-rn"));
}

TEST(GoldenResNet, TorchScriptArchiveMatchesOpenAiCode) {
  const auto model = ClipModel::load(kFixtures + "tiny-rn.pt");
  const auto& c = model.config();
  // Inferred from the tensors as openai/CLIP's build_model does.
  EXPECT_EQ(c.vision_arch, VisionArch::ResNet);
  EXPECT_EQ(c.image_size, 96);
  EXPECT_EQ(c.resnet_layers, (std::array<int, 4>{2, 1, 1, 1}));
  EXPECT_EQ(c.vision.width, 8);
  EXPECT_EQ(c.vision.heads, 4);
  EXPECT_EQ(c.embed_dim, 48);
  EXPECT_EQ(c.text.width, 64);
  EXPECT_EQ(c.text.layers, 2);
  EXPECT_EQ(c.vocab_size, 514);
  expect_matches(model, expected("tiny-rn"));
}

TEST(GoldenResNet, FolderAndArchiveGiveIdenticalEmbeddings) {
  const auto folder = ClipModel::load(kFixtures + "tiny-rn-openclip");
  const auto archive = ClipModel::load(kFixtures + "tiny-rn.pt");
  const auto e = expected("tiny-rn");
  EXPECT_EQ(folder.encode_images(e.pixels.data(), e.images).embeds,
            archive.encode_images(e.pixels.data(), e.images).embeds);
  EXPECT_EQ(folder.encode_texts(e.ids).embeds, archive.encode_texts(e.ids).embeds);
}

TEST(GoldenResNet, EmbeddingsDoNotDependOnTheBatch) {
  const auto model = ClipModel::load(kFixtures + "tiny-rn.pt");
  const auto e = expected("tiny-rn");
  const auto all = model.encode_images(e.pixels.data(), e.images).embeds;
  const std::size_t image = e.pixels.size() / static_cast<std::size_t>(e.images);
  const int dim = model.config().embed_dim;
  for (int i = 0; i < e.images; ++i) {
    const auto one =
        model.encode_images(e.pixels.data() + static_cast<std::size_t>(i) * image, 1).embeds;
    EXPECT_TRUE(std::equal(one.begin(), one.end(), all.begin() + i * dim)) << i;
  }
}

TEST(GoldenResNet, NoLayerStatesForResNet) {
  const auto model = ClipModel::load(kFixtures + "tiny-rn.pt");
  const auto e = expected("tiny-rn");
  EncodeOptions o;
  o.token_states = true;
  EXPECT_THROW(model.encode_images(e.pixels.data(), 1, o), UsageError);
}

TEST(GoldenTorchScript, VitArchiveMatchesOpenAiCode) {
  const auto model = ClipModel::load(kFixtures + "tiny-vit.pt");
  const auto& c = model.config();
  EXPECT_EQ(c.vision_arch, VisionArch::Vit);
  EXPECT_EQ(c.image_size, 64);
  EXPECT_EQ(c.patch, 16);
  EXPECT_EQ(c.vision.layers, 2);
  EXPECT_EQ(c.vision.width, 64);
  expect_matches(model, expected("tiny-vit"));
}

TEST(GoldenTorchScript, HostileArchiveIsRefusedByName) {
  try {
    ClipModel::load(kFixtures + "hostile.pt");
    FAIL() << "a pickle calling os.system was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("os.system"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace winokit
