// The CLIP engine against the reference outputs in ../shared/golden/clip (see its README).
#include <gtest/gtest.h>
#include <omp.h>
#include <unistd.h>

#include <cstdlib>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "model/families/clip/clip_family.hpp"
#include "model/families/clip/clip_model.hpp"
#include "winokit/core/error.hpp"
#include "winokit/eval/heatmap.hpp"
#include "winokit/io/files.hpp"
#include "winokit/io/image_decode.hpp"
#include "winokit/io/safetensors.hpp"
#include "winokit/model/compute.hpp"
#include "winokit/model/preprocess.hpp"
#include "winokit/model/tokenizer.hpp"

namespace winokit {
namespace {

const std::string kGolden = std::string(WINOKIT_SHARED_DIR) + "/golden/clip/";
// Tolerances from the golden README: what a correct float32 implementation meets.
constexpr double kRelativeTolerance = 1e-5;   // embeddings and hidden states
constexpr double kLogitTolerance = 1e-3;      // absolute, on exp(logit_scale) * cosine
constexpr double kPixelLevelTolerance = 1.0;  // in 1/255 levels before normalisation

nlohmann::json manifest() {
  return nlohmann::json::parse(read_file(kGolden + "manifest.json"));
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
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    diff = std::max(diff, static_cast<double>(std::fabs(got[i] - want[i])));
    scale = std::max(scale, static_cast<double>(std::fabs(want[i])));
  }
  return diff / scale;
}

TEST(GoldenTokenizer, MatchesIdForIdInBothFormats) {
  auto hf = ClipTokenizer::from_hf(kGolden + "vocab/vocab.json", kGolden + "vocab/merges.txt");
  auto oa = ClipTokenizer::from_openai(kGolden + "vocab/bpe_simple_vocab_16e6.txt.gz");
  std::ifstream in(kGolden + "tokenizer.jsonl");
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line);
    const std::string text = j["text"];
    EXPECT_EQ(hf.encode(text), j["input_ids"].get<std::vector<int>>()) << text;
    EXPECT_EQ(oa.encode(text), j["input_ids"].get<std::vector<int>>()) << text;
    EXPECT_EQ(hf.bpe_ids(text), j["bpe"].get<std::vector<int>>()) << text;
    ++n;
  }
  EXPECT_EQ(n, 28);
  EXPECT_EQ(hf.vocab_size(), 49408u);
  EXPECT_EQ(oa.vocab_size(), 49408u);
}

TEST(GoldenPreprocess, EveryFixtureWithinOneLevelForBothPipelines) {
  auto pixels = read_safetensors_f32(kGolden + "preprocess.safetensors");
  for (auto pipeline : {PreprocessPipeline::Hf, PreprocessPipeline::OpenAi}) {
    PreprocessConfig cfg;
    cfg.pipeline = pipeline;
    const auto images = manifest()["images"];
    for (const auto& name : images) {
      const std::string file = name.get<std::string>();
      auto got = preprocess(decode_image(read_file(kGolden + "images/" + file), file), cfg);
      const auto& want = pixels.at(std::string(to_string(pipeline)) + "/" + file).second;
      ASSERT_EQ(got.size(), want.size()) << file;
      double worst = 0;
      for (std::size_t i = 0; i < got.size(); ++i) {
        const std::size_t c = i / (224 * 224);
        worst = std::max(worst, std::fabs(got[i] - want[i]) * cfg.std[c] * 255.0);
      }
      EXPECT_LE(worst, kPixelLevelTolerance + 1e-3) << to_string(pipeline) << " " << file;
    }
  }
}

class GoldenModel : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenModel, EmbeddingsLogitsAndHiddenStates) {
  const std::string name = GetParam();
  ClipModel model = ClipModel::load(kGolden + "models/" + name);
  auto pixels = read_safetensors_f32(kGolden + "preprocess.safetensors");
  const std::string prefix = name.find("openclip") != std::string::npos ? "openai/" : "hf/";
  std::vector<float> px;
  const auto images = manifest()["images"];
  for (const auto& image : images) {
    const auto& t = pixels.at(prefix + image.get<std::string>()).second;
    px.insert(px.end(), t.begin(), t.end());
  }
  EncodeOptions o;
  o.hidden_states = true;
  auto img = model.encode_images(px.data(), 13, o);
  auto txt = model.encode_texts(golden_ids(), o);
  auto want = read_safetensors_f32(kGolden + "models/" + name + "/expected.safetensors");
  EXPECT_LT(relative_error(img.embeds, want.at("image_embeds").second), kRelativeTolerance);
  EXPECT_LT(relative_error(txt.embeds, want.at("text_embeds").second), kRelativeTolerance);
  EXPECT_LT(relative_error(img.hidden, want.at("vision_hidden_cls").second), kRelativeTolerance);
  EXPECT_LT(relative_error(txt.hidden, want.at("text_hidden_eot").second), kRelativeTolerance);
  const auto& logits = want.at("logits_per_image").second;
  const int e = model.config().embed_dim;
  for (int i = 0; i < 13; ++i) {
    for (int c = 0; c < 28; ++c) {
      double dot = 0, ni = 0, nt = 0;
      for (int k = 0; k < e; ++k) {
        dot += img.embeds[i * e + k] * txt.embeds[c * e + k];
        ni += img.embeds[i * e + k] * img.embeds[i * e + k];
        nt += txt.embeds[c * e + k] * txt.embeds[c * e + k];
      }
      const double logit = model.logit_scale_exp() * dot / std::sqrt(ni * nt);
      EXPECT_NEAR(logit, logits[static_cast<std::size_t>(i * 28 + c)], kLogitTolerance);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllModels, GoldenModel,
                         ::testing::Values("tiny-quickgelu-hf", "tiny-gelu-hf",
                                           "tiny-quickgelu-openclip", "tiny-quickgelu-f16-hf"));

TEST(GoldenModel, ConfigsAreReadFromBothLayouts) {
  auto hf = load_clip_config(kGolden + "models/tiny-gelu-hf");
  EXPECT_EQ(hf.layout, CheckpointLayout::HuggingFace);
  EXPECT_EQ(hf.vision.act, Activation::Gelu);
  EXPECT_EQ(hf.vision.width, 128);
  EXPECT_EQ(hf.text.heads, 4);
  EXPECT_EQ(hf.preprocess.pipeline, PreprocessPipeline::Hf);
  auto oc = load_clip_config(kGolden + "models/tiny-quickgelu-openclip");
  EXPECT_EQ(oc.layout, CheckpointLayout::OpenClip);
  EXPECT_EQ(oc.vision.act, Activation::QuickGelu);
  EXPECT_EQ(oc.vision.heads, 2);
  EXPECT_EQ(oc.embed_dim, 48);
  EXPECT_EQ(oc.preprocess.pipeline, PreprocessPipeline::OpenAi);
}

// Bit-for-bit independence of batch size, batch composition and thread count.
TEST(Determinism, ImagesIndependentOfBatchAndThreads) {
  ClipModel model = ClipModel::load(kGolden + "models/tiny-quickgelu-hf");
  auto pixels = read_safetensors_f32(kGolden + "preprocess.safetensors");
  std::vector<float> px;
  const auto images = manifest()["images"];
  for (const auto& image : images) {
    const auto& t = pixels.at("hf/" + image.get<std::string>()).second;
    px.insert(px.end(), t.begin(), t.end());
  }
  const std::size_t per = 3 * 224 * 224, e = 48;
  const int saved = omp_get_max_threads();
  set_compute_threads(2);
  auto all = model.encode_images(px.data(), 13).embeds;
  for (int batch : {1, 4, 7}) {
    for (int start = 0; start < 13; start += batch) {
      const int n = std::min(batch, 13 - start);
      auto part = model.encode_images(px.data() + start * per, n).embeds;
      for (std::size_t k = 0; k < part.size(); ++k) {
        ASSERT_EQ(part[k], all[start * e + k]) << "batch " << batch << " start " << start;
      }
    }
  }
  set_compute_threads(1);
  auto one_thread = model.encode_images(px.data(), 13).embeds;
  set_compute_threads(saved);
  EXPECT_EQ(one_thread, all);
  EXPECT_EQ(model.encode_images(px.data(), 13).embeds, all);  // run to run
}

TEST(Determinism, TextsIndependentOfBatchCompositionThreadsAndPadding) {
  ClipModel model = ClipModel::load(kGolden + "models/tiny-gelu-hf");
  auto ids = golden_ids();
  const std::size_t e = 48;
  const int saved = omp_get_max_threads();
  set_compute_threads(2);
  auto all = model.encode_texts(ids).embeds;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    auto alone = model.encode_texts({ids[i]}).embeds;
    // Paired with the longest caption (a different padded length).
    auto paired = model.encode_texts({ids.back(), ids[i]}).embeds;
    for (std::size_t k = 0; k < e; ++k) {
      ASSERT_EQ(alone[k], all[i * e + k]) << i;
      ASSERT_EQ(paired[e + k], all[i * e + k]) << i;
    }
  }
  EncodeOptions full;
  full.full_context = true;
  EXPECT_EQ(model.encode_texts(ids, full).embeds, all);  // all 77 positions: same results
  set_compute_threads(1);
  EXPECT_EQ(model.encode_texts(ids).embeds, all);
  set_compute_threads(saved);
}

TEST(Checkpoints, ShardedSafetensorsGiveTheSameModel) {
  namespace fs = std::filesystem;
  const fs::path src = kGolden + "models/tiny-quickgelu-hf";
  const fs::path dir = fs::temp_directory_path() / ("winokit-shards-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (const char* f : {"config.json", "preprocessor_config.json", "vocab.json", "merges.txt"}) {
    fs::copy_file(src / f, dir / f, fs::copy_options::overwrite_existing);
  }
  auto tensors = read_safetensors_f32(src / "model.safetensors");
  std::map<std::string, std::pair<std::vector<std::int64_t>, std::vector<float>>> a, b;
  nlohmann::json map;
  for (auto& [name, t] : tensors) {
    const bool first = name.rfind("text_model", 0) == 0;
    (first ? a : b)[name] = t;
    map[name] = first ? "model-00001-of-00002.safetensors" : "model-00002-of-00002.safetensors";
  }
  write_file_atomic(dir / "model-00001-of-00002.safetensors", encode_safetensors_f32(a));
  write_file_atomic(dir / "model-00002-of-00002.safetensors", encode_safetensors_f32(b));
  write_file_atomic(dir / "model.safetensors.index.json",
                    nlohmann::json{{"weight_map", map}}.dump());
  ClipModel sharded = ClipModel::load(dir);
  ClipModel single = ClipModel::load(src);
  auto ids = golden_ids();
  EXPECT_EQ(sharded.encode_texts(ids).embeds, single.encode_texts(ids).embeds);
  EXPECT_NE(sharded.weights_id(), single.weights_id());
  // A missing tensor is reported by name.
  b.erase("visual_projection.weight");
  write_file_atomic(dir / "model-00002-of-00002.safetensors", encode_safetensors_f32(b));
  map.erase("visual_projection.weight");
  write_file_atomic(dir / "model.safetensors.index.json",
                    nlohmann::json{{"weight_map", map}}.dump());
  try {
    ClipModel::load(dir);
    ADD_FAILURE() << "no error for a missing tensor";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("visual_projection.weight"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("[48, 128]"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

TEST(Checkpoints, PyTorchZipCheckpointGivesTheSameModel) {
  namespace fs = std::filesystem;
  const fs::path src = kGolden + "models/tiny-quickgelu-f16-hf";
  const fs::path dir = fs::temp_directory_path() / ("winokit-torch-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (const char* f : {"config.json", "preprocessor_config.json", "vocab.json", "merges.txt"}) {
    fs::copy_file(src / f, dir / f, fs::copy_options::overwrite_existing);
  }
  // The fixture writer uses only Python's standard library (torch.save's layout and opcodes).
  const std::string cmd =
      "python3 " + std::string(WINOKIT_SOURCE_DIR) + "/tests/fixtures/make_torch_checkpoint.py " +
      (src / "model.safetensors").string() + " " + (dir / "pytorch_model.bin").string();
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  ClipModel from_bin = ClipModel::load(dir);
  ClipModel from_safetensors = ClipModel::load(src);
  auto ids = golden_ids();
  EXPECT_EQ(from_bin.encode_texts(ids).embeds, from_safetensors.encode_texts(ids).embeds);
  EXPECT_EQ(from_bin.logit_scale_exp(), from_safetensors.logit_scale_exp());
  fs::remove_all(dir);
}

TEST(GoldenModel, LegacyConfigDictKeys) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("winokit-legacy-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto cfg = nlohmann::json::parse(read_file(kGolden + "models/tiny-gelu-hf/config.json"));
  cfg["text_config_dict"] = cfg["text_config"];
  cfg["vision_config_dict"] = cfg["vision_config"];
  cfg["text_config"] = nullptr;
  cfg.erase("vision_config");
  write_file_atomic(dir / "config.json", cfg.dump());
  auto c = load_clip_config(dir);
  EXPECT_EQ(c.vision.width, 128);
  EXPECT_EQ(c.vision.act, Activation::Gelu);
  EXPECT_EQ(c.text.heads, 4);
  fs::remove_all(dir);
}

TEST(Heatmap, WordPatchMapsOfAGoldenModel) {
  auto tok = std::make_shared<ClipTokenizer>(
      ClipTokenizer::from_hf(kGolden + "vocab/vocab.json", kGolden + "vocab/merges.txt"));
  EXPECT_EQ(tok->token_text(tok->encode("dogs")[1]), "dogs");
  ClipRuntime rt;
  rt.model = std::make_shared<ClipModel>(ClipModel::load(kGolden + "models/tiny-quickgelu-hf"));
  rt.tokenizer = tok;
  ImageBytes img;
  img.bytes = read_file(kGolden + "images/astronaut_q90.jpg");
  img.source = "astronaut_q90.jpg";
  auto maps = word_patch_maps(rt, img, {"an astronaut in space", "a red cube"});
  EXPECT_EQ(maps.grid, 7);
  ASSERT_EQ(maps.tokens.size(), 2u);
  EXPECT_EQ(maps.tokens[0], (std::vector<std::string>{"an", "astronaut", "in", "space"}));
  for (const auto& map : maps.similarity[0]) {
    ASSERT_EQ(map.size(), 49u);
    for (float v : map)
      EXPECT_LE(std::fabs(v), 1.0f + 1e-6f);
  }
  // Through the model interface: the same tokens, maps scaled to [0, 1] over the 224 px image.
  const std::unique_ptr<VlModel> model = wrap_clip_runtime(rt, "tiny");
  const std::vector<AlignmentMaps> aligned = model->align(img, {"an astronaut in space"});
  ASSERT_EQ(aligned.size(), 1u);
  EXPECT_EQ(aligned[0].tokens, maps.tokens[0]);
  EXPECT_EQ(aligned[0].grid_h * aligned[0].grid_w, 49);
  for (const auto& map : aligned[0].maps) {
    EXPECT_EQ(*std::min_element(map.begin(), map.end()), 0.0f);
    EXPECT_EQ(*std::max_element(map.begin(), map.end()), 1.0f);
  }
  auto png = render_alignment_png(aligned[0], 1);
  EXPECT_EQ(sniff_image_format(png), ImageFormat::Png);
  EXPECT_EQ(decode_image(png, "map.png").width, 224);
}

TEST(ImageDecode, TruncatedJpegIsAnError) {
  const std::string bytes = read_file(kGolden + "images/coffee_progressive.jpg");
  EXPECT_NO_THROW(decode_image(bytes, "ok.jpg"));
  try {
    decode_image(bytes.substr(0, bytes.size() / 2), "images/half.jpg");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("images/half.jpg"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace winokit
