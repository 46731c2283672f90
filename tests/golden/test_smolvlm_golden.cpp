// SmolVLM / Idefics3 VQAScore against a standalone PyTorch transcription
// (tests/fixtures/make_smolvlm_golden.py): the processor's tiles bit for bit (PIL LANCZOS), the
// prompt's ids exactly, P(Yes) within tolerance, with and without image splitting, two image
// sizes; the image prefix's KV cache reused across captions and batches bit for bit.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "model/families/smolvlm/smolvlm_model.hpp"
#include "winokit/core/error.hpp"
#include "winokit/io/files.hpp"
#include "winokit/io/image_decode.hpp"
#include "winokit/io/safetensors.hpp"
#include "winokit/model/compute.hpp"
#include "winokit/model/vl_model.hpp"

#include "vlm_test_support.hpp"

namespace winokit {
namespace {

const std::string kDir = std::string(WINOKIT_SOURCE_DIR) + "/tests/golden/smolvlm_tiny/";
// float32 engine against a float64 reference: P(Yes) to 1e-5 absolute, and to 1e-4 relative (the
// fixture's probabilities range from 1e-6 to 0.06, where an absolute bound alone says little).
constexpr double kAbsoluteTolerance = 1e-5;
constexpr double kRelativeTolerance = 1e-4;

nlohmann::json expected() {
  return nlohmann::json::parse(read_file(kDir + "expected.json"));
}

DecodedImage image(const std::string& name) {
  return decode_image(image_file_request(kDir + "images/" + name).read());
}

TEST(SmolVlmGolden, TilesAreThePytorchProcessorsBitForBit) {
  const SmolVlmConfig cfg = load_smolvlm_config(kDir + "model");
  const auto px = read_safetensors_f32(kDir + "pixels.safetensors");
  for (const auto& c : expected()["cases"]) {
    SmolVlmPreprocessConfig p = cfg.preprocess;
    p.do_image_splitting = c["split"].get<bool>();
    const SmolVlmTiles t = smolvlm_preprocess(image(c["image"]), p);
    const std::string key = c["image"].get<std::string>().substr(0, 4) == "wide" ? "wide" : "tall";
    const auto& want = px.at(key + (p.do_image_splitting ? ".split" : ".nosplit"));
    EXPECT_EQ(t.rows, c["rows"].get<int>());
    EXPECT_EQ(t.cols, c["cols"].get<int>());
    EXPECT_EQ(t.count, c["tiles"].get<int>());
    ASSERT_EQ(t.pixels.size(), want.second.size()) << key;
    EXPECT_EQ(0, std::memcmp(t.pixels.data(), want.second.data(), t.pixels.size() * sizeof(float)))
        << key << " split=" << p.do_image_splitting;
  }
}

TEST(SmolVlmGolden, PromptIdsAndYesProbabilitiesMatchTheReference) {
  const nlohmann::json e = expected();
  const std::vector<std::string> captions = e["captions"];
  double worst_abs = 0, worst_rel = 0;
  int ids_checked = 0;
  for (int split : {1, 0}) {
    VqaScoreOptions o;
    o.image_splitting = split;
    const SmolVlmModel m = SmolVlmModel::load(kDir + "model", o);
    EXPECT_EQ(m.answer_id(), e["answer_id"].get<int>());
    for (const auto& c : e["cases"]) {
      if (c["split"].get<bool>() != (split == 1)) continue;
      const SmolVlmTiles t = smolvlm_preprocess(image(c["image"]), m.config().preprocess);
      EXPECT_EQ(m.prefix_ids(t), c["prefix_ids"].get<std::vector<int>>());
      for (std::size_t i = 0; i < captions.size(); ++i) {
        EXPECT_EQ(m.question_ids(captions[i]), c["question_ids"][i].get<std::vector<int>>());
        ++ids_checked;
      }
      const KvCache cache = m.image_prefix(t);
      const std::vector<double> p = m.answer_probabilities(cache, captions);
      for (std::size_t i = 0; i < captions.size(); ++i) {
        const double want = c["p_yes"][i].get<double>();
        worst_abs = std::max(worst_abs, std::abs(p[i] - want));
        worst_rel = std::max(worst_rel, std::abs(p[i] / want - 1));
        EXPECT_NEAR(p[i], want, kAbsoluteTolerance) << c["image"] << " " << captions[i];
        EXPECT_NEAR(p[i] / want, 1.0, kRelativeTolerance) << c["image"] << " " << captions[i];
      }
    }
  }
  EXPECT_EQ(ids_checked, 12);
  std::printf("[ smolvlm ] max |P(Yes) - reference| = %.3g, max relative %.3g\n", worst_abs,
              worst_rel);
}

TEST(SmolVlmGolden, CachedPrefixBatchesAndThreadsDoNotChangeABit) {
  const SmolVlmModel m = SmolVlmModel::load(kDir + "model");
  test_support::expect_cached_prefix_is_exact(
      m, smolvlm_preprocess(image("wide.png"), m.config().preprocess), expected()["captions"]);
}

// The phases timed apart (bench_smolvlm, engine_bench): the prefix from features computed
// beforehand is the prefix of the image, bit for bit.
TEST(SmolVlmGolden, PrefixFromPrecomputedFeaturesIsTheSameCache) {
  const SmolVlmModel m = SmolVlmModel::load(kDir + "model");
  const SmolVlmTiles t = smolvlm_preprocess(image("tall.png"), m.config().preprocess);
  const KvCache whole = m.image_prefix(image("tall.png"));
  const KvCache parts = m.image_prefix(t, m.image_features(t));
  ASSERT_EQ(whole.length, parts.length);
  ASSERT_EQ(whole.k.size(), parts.k.size());
  for (std::size_t l = 0; l < whole.k.size(); ++l) {
    EXPECT_EQ(whole.k[l], parts.k[l]) << "layer " << l;
    EXPECT_EQ(whole.v[l], parts.v[l]) << "layer " << l;
  }
  std::vector<float> short_features = m.image_features(t);
  short_features.pop_back();
  EXPECT_THROW(m.image_prefix(t, short_features), UsageError);
}

TEST(SmolVlmGolden, TheRegistryOpensItAsAPairScorer) {
  ModelOptions o;
  o.use_cache = false;
  o.batch_size = 2;
  const std::unique_ptr<VlModel> m = open_model(kDir + "model", o);
  EXPECT_EQ(m->family(), "smolvlm");
  EXPECT_EQ(m->score_name(), "P(Yes)");
  const nlohmann::json e = expected();
  const std::vector<std::string> captions = e["captions"];
  const std::vector<ImageRequest> images = {image_file_request(kDir + "images/wide.png"),
                                            image_file_request(kDir + "images/tall.png")};
  const std::vector<PairIndex> pairs = {{0, 1}, {2, 0}, {1, 1}, {0, 0}, {2, 1}};
  const std::vector<double> s = m->score_pairs(images, captions, pairs);
  auto want = [&](const std::string& img, std::size_t c) {
    for (const auto& k : e["cases"])
      if (k["image"] == img && k["split"].get<bool>()) return k["p_yes"][c].get<double>();
    return -1.0;
  };
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    const double w = want(pairs[k].second == 0 ? "wide.png" : "tall.png", pairs[k].first);
    EXPECT_NEAR(s[k] / w, 1.0, kRelativeTolerance) << k;
  }
  // The prepared images give the same bits.
  const auto prepared = m->prepare_images(images);
  const std::vector<double> again = prepared->score(captions, pairs);
  EXPECT_EQ(0, std::memcmp(again.data(), s.data(), s.size() * sizeof(double)));
  ModelOptions bad;
  bad.preprocess = "tiles";
  EXPECT_THROW(open_model(kDir + "model", bad), UsageError);
  o.preprocess = "no-split";
  const std::unique_ptr<VlModel> unsplit = open_model(kDir + "model", o);
  const std::vector<double> u = unsplit->score_pairs(images, captions, {{2, 0}});
  EXPECT_NEAR(u[0] / e["cases"][1]["p_yes"][2].get<double>(), 1.0, kRelativeTolerance);
}

// A copy of the fixture with one file changed: errors name the file, the field or the tensor.
struct BrokenCopy : test_support::CheckpointCopy {
  BrokenCopy() : CheckpointCopy(kDir + "model") {}
  std::string error() const {
    return test_support::input_error([&] { SmolVlmModel::load(dir()); });
  }
};

TEST(SmolVlmGolden, BrokenCheckpointsAreRefusedNamingWhat) {
  {
    BrokenCopy b;
    b.edit_json("config.json", [](nlohmann::json& j) { j["image_token_id"] = 3; });
    EXPECT_NE(b.error().find("image_token_id"), std::string::npos) << b.error();
  }
  {
    BrokenCopy b;
    b.edit_json("preprocessor_config.json", [](nlohmann::json& j) { j["resample"] = 3; });
    EXPECT_NE(b.error().find("resample"), std::string::npos) << b.error();
  }
  {
    BrokenCopy b;
    b.edit_json("processor_config.json", [](nlohmann::json& j) { j["image_seq_len"] = 64; });
    EXPECT_NE(b.error().find("image_seq_len"), std::string::npos) << b.error();
  }
  {
    BrokenCopy b;
    b.edit_json("preprocessor_config.json", [](nlohmann::json& j) { j["do_resize"] = "yes"; });
    EXPECT_NE(b.error(), "");
  }
  {
    BrokenCopy b;
    b.edit_json("chat_template.json", [](nlohmann::json& j) {
      j["chat_template"] = "{% for m in messages %}{{ m['content'] }}{% endfor %}";
    });
    EXPECT_NE(b.error().find("chat_template"), std::string::npos) << b.error();
  }
  {
    BrokenCopy b;
    auto tensors = read_safetensors_f32(b.dir() / "model.safetensors");
    tensors.erase("model.connector.modality_projection.proj.weight");
    b.write("model.safetensors", encode_safetensors_f32(tensors));
    EXPECT_NE(b.error().find("model.connector.modality_projection.proj.weight"), std::string::npos)
        << b.error();
  }
}

}  // namespace
}  // namespace winokit
