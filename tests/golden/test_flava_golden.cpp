// FLAVA against the standalone reference (tests/fixtures/flava_reference.py: transformers'
// FlavaImageProcessor and modeling_flava.py transcribed, the BERT tokenizer of
// vilt_reference.py) on a seeded random tiny checkpoint with perturbed LayerNorms and biases,
// saved in both layouts (FlavaForPreTraining and FlavaModel).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "model/families/flava/flava_family.hpp"
#include "model/families/flava/flava_model.hpp"
#include "model/text/wordpiece.hpp"
#include "winokit/core/error.hpp"
#include "winokit/eval/association_solver.hpp"
#include "winokit/game/rival.hpp"
#include "winokit/io/files.hpp"
#include "winokit/io/image_decode.hpp"
#include "winokit/io/safetensors.hpp"
#include "winokit/model/preprocess.hpp"

namespace fs = std::filesystem;
using namespace winokit;

namespace {

const fs::path kFixtures = fs::path(WINOKIT_SOURCE_DIR) / "tests" / "fixtures" / "flava";
const fs::path kImages = fs::path(WINOKIT_SHARED_DIR) / "golden" / "clip" / "images";
const std::vector<std::string> kImageNames = {"chelsea_odd.jpg", "astronaut_portrait.jpg",
                                              "coffee_1920x1281.jpg"};
const std::vector<std::string> kCaptions = {"a dog bites a man", "a man bites a dog",
                                            "The old cat sits under a tree.", "naïve résumé"};
constexpr double kRelative = 1e-5;

using Tensors = std::map<std::string, std::pair<std::vector<std::int64_t>, std::vector<float>>>;

const Tensors& expected() {
  static const Tensors t = read_safetensors_f32(kFixtures / "expected.safetensors");
  return t;
}

const std::vector<float>& want(const std::string& name) {
  auto it = expected().find(name);
  if (it == expected().end()) throw std::runtime_error("no expected tensor " + name);
  return it->second.second;
}

ImageBytes image_bytes(const std::string& name) {
  ImageBytes b;
  b.name = name;
  b.source = (kImages / name).string();
  b.bytes = read_file(kImages / name);
  return b;
}

void expect_close(double got, double want, const std::string& what) {
  EXPECT_LE(std::abs(got - want), kRelative * std::max(std::abs(want), 1e-3))
      << what << ": got " << got << ", want " << want;
}

std::vector<std::function<ImageBytes()>> readers() {
  std::vector<std::function<ImageBytes()>> r;
  for (const auto& n : kImageNames)
    r.emplace_back([n] { return image_bytes(n); });
  return r;
}

// Image-major pairs, as the reference writes them.
std::vector<std::pair<std::size_t, std::size_t>> all_pairs() {
  std::vector<std::pair<std::size_t, std::size_t>> p;
  for (std::size_t i = 0; i < kImageNames.size(); ++i)
    for (std::size_t c = 0; c < kCaptions.size(); ++c)
      p.emplace_back(c, i);
  return p;
}

}  // namespace

TEST(FlavaGolden, TokenIdsMatchTheReference) {
  const SafeTensors st = SafeTensors::open(kFixtures / "expected.safetensors");
  const auto ids = nlohmann::json::parse(st.metadata().at("input_ids"));
  FlavaRuntime rt = FlavaRuntime::load(kFixtures / "tiny-pretraining", std::nullopt, {});
  ASSERT_EQ(ids.size(), kCaptions.size());
  for (std::size_t c = 0; c < kCaptions.size(); ++c)
    EXPECT_EQ(rt.encode(kCaptions[c]), ids[c].get<std::vector<int>>()) << kCaptions[c];
}

TEST(FlavaGolden, PixelsMatchTheProcessor) {
  const FlavaConfig c = load_flava_config(kFixtures / "tiny-pretraining");
  EXPECT_EQ(c.resize_h, 40);
  EXPECT_EQ(c.resize_w, 44);
  EXPECT_EQ(c.crop_h, 32);
  for (const auto& name : kImageNames) {
    const FlavaImage im = flava_preprocess(decode_image(image_bytes(name)), c);
    const auto& w = want("pixels/" + name);
    ASSERT_EQ(im.pixels.size(), w.size()) << name;
    double worst = 0;
    for (std::size_t k = 0; k < w.size(); ++k)
      worst = std::max(worst, static_cast<double>(std::abs(im.pixels[k] - w[k])));
    EXPECT_LE(worst, 1e-6) << name;
  }
}

TEST(FlavaGolden, ItmProbabilitiesAndLogitsMatch) {
  FlavaRuntime rt = FlavaRuntime::load(kFixtures / "tiny-pretraining", std::nullopt, {});
  EXPECT_EQ(rt.head, FlavaHead::Itm);  // the default when the ITM head is there
  const std::vector<double> s = flava_score_pairs(rt, readers(), kCaptions, all_pairs());
  const auto& w = want("itm");
  ASSERT_EQ(s.size(), w.size());
  for (std::size_t p = 0; p < s.size(); ++p)
    expect_close(s[p], w[p], "itm pair " + std::to_string(p));
  // The logits themselves, for one image through the model API.
  const FlavaModel& m = *rt.model;
  const FlavaImage im = flava_preprocess(decode_image(image_bytes(kImageNames[1])), m.config());
  const auto img = m.embed_images({&im});
  std::vector<std::vector<int>> ids;
  for (const auto& c : kCaptions)
    ids.push_back(rt.encode(c));
  const auto txt = m.embed_texts(ids);
  std::vector<const FlavaEmbeds*> ti, ii;
  for (const auto& t : txt) {
    ti.push_back(&t);
    ii.push_back(&img[0]);
  }
  const FlavaItmOutput o = m.itm(ti, ii);
  const auto& wl = want("itm_logits");
  for (std::size_t c = 0; c < kCaptions.size(); ++c) {
    for (std::size_t k = 0; k < 2; ++k) {
      expect_close(o.logits[c * 2 + k], wl[(kCaptions.size() + c) * 2 + k],
                   "itm logit c" + std::to_string(c) + " k" + std::to_string(k));
    }
  }
  // The reference's padded batch agrees with its one-pair passes (padding changes nothing).
  const auto& wb = want("batched/itm");
  for (std::size_t p = 0; p < s.size(); ++p)
    expect_close(s[p], wb[p], "padded batch itm pair " + std::to_string(p));
}

TEST(FlavaGolden, ContrastiveScoresMatchInBothLayouts) {
  for (const char* layout : {"tiny-pretraining", "tiny-model"}) {
    FlavaRuntime rt = FlavaRuntime::load(kFixtures / layout, FlavaHead::Contrastive, {});
    const std::vector<double> s = flava_score_pairs(rt, readers(), kCaptions, all_pairs());
    const auto& w = want("contrastive");
    ASSERT_EQ(s.size(), w.size());
    // 1e-5 relative to the score's full scale exp(logit_scale) (a cosine of 1): a cosine near 0
    // is a cancelling sum, where float32 noise is relatively large in both implementations
    // (image 0 with caption 2: float64 -0.1682090, the reference -0.1682102, winokit
    // -0.1682078).
    const double scale = std::exp(2.3);
    for (std::size_t p = 0; p < s.size(); ++p) {
      EXPECT_LE(std::abs(s[p] - w[p]), kRelative * scale)
          << layout << " contrastive pair " << p << ": got " << s[p] << ", want " << w[p];
    }
    EXPECT_NEAR(rt.model->logit_scale(), 2.3, 1e-6);
  }
}

TEST(FlavaGolden, BatchingDoesNotChangeScores) {
  FlavaRunOptions o;
  o.batch_size = 1;
  o.image_batch = 1;
  FlavaRuntime one = FlavaRuntime::load(kFixtures / "tiny-pretraining", std::nullopt, o);
  FlavaRuntime many = FlavaRuntime::load(kFixtures / "tiny-pretraining", std::nullopt, {});
  EXPECT_EQ(flava_score_pairs(one, readers(), kCaptions, all_pairs()),
            flava_score_pairs(many, readers(), kCaptions, all_pairs()));
}

TEST(FlavaGolden, ModelLayoutHasNoItmHead) {
  FlavaRuntime rt = FlavaRuntime::load(kFixtures / "tiny-model", std::nullopt, {});
  EXPECT_EQ(rt.head, FlavaHead::Contrastive);
  EXPECT_EQ(rt.model->layout(), "FlavaModel");
  EXPECT_THROW(FlavaRuntime::load(kFixtures / "tiny-model", FlavaHead::Itm, {}), UsageError);
}

TEST(FlavaGolden, MisshapenTensorNamesTheTensorAndShapes) {
  const fs::path dir = fs::temp_directory_path() / "winokit_flava_bad_shape";
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const char* f : {"config.json", "preprocessor_config.json", "vocab.txt"})
    fs::copy_file(kFixtures / "tiny-pretraining" / f, dir / f);
  Tensors t = read_safetensors_f32(kFixtures / "tiny-pretraining" / "model.safetensors");
  auto& proj = t.at("flava.text_projection.weight");
  proj.first = {proj.first[1], proj.first[0]};  // transposed shape
  write_file_atomic(dir / "model.safetensors", encode_safetensors_f32(t, {}));
  try {
    (void)FlavaModel::load(dir);
    ADD_FAILURE() << "loaded a misshapen checkpoint";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("flava.text_projection.weight"), std::string::npos) << m;
    EXPECT_NE(m.find("20"), std::string::npos) << m;
    EXPECT_NE(m.find("24"), std::string::npos) << m;
  }
  t.erase("flava.text_projection.weight");
  write_file_atomic(dir / "model.safetensors", encode_safetensors_f32(t, {}));
  try {
    (void)FlavaModel::load(dir);
    ADD_FAILURE() << "loaded a checkpoint with a missing tensor";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("flava.text_projection.weight"), std::string::npos)
        << e.what();
  }
  fs::remove_all(dir);
}

TEST(FlavaGolden, ConfigErrorsNameTheField) {
  const fs::path dir = fs::temp_directory_path() / "winokit_flava_bad_config";
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto j = nlohmann::json::parse(read_file(kFixtures / "tiny-pretraining" / "config.json"));
  j["text_config"]["hidden_act"] = "relu";
  write_file_atomic(dir / "config.json", j.dump());
  try {
    (void)load_flava_config(dir);
    ADD_FAILURE() << "accepted hidden_act relu";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("text_config.hidden_act"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(is_flava_checkpoint(dir / "nowhere"));
  EXPECT_TRUE(is_flava_checkpoint(kFixtures / "tiny-model"));
  fs::remove_all(dir);
}

TEST(FlavaRival, PicksTheBestScoredCandidatesWithEachHead) {
  std::map<std::string, fs::path> pool;
  std::vector<std::string> names;
  for (const auto& n : kImageNames) {
    const std::string stem = fs::path(n).stem().string();
    pool[stem] = kImages / n;
    names.push_back(stem);
  }
  for (FlavaHead head : {FlavaHead::Itm, FlavaHead::Contrastive}) {
    FlavaRuntime rt = FlavaRuntime::load(kFixtures / "tiny-pretraining", head, {});
    ModelOptions o;
    o.use_cache = false;
    o.head = to_string(head);
    auto rival = make_model_rival(open_model(kFixtures / "tiny-pretraining", o), pool, false);
    const std::string prompt = cue_prompt("dog", "{A} {cue}");
    std::vector<std::function<ImageBytes()>> r;
    std::vector<std::pair<std::size_t, std::size_t>> pairs;
    for (std::size_t i = 0; i < names.size(); ++i) {
      const fs::path path = pool[names[i]];
      r.emplace_back([path, n = names[i]] {
        ImageBytes b;
        b.name = n;
        b.source = path.string();
        b.bytes = read_file(path);
        return b;
      });
      pairs.emplace_back(0, i);
    }
    const std::vector<double> s = flava_score_pairs(rt, r, {prompt}, pairs);
    EXPECT_EQ(rival->pick("dog", names, 2), select_top_k(names, s, 2)) << to_string(head);
    EXPECT_EQ(rival->describe(), (kFixtures / "tiny-pretraining").string());
  }
}
