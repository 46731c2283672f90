// LLaVA-OneVision VQAScore against a standalone PyTorch transcription
// (tests/fixtures/make_llava_onevision_golden.py): the processor's tiles bit for bit (PIL
// BICUBIC, anyres pinpoints, zero padding), the packed image features (unpad, the anyres_max_9
// bilinear downscale, image_newline), the prompt's ids exactly, the last logits and P(Yes)
// within tolerance, on four images: a wide RGBA one (a 2 x 4 pinpoint), one downscaled (3 x 4),
// a tall grayscale one (3 x 1) and one smaller than a tile; both checkpoint layouts; the image
// prefix's KV cache reused across captions, batches and threads bit for bit.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "model/families/llava_onevision/llava_onevision_model.hpp"
#include "winokit/core/error.hpp"
#include "winokit/io/files.hpp"
#include "winokit/io/image_decode.hpp"
#include "winokit/io/safetensors.hpp"
#include "winokit/model/compute.hpp"
#include "winokit/model/vl_model.hpp"

#include "vlm_test_support.hpp"

namespace winokit {
namespace {

const std::string kDir = std::string(WINOKIT_SOURCE_DIR) + "/tests/fixtures/llava_onevision/";
// float32 engine against a float64 reference: P(Yes) to 1e-5 and the logits to 1e-4 absolute
// (the fixture's logits are of order 1 to 10 and P(Yes) spans 0.26 to 0.66); the packed
// features to 3e-5 relative to max(1, |x|) (they reach |10|; 9e-6 seen).
constexpr double kProbabilityTolerance = 1e-5;
constexpr double kLogitTolerance = 1e-4;
constexpr double kFeatureTolerance = 3e-5;

nlohmann::json expected() {
  return nlohmann::json::parse(read_file(kDir + "expected.json"));
}

DecodedImage image(const std::string& name) {
  return decode_image(image_file_request(kDir + "images/" + name).read());
}

std::string stem(const std::string& file) {
  return file.substr(0, file.find('.'));
}

TEST(LlavaOnevisionGolden, TilesAreThePytorchProcessorsBitForBit) {
  const LlavaOnevisionConfig cfg = load_llava_onevision_config(kDir + "model");
  const auto out = read_safetensors_f32(kDir + "outputs.safetensors");
  int cases = 0;
  const nlohmann::json e = expected();
  for (const auto& c : e["cases"]) {
    const LlavaOnevisionTiles t = llava_onevision_preprocess(image(c["image"]), cfg.preprocess);
    EXPECT_EQ(t.height, c["height"].get<int>());
    EXPECT_EQ(t.width, c["width"].get<int>());
    EXPECT_EQ(t.grid_h, c["pinpoint"][0].get<int>());
    EXPECT_EQ(t.grid_w, c["pinpoint"][1].get<int>());
    EXPECT_EQ(t.count, c["tiles"].get<int>());
    const auto& want = out.at(stem(c["image"]) + ".pixels").second;
    ASSERT_EQ(t.pixels.size(), want.size()) << c["image"];
    EXPECT_EQ(0, std::memcmp(t.pixels.data(), want.data(), want.size() * sizeof(float)))
        << c["image"];
    const LlavaFeatureLayout L = llava_onevision_layout(cfg, t.height, t.width);
    EXPECT_EQ(L.tokens(), c["image_tokens"].get<int>()) << c["image"];
    EXPECT_EQ(L.downscaled, c["downscaled"].get<bool>()) << c["image"];
    EXPECT_EQ(llava_onevision_processor_tokens(cfg, t.height, t.width), L.tokens());
    ++cases;
  }
  EXPECT_EQ(cases, 4);
}

// Both layouts transformers writes: the hub's (vision_tower.*, language_model.model.*) and
// transformers >= 4.52's (model.vision_tower.*, model.language_model.*, lm_head.weight).
struct NewLayoutCopy : test_support::CheckpointCopy {
  NewLayoutCopy() : CheckpointCopy(kDir + "model") {
    std::filesystem::copy_file(kDir + "model_new_layout.safetensors", dir() / "model.safetensors",
                               std::filesystem::copy_options::overwrite_existing);
  }
};

TEST(LlavaOnevisionGolden, FeaturesIdsLogitsAndYesProbabilitiesMatchTheReference) {
  const nlohmann::json e = expected();
  const std::vector<std::string> captions = e["captions"];
  const auto out = read_safetensors_f32(kDir + "outputs.safetensors");
  const NewLayoutCopy newer;
  double worst_p = 0, worst_logit = 0, worst_feature = 0;
  int checked = 0;
  std::vector<double> first_layout;
  for (const std::filesystem::path& dir : {std::filesystem::path(kDir + "model"), newer.dir()}) {
    const LlavaOnevisionModel m = LlavaOnevisionModel::load(dir);
    EXPECT_EQ(m.answer_id(), e["answer_id"].get<int>());
    std::vector<double> all;
    for (const auto& c : e["cases"]) {
      const std::string name = stem(c["image"]);
      const LlavaOnevisionTiles t =
          llava_onevision_preprocess(image(c["image"]), m.config().preprocess);
      const std::vector<float> f = m.image_features(t);
      const auto& want_f = out.at(name + ".features").second;
      ASSERT_EQ(f.size(), want_f.size()) << name;
      for (std::size_t i = 0; i < f.size(); ++i) {
        const double d = std::abs(static_cast<double>(f[i]) - want_f[i]) /
                         std::max(1.0, std::abs(static_cast<double>(want_f[i])));
        worst_feature = std::max(worst_feature, d);
        ASSERT_LE(d, kFeatureTolerance) << name << " feature " << i;
      }
      EXPECT_EQ(m.prefix_ids(t), c["prefix_ids"].get<std::vector<int>>()) << name;
      for (std::size_t i = 0; i < captions.size(); ++i)
        EXPECT_EQ(m.question_ids(captions[i]), c["question_ids"][i].get<std::vector<int>>());
      const KvCache cache = m.image_prefix(t);
      const std::vector<double> p = m.answer_probabilities(cache, captions);
      const std::vector<float> logits = m.answer_logits(cache, captions);
      const auto& want_l = out.at(name + ".logits").second;
      ASSERT_EQ(logits.size(), want_l.size()) << name;
      for (std::size_t i = 0; i < logits.size(); ++i) {
        worst_logit = std::max(worst_logit, std::abs(static_cast<double>(logits[i]) - want_l[i]));
        EXPECT_NEAR(logits[i], want_l[i], kLogitTolerance) << name << " logit " << i;
      }
      for (std::size_t i = 0; i < captions.size(); ++i) {
        const double want = c["p_yes"][i].get<double>();
        worst_p = std::max(worst_p, std::abs(p[i] - want));
        EXPECT_NEAR(p[i], want, kProbabilityTolerance) << name << " " << captions[i];
        ++checked;
      }
      all.insert(all.end(), p.begin(), p.end());
    }
    // The two layouts hold the same tensors: the same bits.
    if (first_layout.empty()) {
      first_layout = all;
    } else {
      EXPECT_EQ(0, std::memcmp(all.data(), first_layout.data(), all.size() * sizeof(double)));
    }
  }
  EXPECT_EQ(checked, 24);
  std::printf(
      "[ llava-onevision ] max |P(Yes) - reference| = %.3g, max |logit - reference| = "
      "%.3g, max relative feature difference %.3g\n",
      worst_p, worst_logit, worst_feature);
}

TEST(LlavaOnevisionGolden, CachedPrefixBatchesAndThreadsDoNotChangeABit) {
  const LlavaOnevisionModel m = LlavaOnevisionModel::load(kDir + "model");
  test_support::expect_cached_prefix_is_exact(
      m, llava_onevision_preprocess(image("big.png"), m.config().preprocess),
      expected()["captions"]);
}

TEST(LlavaOnevisionGolden, TheRegistryOpensItAsAPairScorer) {
  ModelOptions o;
  o.use_cache = false;
  o.batch_size = 2;
  const std::unique_ptr<VlModel> m = open_model(kDir + "model", o);
  EXPECT_EQ(m->family(), "llava-onevision");
  EXPECT_EQ(m->score_name(), "P(Yes)");
  const nlohmann::json e = expected();
  const std::vector<std::string> captions = e["captions"];
  const std::vector<ImageRequest> images = {image_file_request(kDir + "images/wide.png"),
                                            image_file_request(kDir + "images/tall.png")};
  const std::vector<PairIndex> pairs = {{0, 1}, {2, 0}, {1, 1}, {0, 0}, {2, 1}};
  const std::vector<double> s = m->score_pairs(images, captions, pairs);
  auto want = [&](const std::string& img, std::size_t c) {
    for (const auto& k : e["cases"])
      if (k["image"] == img) return k["p_yes"][c].get<double>();
    return -1.0;
  };
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    const double w = want(pairs[k].second == 0 ? "wide.png" : "tall.png", pairs[k].first);
    EXPECT_NEAR(s[k], w, kProbabilityTolerance) << k;
  }
  const auto prepared = m->prepare_images(images);
  const std::vector<double> again = prepared->score(captions, pairs);
  EXPECT_EQ(0, std::memcmp(again.data(), s.data(), s.size() * sizeof(double)));
  ModelOptions bad;
  bad.preprocess = "no-split";
  EXPECT_THROW(open_model(kDir + "model", bad), UsageError);
  ModelOptions q;
  q.use_cache = false;
  q.settings = {{"question", "Is this \"{}\"?"}, {"answer", "No"}};
  const std::unique_ptr<VlModel> asked = open_model(kDir + "model", q);
  EXPECT_EQ(asked->score_name(), "P(No)");
  EXPECT_EQ(asked->describe()["question_template"], "Is this \"{}\"?");
}

// A copy of the fixture with one file changed: errors name the file, the field or the tensor.
struct BrokenCopy : test_support::CheckpointCopy {
  BrokenCopy() : CheckpointCopy(kDir + "model") {}
  std::string error() const {
    return test_support::input_error([&] { LlavaOnevisionModel::load(dir()); });
  }
};

TEST(LlavaOnevisionGolden, BrokenCheckpointsAreRefusedNamingWhat) {
  const std::vector<std::pair<std::string, std::function<void(BrokenCopy&)>>> cases = {
      {"image_token_index",
       [](BrokenCopy& b) {
         b.edit_json("config.json", [](nlohmann::json& j) { j["image_token_index"] = 3; });
       }},
      {"vision_feature_select_strategy",
       [](BrokenCopy& b) {
         b.edit_json("config.json",
                     [](nlohmann::json& j) { j["vision_feature_select_strategy"] = "default"; });
       }},
      {"vision_aspect_ratio",
       [](BrokenCopy& b) {
         b.edit_json("config.json", [](nlohmann::json& j) { j["vision_aspect_ratio"] = "pad"; });
       }},
      {"vision_feature_layer",
       [](BrokenCopy& b) {
         b.edit_json("config.json", [](nlohmann::json& j) { j["vision_feature_layer"] = -9; });
       }},
      {"resample",
       [](BrokenCopy& b) {
         b.edit_json("preprocessor_config.json", [](nlohmann::json& j) { j["resample"] = 1; });
       }},
      {"image_grid_pinpoints",
       [](BrokenCopy& b) {
         b.edit_json("preprocessor_config.json", [](nlohmann::json& j) {
           j["image_grid_pinpoints"] = {{30, 45}};
         });
       }},
      {"chat_template",
       [](BrokenCopy& b) {
         b.edit_json("chat_template.json", [](nlohmann::json& j) {
           j["chat_template"] = "{% for m in messages %}{{ m['content'] }}{% endfor %}";
         });
       }},
      {"multi_modal_projector.linear_2.weight",
       [](BrokenCopy& b) {
         auto tensors = read_safetensors_f32(b.dir() / "model.safetensors");
         tensors.erase("multi_modal_projector.linear_2.weight");
         b.write("model.safetensors", encode_safetensors_f32(tensors));
       }},
  };
  for (const auto& [what, edit] : cases) {
    BrokenCopy b;
    edit(b);
    EXPECT_NE(b.error().find(what), std::string::npos) << what << ": " << b.error();
  }
}

// anyres_max_2: the model packs fewer features than the processor (whose 9 is a constant)
// counts tokens for; transformers refuses such an image, and so does winokit, saying why.
TEST(LlavaOnevisionGolden, AProcessorAndModelDisagreementIsRefused) {
  BrokenCopy b;
  b.edit_json("config.json", [](nlohmann::json& j) { j["vision_aspect_ratio"] = "anyres_max_2"; });
  const LlavaOnevisionModel m = LlavaOnevisionModel::load(b.dir());
  EXPECT_NO_THROW(m.image_prefix(image("small.png")));
  try {
    m.image_prefix(image("big.png"));
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("the processor inserts 499 <image> tokens"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace winokit
