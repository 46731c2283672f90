// Mean@l / Max@l pooled per-layer states of the CLIP engine against openai/CLIP's own code
// (tests/fixtures/make_clip_pooled_golden.py on the shared tiny-quickgelu-openclip checkpoint),
// their independence of batch, batch composition and threads, and the runtime's merge of
// per-batch states.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "model/families/clip/clip_model.hpp"
#include "model/runtime/embedding_runtime.hpp"
#include "winokit/core/error.hpp"
#include "winokit/io/files.hpp"
#include "winokit/io/safetensors.hpp"
#include "winokit/model/compute.hpp"

namespace winokit {
namespace {

const std::string kGolden = std::string(WINOKIT_SHARED_DIR) + "/golden/clip/";
const std::string kModel = kGolden + "models/tiny-quickgelu-openclip";
const std::string kPooled =
    std::string(WINOKIT_SOURCE_DIR) +
    "/tests/fixtures/clip_pooled/tiny-quickgelu-openclip-pooled.safetensors";
// The tolerance of the other hidden-state goldens (../shared/golden/clip/README.md).
constexpr double kRelativeTolerance = 1e-5;
constexpr int kImages = 13, kCaptions = 28;
constexpr std::size_t kPixels = 3 * 224 * 224;

std::vector<std::string> image_names() {
  return nlohmann::json::parse(read_file(kGolden + "manifest.json"))["images"]
      .get<std::vector<std::string>>();
}

std::vector<float> golden_pixels() {
  auto pixels = read_safetensors_f32(kGolden + "preprocess.safetensors");
  std::vector<float> px;
  for (const auto& name : image_names()) {
    const auto& t = pixels.at("openai/" + name).second;
    px.insert(px.end(), t.begin(), t.end());
  }
  return px;
}

std::vector<std::vector<int>> golden_ids() {
  std::vector<std::vector<int>> ids;
  std::ifstream in(kGolden + "tokenizer.jsonl");
  std::string line;
  while (std::getline(in, line))
    ids.push_back(nlohmann::json::parse(line)["input_ids"].get<std::vector<int>>());
  return ids;
}

double relative_error(const std::vector<float>& got, const std::vector<float>& want) {
  EXPECT_EQ(got.size(), want.size());
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
    diff = std::max(diff, static_cast<double>(std::fabs(got[i] - want[i])));
    scale = std::max(scale, static_cast<double>(std::fabs(want[i])));
  }
  return diff / scale;
}

// Level l of a [levels, count, width] tensor, rows [first, first + n).
std::vector<float> rows_of(const std::vector<float>& states, int level, int count, int width,
                           int first, int n) {
  const auto begin = states.begin() + (static_cast<std::ptrdiff_t>(level) * count + first) * width;
  return {begin, begin + static_cast<std::ptrdiff_t>(n) * width};
}

TEST(GoldenPooled, MeanAndMaxOverTokensMatchOpenAiClip) {
  ClipModel model = ClipModel::load(kModel);
  auto want = read_safetensors_f32(kPooled);
  EncodeOptions o;
  o.pooled_states = true;
  const auto px = golden_pixels();
  auto img = model.encode_images(px.data(), kImages, o);
  auto txt = model.encode_texts(golden_ids(), o);
  EXPECT_TRUE(img.hidden.empty());  // only what was asked for
  EXPECT_LT(relative_error(img.hidden_mean, want.at("image_hidden_mean").second),
            kRelativeTolerance);
  EXPECT_LT(relative_error(img.hidden_max, want.at("image_hidden_max").second), kRelativeTolerance);
  EXPECT_LT(relative_error(txt.hidden_mean, want.at("text_hidden_mean").second),
            kRelativeTolerance);
  EXPECT_LT(relative_error(txt.hidden_max, want.at("text_hidden_max").second), kRelativeTolerance);
  EXPECT_EQ(want.at("image_hidden_mean").first, (std::vector<std::int64_t>{3, kImages, 128}));
  EXPECT_EQ(want.at("text_hidden_max").first, (std::vector<std::int64_t>{3, kCaptions, 64}));
  // Pooling is not the class token: the mean differs from it at every level.
  o.hidden_states = true;
  auto both = model.encode_images(px.data(), 1, o);
  EXPECT_GT(relative_error(both.hidden_mean, both.hidden), 1e-2);
}

// The same weights in the Hugging Face layout (tiny-quickgelu-hf) pool to the same states.
TEST(GoldenPooled, HuggingFaceLayoutOfTheSameWeightsMatches) {
  ClipModel model = ClipModel::load(kGolden + "models/tiny-quickgelu-hf");
  auto want = read_safetensors_f32(kPooled);
  EncodeOptions o;
  o.pooled_states = true;
  const auto px = golden_pixels();
  auto img = model.encode_images(px.data(), kImages, o);
  auto txt = model.encode_texts(golden_ids(), o);
  EXPECT_LT(relative_error(img.hidden_mean, want.at("image_hidden_mean").second),
            kRelativeTolerance);
  EXPECT_LT(relative_error(img.hidden_max, want.at("image_hidden_max").second), kRelativeTolerance);
  EXPECT_LT(relative_error(txt.hidden_mean, want.at("text_hidden_mean").second),
            kRelativeTolerance);
  EXPECT_LT(relative_error(txt.hidden_max, want.at("text_hidden_max").second), kRelativeTolerance);
}

TEST(GoldenPooled, IndependentOfBatchCompositionAndThreads) {
  ClipModel model = ClipModel::load(kModel);
  EncodeOptions o;
  o.pooled_states = true;
  const auto px = golden_pixels();
  const int saved = omp_get_max_threads();
  set_compute_threads(2);
  auto all = model.encode_images(px.data(), kImages, o);
  const int vw = model.config().vision.width, tw = model.config().text.width;
  for (int start = 0; start < kImages; start += 5) {
    const int n = std::min(5, kImages - start);
    auto part = model.encode_images(px.data() + static_cast<std::size_t>(start) * kPixels, n, o);
    for (int l = 0; l < 3; ++l) {
      EXPECT_EQ(rows_of(part.hidden_mean, l, n, vw, 0, n),
                rows_of(all.hidden_mean, l, kImages, vw, start, n));
      EXPECT_EQ(rows_of(part.hidden_max, l, n, vw, 0, n),
                rows_of(all.hidden_max, l, kImages, vw, start, n));
    }
  }
  const auto ids = golden_ids();
  auto texts = model.encode_texts(ids, o);
  for (int i = 0; i < kCaptions; ++i) {
    // Paired with the longest caption: padded to another length, never pooled over the padding.
    auto paired = model.encode_texts({ids.back(), ids[static_cast<std::size_t>(i)]}, o);
    for (int l = 0; l < 3; ++l) {
      EXPECT_EQ(rows_of(paired.hidden_mean, l, 2, tw, 1, 1),
                rows_of(texts.hidden_mean, l, kCaptions, tw, i, 1))
          << i;
      EXPECT_EQ(rows_of(paired.hidden_max, l, 2, tw, 1, 1),
                rows_of(texts.hidden_max, l, kCaptions, tw, i, 1))
          << i;
    }
  }
  EncodeOptions full = o;
  full.full_context = true;  // all 77 positions run: the pooled states stay the same
  EXPECT_EQ(model.encode_texts(ids, full).hidden_mean, texts.hidden_mean);
  set_compute_threads(1);
  EXPECT_EQ(model.encode_images(px.data(), kImages, o).hidden_max, all.hidden_max);
  EXPECT_EQ(model.encode_texts(ids, o).hidden_mean, texts.hidden_mean);
  set_compute_threads(saved);
}

// The runtime encodes in batches and returns [levels, count, width] for the whole request,
// whatever the batch size (images) and however the captions fall into batches (texts).
TEST(GoldenPooled, RuntimeMergesBatchesIntoOneTensor) {
  ClipRunOptions opts;
  opts.use_cache = false;
  opts.tokenizer = kGolden + "vocab/bpe_simple_vocab_16e6.txt.gz";
  opts.batch_size = 4;
  ClipRuntime small = ClipRuntime::load(kModel, opts);
  opts.batch_size = 32;
  ClipRuntime large = ClipRuntime::load(kModel, opts);
  std::vector<ImageRequest> requests;
  for (const auto& name : image_names())
    requests.push_back(image_file_request(kGolden + "images/" + name, name));
  EncodeOptions o;
  o.hidden_states = true;
  o.pooled_states = true;
  TowerOutput a, b;
  embed_images(small, requests, nullptr, o, &a);
  embed_images(large, requests, nullptr, o, &b);
  EXPECT_EQ(a.hidden, b.hidden);
  EXPECT_EQ(a.hidden_mean, b.hidden_mean);
  EXPECT_EQ(a.hidden_max, b.hidden_max);
  ASSERT_EQ(a.hidden_mean.size(), static_cast<std::size_t>(3 * kImages * 128));

  // 28 captions up to 77 tokens do not fit one batch of token rows: several batches.
  std::vector<std::string> captions;
  std::ifstream in(kGolden + "tokenizer.jsonl");
  std::string line;
  while (std::getline(in, line))
    captions.push_back(nlohmann::json::parse(line)["text"].get<std::string>());
  TowerOutput t;
  embed_texts(large, captions, nullptr, o, &t);
  auto direct = large.model->encode_texts(golden_ids(), o);
  EXPECT_EQ(t.hidden, direct.hidden);
  EXPECT_EQ(t.hidden_mean, direct.hidden_mean);
  EXPECT_EQ(t.hidden_max, direct.hidden_max);
}

TEST(GoldenPooled, ResNetRefusesPerLayerStatesWithAHint) {
  ClipModel rn =
      ClipModel::load(std::string(WINOKIT_SOURCE_DIR) + "/tests/fixtures/resnet/tiny-rn.pt");
  std::vector<float> px(
      static_cast<std::size_t>(3 * rn.config().image_size * rn.config().image_size));
  EncodeOptions o;
  o.pooled_states = true;
  try {
    rn.encode_images(px.data(), 1, o);
    FAIL() << "expected a UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("ResNet"), std::string::npos);
    EXPECT_NE(e.hint().find("--layers final"), std::string::npos);
  }
}

}  // namespace
}  // namespace winokit
