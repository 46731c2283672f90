// ViLT against the standalone reference (tests/fixtures/vilt_reference.py: transformers'
// BertTokenizer, ViltImageProcessor and modeling_vilt.py transcribed, ViLT's IPOT) on seeded
// random tiny checkpoints with perturbed LayerNorms and biases.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "model/families/vilt/vilt_alignment.hpp"
#include "model/families/vilt/vilt_model.hpp"
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

const fs::path kFixtures = fs::path(WINOKIT_SOURCE_DIR) / "tests" / "fixtures" / "vilt";
const fs::path kImages = fs::path(WINOKIT_SHARED_DIR) / "golden" / "clip" / "images";
const std::vector<std::string> kImageNames = {"chelsea_odd.jpg", "astronaut_portrait.jpg",
                                              "coffee_1920x1281.jpg"};
const std::vector<std::string> kCaptions = {"a dog bites a man", "a man bites a dog",
                                            "The old cat sits under a tree.", "naïve résumé"};

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

}  // namespace

TEST(ViltTokenizer, MatchesBertTokenizer) {
  const auto tok = WordPieceTokenizer::load(kFixtures / "tiny-rank");
  std::ifstream in(kFixtures / "tokenizer.jsonl");
  std::string line;
  int cases = 0;
  while (std::getline(in, line)) {
    const auto j = nlohmann::json::parse(line);
    const std::string text = j["text"];
    EXPECT_EQ(tok.tokenize(text), j["tokens"].get<std::vector<std::string>>()) << text;
    EXPECT_EQ(tok.encode(text, 40), j["input_ids"].get<std::vector<int>>()) << text;
    ++cases;
  }
  EXPECT_GE(cases, 20);
}

TEST(ViltTokenizer, MissingSpecialTokenIsAnInputError) {
  EXPECT_THROW(WordPieceTokenizer::from_vocab({"[CLS]", "[SEP]", "a"}, {}), InputError);
  EXPECT_THROW(WordPieceTokenizer::load(kFixtures / "no-such-dir"), IoError);
}

TEST(ViltPreprocess, ResizeSizesMatchTheProcessor) {
  const auto j = nlohmann::json::parse(read_file(kFixtures / "resize_sizes.json"));
  for (const auto& c : j) {
    const auto [h, w] = vilt_resize_size(c["height"], c["width"], 384, 32);
    EXPECT_EQ(h, c["out"][0].get<int>()) << c.dump();
    EXPECT_EQ(w, c["out"][1].get<int>()) << c.dump();
  }
}

TEST(ViltPreprocess, PixelsAndPadMaskMatch) {
  const ViltConfig cfg = load_vilt_config(kFixtures / "tiny-rank");
  std::vector<ViltImage> ims;
  for (const auto& n : kImageNames) {
    ims.push_back(vilt_preprocess(decode_image(image_bytes(n)), cfg));
    const auto& e = expected().at("pixels/" + n);
    ASSERT_EQ(e.first, (std::vector<std::int64_t>{3, ims.back().height, ims.back().width})) << n;
    float worst = 0;
    for (std::size_t k = 0; k < e.second.size(); ++k)
      worst = std::max(worst, std::abs(e.second[k] - ims.back().pixels[k]));
    EXPECT_LE(worst, 1e-6f) << n;
  }
  const ViltPadded p = vilt_pad({ims[0], ims[1]});
  const auto& ep = expected().at("pad/pixels");
  ASSERT_EQ(ep.first, (std::vector<std::int64_t>{2, 3, p.height, p.width}));
  EXPECT_EQ(p.pixels, ep.second);
  const auto& em = want("pad/mask");
  ASSERT_EQ(em.size(), p.mask.size());
  for (std::size_t k = 0; k < em.size(); ++k)
    ASSERT_EQ(static_cast<float>(p.mask[k]), em[k]) << k;
}

class ViltHeads : public ::testing::TestWithParam<std::string> {};

TEST_P(ViltHeads, LogitsAndScoresMatchTheReference) {
  const std::string head = GetParam();
  const ViltRuntime rt = ViltRuntime::load(kFixtures / ("tiny-" + head), {});
  EXPECT_EQ(to_string(rt.model->config().head), head);
  std::vector<ViltImageEmbeds> embeds;
  for (const auto& n : kImageNames) {
    embeds.push_back(
        rt.model->embed_image(vilt_preprocess(decode_image(image_bytes(n)), rt.model->config())));
  }
  std::vector<std::vector<int>> ids;
  std::vector<const ViltImageEmbeds*> ims;
  for (const auto& e : embeds) {
    for (const auto& c : kCaptions) {
      ids.push_back(rt.encode(c));
      ims.push_back(&e);
    }
  }
  const ViltOutput all = rt.model->score(ids, ims, /*keep_states=*/true);
  const auto& logits = want("logits/" + head);
  const auto& scores = want("scores/" + head);
  ASSERT_EQ(all.logits.size(), logits.size());
  for (std::size_t k = 0; k < logits.size(); ++k)
    EXPECT_NEAR(all.logits[k], logits[k], 1e-5 * std::abs(logits[k]) + 1e-6) << k;
  for (std::size_t k = 0; k < scores.size(); ++k)
    EXPECT_NEAR(all.scores[k], scores[k], 1e-5 * std::abs(scores[k]) + 1e-6) << k;
  // Final states of the text tokens (the reference's patches come in torch.multinomial's order).
  const auto& states = want("states/" + head + "/i0_c0");
  ASSERT_EQ(all.states[0].size(), states.size());
  for (std::size_t k = 0; k < ids[0].size() * rt.model->config().hidden; ++k)
    ASSERT_NEAR(all.states[0][k], states[k], 1e-4 * std::abs(states[k]) + 2e-5) << k;
  // One pair at a time gives the same bits as the whole batch.
  for (std::size_t p = 0; p < ids.size(); p += 5) {
    const ViltOutput one = rt.model->score({ids[p]}, {ims[p]});
    EXPECT_EQ(one.scores[0], all.scores[p]) << p;
  }
}

INSTANTIATE_TEST_SUITE_P(Tiny, ViltHeads, ::testing::Values("rank", "itm"));

TEST(ViltAlignment, TransportPlanMatchesIpot) {
  const ViltRuntime rt = ViltRuntime::load(kFixtures / "tiny-rank", {});
  for (std::size_t i = 0; i < kImageNames.size(); ++i) {
    for (std::size_t c = 0; c < 2; ++c) {
      const ViltAlignment a =
          vilt_word_patch_alignment(rt, image_bytes(kImageNames[i]), kCaptions[c]);
      const std::string key = "heatmap/rank/i" + std::to_string(i) + "_c" + std::to_string(c);
      const auto& e = expected().at(key);
      ASSERT_EQ(e.first, (std::vector<std::int64_t>{static_cast<std::int64_t>(a.tokens.size()),
                                                    a.grid_h, a.grid_w}))
          << key;
      float peak = 0;
      for (float v : e.second)
        peak = std::max(peak, std::abs(v));
      const std::size_t n = static_cast<std::size_t>(a.grid_h) * a.grid_w;
      for (std::size_t t = 0; t < a.tokens.size(); ++t) {
        for (std::size_t p = 0; p < n; ++p) {
          EXPECT_NEAR(a.transport[t][p], e.second[t * n + p], 1e-4 * peak) << key << " " << t;
        }
      }
      EXPECT_EQ(a.tokens, rt.tokenizer->tokenize(kCaptions[c]));
    }
  }
}

TEST(ViltAlignment, DisplayMapIsScaledToUnitRange) {
  const std::vector<float> m = vilt_display_map({0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 1.f, 5.f});
  EXPECT_FLOAT_EQ(m[7], 1.0f);
  EXPECT_FLOAT_EQ(m[0], 0.0f);
  EXPECT_EQ(vilt_display_map({2.f, 2.f, 2.f}), std::vector<float>(3, 0.0f));
}

TEST(ViltRival, PicksTheBestScoredCandidates) {
  const ViltRuntime rt = ViltRuntime::load(kFixtures / "tiny-rank", {});
  std::map<std::string, fs::path> pool;
  std::vector<std::function<ImageBytes()>> readers;
  for (const auto& n : kImageNames) {
    pool[n] = kImages / n;
    readers.emplace_back([n] { return image_bytes(n); });
  }
  ModelOptions o;
  o.use_cache = false;
  auto rival = make_model_rival(open_model(kFixtures / "tiny-rank", o), pool, false);
  const std::vector<std::string> candidates(kImageNames.begin(), kImageNames.end());
  const std::vector<double> s = vilt_score_pairs(rt, readers, {"A dog"}, {{0, 0}, {0, 1}, {0, 2}});
  EXPECT_EQ(rival->pick("dog", candidates, 2), select_top_k(candidates, s, 2));
  EXPECT_EQ(rival->pick("dog", {"missing.png", kImageNames[0]}, 1),
            std::vector<std::string>{kImageNames[0]});
}
