// SigLIP against its standalone reference (tests/fixtures/siglip_reference.py, goldens made by
// make_siglip_golden.py; tests/fixtures/README_siglip_blip.md): the tokenizer id for id, the
// image processor, both towers' features and the logits of tiny-a and tiny-b, with and without
// the padding mask; batch invariance in bits; the config's defaults.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "model/families/siglip/siglip_model.hpp"
#include "model/text/sentencepiece_tokenizer.hpp"
#include "winokit/core/error.hpp"
#include "winokit/core/hash.hpp"
#include "winokit/io/files.hpp"
#include "winokit/io/image_decode.hpp"
#include "winokit/io/safetensors.hpp"
#include "winokit/model/preprocess.hpp"

namespace winokit {
namespace {

namespace fs = std::filesystem;

const fs::path kFixtures = fs::path(WINOKIT_SOURCE_DIR) / "tests/fixtures/siglip";
const fs::path kSharedImages = fs::path(WINOKIT_SHARED_DIR) / "golden/clip/images";
// The README's bars for a correct float32 implementation:
// pixels come from a PIL-exact uint8 resize, so only the float rounding of rescale / normalise
// may differ;
constexpr double kPixelTolerance = 1e-6;
// features and logits: the reference reproduces itself to ~5e-6 in other formulations (batched,
// torch's own attention, float64 NumPy); another GEMM order stays well inside 1e-4.
constexpr double kFeatureTolerance = 1e-4;

using Tensors = std::map<std::string, std::pair<std::vector<std::int64_t>, std::vector<float>>>;

const Tensors& expected() {
  static const Tensors t = read_safetensors_f32(kFixtures / "expected.safetensors");
  return t;
}
const std::vector<float>& want(const std::string& name) {
  auto it = expected().find(name);
  if (it == expected().end()) throw std::runtime_error("no golden tensor " + name);
  return it->second.second;
}

nlohmann::json tokens_json() {
  return nlohmann::json::parse(read_file(kFixtures / "tokens.json"));
}

std::vector<std::string> metadata_list(const std::string& key) {
  // The metadata of expected.safetensors: its header's "__metadata__".
  const std::string bytes = read_file(kFixtures / "expected.safetensors");
  std::uint64_t n = 0;
  std::memcpy(&n, bytes.data(), sizeof n);
  const auto header = nlohmann::json::parse(bytes.substr(8, n));
  return nlohmann::json::parse(header["__metadata__"][key].get<std::string>())
      .get<std::vector<std::string>>();
}

DecodedImage load_image(const std::string& name) {
  const fs::path p = fs::exists(kFixtures / name) ? kFixtures / name : kSharedImages / name;
  return decode_image(read_file(p), p.string());
}

double max_abs_diff(const float* got, const float* ref, std::size_t n) {
  double d = 0;
  for (std::size_t i = 0; i < n; ++i)
    d = std::max(d, std::fabs(static_cast<double>(got[i]) - ref[i]));
  return d;
}

fs::path fresh_dir(const std::string& stem) {
  const fs::path dir = fs::temp_directory_path() / (stem + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

struct Fixture {
  std::string key;  // "a" or "b"
  fs::path dir;
};
const std::vector<Fixture> kBoth = {{"a", kFixtures / "tiny-a"}, {"b", kFixtures / "tiny-b"}};
// With tiny-c: SigLIP 2's layout (Gemma's tokenizer.model, add_eos_token, no lower case).
const std::vector<Fixture> kAll = {
    {"a", kFixtures / "tiny-a"}, {"b", kFixtures / "tiny-b"}, {"c", kFixtures / "tiny-c"}};

std::vector<float> preprocess_all(const SiglipConfig& c, const std::vector<std::string>& names) {
  std::vector<float> px;
  for (const auto& n : names) {
    auto v = siglip_preprocess(load_image(n), c.preprocess);
    px.insert(px.end(), v.begin(), v.end());
  }
  return px;
}

TEST(SiglipTokenizer, PiecesIdsAndMasksExactForEveryCaption) {
  const auto j = tokens_json();
  for (const auto& f : kAll) {
    const SiglipTokenizer tok = SiglipTokenizer::from_directory(f.dir);
    EXPECT_FALSE(tok.uses_attention_mask()) << "google's model_input_names: [input_ids]";
    EXPECT_EQ(tok.max_length(), 64);
    const auto& cases = j[f.key];
    ASSERT_EQ(cases.size(), 12u);
    const auto& ids = want(f.key + "/input_ids");
    const auto& masks = want(f.key + "/attention_mask");
    for (std::size_t c = 0; c < cases.size(); ++c) {
      const std::string text = cases[c]["text"];
      EXPECT_EQ(tok.tokenize(text), cases[c]["pieces"].get<std::vector<std::string>>())
          << f.key << ": " << text;
      const SiglipTokens t = tok.encode(text);
      EXPECT_EQ(t.ids, cases[c]["input_ids"].get<std::vector<int>>()) << f.key << ": " << text;
      EXPECT_EQ(t.mask, cases[c]["attention_mask"].get<std::vector<int>>()) << text;
      for (std::size_t k = 0; k < 64; ++k) {
        ASSERT_EQ(t.ids[k], static_cast<int>(ids[c * 64 + k])) << text;
        ASSERT_EQ(t.mask[k], static_cast<int>(masks[c * 64 + k])) << text;
      }
    }
  }
}

TEST(SiglipTokenizer, Siglip2ReadsGemmasTokenizerWithItsAddedTokens) {
  const SiglipTokenizer tok = SiglipTokenizer::from_directory(kFixtures / "tiny-c");
  EXPECT_EQ(tok.to_json()["kind"], "sentencepiece (GemmaTokenizer)");
  EXPECT_EQ(tok.eos_id(), 1);
  EXPECT_EQ(tok.pad_id(), 0);
  // The added tokens are whole pieces wherever they are (no lstrip / rstrip in this file).
  const auto pieces = tok.tokenize("a<mask>b <eos>");
  ASSERT_GE(pieces.size(), 4u);
  EXPECT_EQ(pieces.back(), "<eos>");
  EXPECT_NE(std::find(pieces.begin(), pieces.end(), "<mask>"), pieces.end());
  // add_bos_token false, add_eos_token true: <eos> once at the end, then <pad>; truncation keeps
  // room for it.
  const SiglipTokens t = tok.encode(std::string(200, 'x'));
  EXPECT_NE(t.ids[0], 2);
  EXPECT_EQ(t.ids[63], 1);
  EXPECT_EQ(std::count(t.ids.begin(), t.ids.end(), 1), 1);
  // No lower case: "A" and "a" differ.
  EXPECT_NE(tok.encode("A").ids[0], tok.encode("a").ids[0]);
}

TEST(SiglipTokenizer, EmptyAndPunctuationOnlyAreAllEos) {
  const SiglipTokenizer tok = SiglipTokenizer::from_directory(kFixtures / "tiny-a");
  EXPECT_EQ(tok.encode("").ids, std::vector<int>(64, 1));
  EXPECT_EQ(tok.encode("?!...").ids, std::vector<int>(64, 1));
}

TEST(SiglipTokenizer, WithoutATokenizerConfigTheClassDefaultsHold) {
  // SiglipTokenizer's own model_input_names lists attention_mask: only google's
  // tokenizer_config.json (["input_ids"]) turns the mask off.
  const fs::path dir =
      fs::temp_directory_path() / ("winokit_siglip_spiece_only_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy_file(kFixtures / "tiny-a" / "spiece.model", dir / "spiece.model");
  const SiglipTokenizer tok = SiglipTokenizer::from_directory(dir);
  EXPECT_TRUE(tok.uses_attention_mask());
  EXPECT_EQ(tok.max_length(), 64);
  EXPECT_EQ(tok.eos_id(), 1);
  EXPECT_EQ(tok.pad_id(), 1);
  EXPECT_EQ(tok.encode("A MAN bites a dog!").ids, tok.encode("a man bites a dog").ids);
  fs::remove_all(dir);
}

TEST(SiglipTokenizer, InvalidUtf8BecomesReplacementCharacters) {
  const SiglipTokenizer tok = SiglipTokenizer::from_directory(kFixtures / "tiny-a");
  // A lone continuation byte, an overlong "/", a surrogate, a truncated sequence: each one
  // U+FFFD (unknown to the vocabulary), never bytes handed on to SentencePiece as they are.
  const SiglipTokens t = tok.encode("a \x80 \xc0\xaf \xed\xa0\x80 dog \xe2\x82");
  EXPECT_EQ(t.ids.size(), 64u);
  EXPECT_EQ(t.ids[0], tok.encode("a").ids[0]);
  EXPECT_EQ(tok.encode("\xff\xfe").ids, tok.encode("\xef\xbf\xbd\xef\xbf\xbd").ids);
}

TEST(SiglipPreprocess, PixelValuesWithinOneMillionthForBothFilters) {
  const auto images = metadata_list("images");
  ASSERT_EQ(images.size(), 5u);
  double worst = 0;
  for (const auto& f : kBoth) {
    const SiglipConfig c = load_siglip_config(f.dir);
    EXPECT_EQ(c.preprocess.resample, f.key == "a" ? 3 : 2);
    for (const auto& name : images) {
      const auto got = siglip_preprocess(load_image(name), c.preprocess);
      const auto& ref = want(f.key + "/pixel_values/" + name);
      ASSERT_EQ(got.size(), ref.size());
      const double d = max_abs_diff(got.data(), ref.data(), ref.size());
      EXPECT_LE(d, kPixelTolerance) << f.key << " " << name;
      worst = std::max(worst, d);
    }
  }
  RecordProperty("max_pixel_error", std::to_string(worst));
  std::printf("max pixel error %.3g\n", worst);
}

TEST(SiglipPreprocess, OwnBicubicResamplerMatchesTheClipPipelinesBitForBit) {
  // siglip_pil_resize carries PIL's coefficients for both filters; its bicubic must give the
  // CLIP pipeline's (tested) resampler's bytes, up- and downscaling.
  for (const std::string name :
       {"chelsea_odd.jpg", "rocket_gray.jpg", "synthetic_rgba_20x15.png"}) {
    const DecodedImage rgb = to_rgb(load_image(name));
    for (auto [w, h] : {std::pair{64, 64}, std::pair{37, 90}, std::pair{301, 11}}) {
      EXPECT_EQ(siglip_pil_resize(rgb, w, h, 3).pixels, pil_resize(rgb, w, h).pixels)
          << name << " " << w << "x" << h;
    }
  }
}

void expect_features(const Fixture& f, const SiglipModel& m, const SiglipTokenizer& tok,
                     bool masked, double& worst) {
  const auto images = metadata_list("images");
  const auto captions = metadata_list("captions");
  const SiglipConfig& c = m.config();
  const int D = c.embed_dim();
  const std::vector<float> px = preprocess_all(c, images);
  const std::vector<float> img = m.encode_images(px.data(), static_cast<int>(images.size()));
  std::vector<SiglipTokens> tokens;
  for (const auto& t : captions)
    tokens.push_back(tok.encode(t));
  const std::vector<float> txt = m.encode_texts(tokens, masked);
  const std::string p = f.key + "/" + (masked ? "masked/" : "");
  if (!masked) {
    const double d = max_abs_diff(img.data(), want(f.key + "/image_features").data(), img.size());
    EXPECT_LE(d, kFeatureTolerance) << f.key << " image_features";
    worst = std::max(worst, d);
  }
  const double dt = max_abs_diff(txt.data(), want(p + "text_features").data(), txt.size());
  EXPECT_LE(dt, kFeatureTolerance) << p << "text_features";
  worst = std::max(worst, dt);
  const auto& logits = want(p + "logits_per_image");
  const auto& probs = want(f.key + "/probs_per_image");
  for (std::size_t i = 0; i < images.size(); ++i) {
    for (std::size_t t = 0; t < captions.size(); ++t) {
      const double s = m.score(&txt[t * D], &img[i * D]);
      const double ref = logits[i * captions.size() + t];
      EXPECT_NEAR(s, ref, kFeatureTolerance) << p << " image " << i << " caption " << t;
      worst = std::max(worst, std::fabs(s - ref));
      if (!masked) {
        EXPECT_NEAR(1.0 / (1.0 + std::exp(-s)), probs[i * captions.size() + t], kFeatureTolerance);
      }
    }
  }
}

TEST(SiglipModel, FeaturesAndLogitsMatchTheReferenceForEveryFixture) {
  double worst = 0;
  for (const auto& f : kAll) {
    const SiglipModel m = SiglipModel::load(f.dir);
    const SiglipTokenizer tok = SiglipTokenizer::from_directory(f.dir);
    expect_features(f, m, tok, /*masked=*/false, worst);
  }
  std::printf("max feature / logit error %.3g\n", worst);
}

// A copy of the fixture whose tokenizer_config lists attention_mask (what the masked goldens
// are).
fs::path masked_copy(const Fixture& f) {
  const fs::path dir = fs::temp_directory_path() /
                       ("winokit_siglip_masked_" + f.key + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const auto& e : fs::directory_iterator(f.dir))
    fs::copy_file(e.path(), dir / e.path().filename());
  auto tc = nlohmann::json::parse(read_file(dir / "tokenizer_config.json"));
  tc["model_input_names"] = {"input_ids", "attention_mask"};
  std::ofstream(dir / "tokenizer_config.json") << tc.dump(2);
  return dir;
}

TEST(SiglipModel, WithTheMaskWhenTheTokenizerConfigAsksForIt) {
  double worst = 0;
  for (const auto& f : kBoth) {
    const fs::path dir = masked_copy(f);
    const SiglipTokenizer tok = SiglipTokenizer::from_directory(dir);
    EXPECT_TRUE(tok.uses_attention_mask());
    const SiglipModel m = SiglipModel::load(dir);
    expect_features(f, m, tok, /*masked=*/true, worst);
    fs::remove_all(dir);
  }
  std::printf("max masked feature / logit error %.3g\n", worst);
}

TEST(SiglipModel, BatchInvariantInBits) {
  const Fixture& f = kBoth[0];
  const SiglipModel m = SiglipModel::load(f.dir);
  const SiglipTokenizer tok = SiglipTokenizer::from_directory(f.dir);
  const auto images = metadata_list("images");
  const auto captions = metadata_list("captions");
  const int D = m.config().embed_dim();
  const std::size_t floats = 3ull * 64 * 64;
  const std::vector<float> px = preprocess_all(m.config(), images);
  const std::vector<float> all = m.encode_images(px.data(), 5);
  for (int i = 0; i < 5; ++i) {
    const std::vector<float> one = m.encode_images(px.data() + i * floats, 1);
    EXPECT_EQ(0, std::memcmp(one.data(), &all[static_cast<std::size_t>(i) * D], D * sizeof(float)))
        << "image " << i << " alone";
  }
  for (int s = 0; s + 3 <= 5; s += 2) {
    const std::vector<float> three = m.encode_images(px.data() + s * floats, 3);
    EXPECT_EQ(
        0, std::memcmp(three.data(), &all[static_cast<std::size_t>(s) * D], 3 * D * sizeof(float)))
        << "images " << s << ".." << s + 2;
  }
  std::vector<SiglipTokens> tokens;
  for (const auto& t : captions)
    tokens.push_back(tok.encode(t));
  for (bool masked : {false, true}) {
    const std::vector<float> every = m.encode_texts(tokens, masked);
    for (std::size_t c = 0; c < tokens.size(); ++c) {
      const std::vector<float> one = m.encode_texts({tokens[c]}, masked);
      EXPECT_EQ(0, std::memcmp(one.data(), &every[c * D], D * sizeof(float)))
          << "caption " << c << (masked ? " masked" : "");
    }
    const std::vector<float> three = m.encode_texts({tokens[4], tokens[5], tokens[6]}, masked);
    EXPECT_EQ(0, std::memcmp(three.data(), &every[4 * static_cast<std::size_t>(D)],
                             3 * D * sizeof(float)));
  }
}

TEST(SiglipModel, ShardedCheckpointGivesTheSameBits) {
  // model.safetensors.index.json over two shards (text / the rest), as large checkpoints come.
  const fs::path dir = fresh_dir("winokit_siglip_sharded");
  const fs::path src = kFixtures / "tiny-a";
  for (const char* f : {"config.json", "preprocessor_config.json"})
    fs::copy_file(src / f, dir / f);
  Tensors text, rest;
  nlohmann::json map = nlohmann::json::object();
  for (auto& [name, t] : read_safetensors_f32(src / "model.safetensors")) {
    const bool is_text = name.rfind("text_model.", 0) == 0;
    (is_text ? text : rest)[name] = t;
    map[name] = is_text ? "model-00001-of-00002.safetensors" : "model-00002-of-00002.safetensors";
  }
  std::ofstream(dir / "model-00001-of-00002.safetensors", std::ios::binary)
      << encode_safetensors_f32(text);
  std::ofstream(dir / "model-00002-of-00002.safetensors", std::ios::binary)
      << encode_safetensors_f32(rest);
  std::ofstream(dir / "model.safetensors.index.json") << nlohmann::json{{"weight_map", map}}.dump();
  const SiglipModel whole = SiglipModel::load(src);
  const SiglipModel sharded = SiglipModel::load(dir);
  const auto px = preprocess_all(whole.config(), {"chelsea_odd.jpg"});
  EXPECT_EQ(whole.encode_images(px.data(), 1), sharded.encode_images(px.data(), 1));
  const SiglipTokenizer tok = SiglipTokenizer::from_directory(src);
  EXPECT_EQ(whole.encode_texts({tok.encode("a dog")}, false),
            sharded.encode_texts({tok.encode("a dog")}, false));
  EXPECT_EQ(whole.logit_bias(), sharded.logit_bias());
  fs::remove_all(dir);
}

TEST(SiglipConfig, UnlistedValuesAreSiglipsDefaultsNotClips) {
  const auto defaults = nlohmann::json::parse(read_file(kFixtures / "siglip_defaults.json"));
  const auto& td = defaults["text_config"];
  const auto& vd = defaults["vision_config"];
  const auto& pd = defaults["preprocessor_config"];
  // Nothing listed: every value is the default.
  const SiglipConfig c =
      siglip_config_from_json(nlohmann::json::object(), nlohmann::json(), "config.json");
  EXPECT_EQ(c.vocab_size, td["vocab_size"].get<int>());
  EXPECT_EQ(c.text.hidden, td["hidden_size"].get<int>());
  EXPECT_EQ(c.text.mlp, td["intermediate_size"].get<int>());
  EXPECT_EQ(c.text.layers, td["num_hidden_layers"].get<int>());
  EXPECT_EQ(c.text.heads, td["num_attention_heads"].get<int>());
  EXPECT_EQ(c.max_positions, td["max_position_embeddings"].get<int>());
  EXPECT_EQ(c.text.act, td["hidden_act"].get<std::string>());
  EXPECT_EQ(c.text.eps, td["layer_norm_eps"].get<double>());
  EXPECT_TRUE(td["projection_size"].is_null());
  EXPECT_EQ(c.projection_size, c.text.hidden);
  EXPECT_EQ(c.vision.hidden, vd["hidden_size"].get<int>());
  EXPECT_EQ(c.vision.mlp, vd["intermediate_size"].get<int>());
  EXPECT_EQ(c.vision.layers, vd["num_hidden_layers"].get<int>());
  EXPECT_EQ(c.vision.heads, vd["num_attention_heads"].get<int>());
  EXPECT_EQ(c.channels, vd["num_channels"].get<int>());
  EXPECT_EQ(c.image_size, vd["image_size"].get<int>());
  EXPECT_EQ(c.patch, vd["patch_size"].get<int>());
  EXPECT_EQ(c.vision.act, vd["hidden_act"].get<std::string>());
  EXPECT_EQ(c.vision.eps, vd["layer_norm_eps"].get<double>());
  EXPECT_EQ(c.preprocess.height, pd["size"]["height"].get<int>());
  EXPECT_EQ(c.preprocess.width, pd["size"]["width"].get<int>());
  EXPECT_EQ(c.preprocess.resample, pd["resample"].get<int>());
  EXPECT_EQ(c.preprocess.rescale_factor, pd["rescale_factor"].get<double>());
  EXPECT_EQ(c.preprocess.mean[0], pd["image_mean"][0].get<float>());
  EXPECT_EQ(c.preprocess.std[2], pd["image_std"][2].get<float>());
  EXPECT_TRUE(c.preprocess.do_resize && c.preprocess.do_rescale && c.preprocess.do_normalize);
  // A few values listed, as google's files: the rest stays SigLIP's (CLIP's would be 512 / 2048
  // / 8 heads / 77 positions / quick_gelu / 1e-5).
  const auto partial = nlohmann::json::parse(R"({
    "model_type": "siglip",
    "text_config": {"hidden_size": 1152, "intermediate_size": 4304, "num_hidden_layers": 27,
                    "num_attention_heads": 16},
    "vision_config": {"hidden_size": 1152, "intermediate_size": 4304, "num_hidden_layers": 27,
                      "num_attention_heads": 16, "image_size": 384, "patch_size": 14}})");
  const auto pp = nlohmann::json::parse(R"({"size": {"height": 384, "width": 384}})");
  const SiglipConfig so = siglip_config_from_json(partial, pp, "config.json");
  EXPECT_EQ(so.text.hidden, 1152);
  EXPECT_EQ(so.projection_size, 1152);
  EXPECT_EQ(so.vocab_size, 32000);
  EXPECT_EQ(so.max_positions, 64);
  EXPECT_EQ(so.text.act, "gelu_pytorch_tanh");
  EXPECT_EQ(so.text.eps, 1e-6);
  EXPECT_EQ(so.patches(), 27 * 27);
  EXPECT_EQ(so.preprocess.resample, 3);
  EXPECT_EQ(so.preprocess.mean[1], 0.5f);
  // The fixtures: tiny-b lists layer_norm_eps 1e-5 for the text only.
  const SiglipConfig b = load_siglip_config(kFixtures / "tiny-b");
  EXPECT_EQ(b.text.eps, 1e-5);
  EXPECT_EQ(b.vision.eps, 1e-6);
  EXPECT_EQ(b.projection_size, 32);
  const SiglipConfig a = load_siglip_config(kFixtures / "tiny-a");
  EXPECT_EQ(a.projection_size, 40);
  EXPECT_EQ(a.patch, 16);
  EXPECT_EQ(a.patches(), 16);
}

TEST(SiglipConfig, BadValuesAreRefusedNamingTheField) {
  auto field_of = [](const std::string& config, const std::string& pp = "{}") {
    try {
      siglip_config_from_json(nlohmann::json::parse(config), nlohmann::json::parse(pp));
    } catch (const InputError& e) {
      return e.location().field;
    }
    return std::string("(accepted)");
  };
  EXPECT_EQ(field_of(R"({"text_config": {"hidden_size": 40, "num_attention_heads": 3}})"),
            "text_config.num_attention_heads");
  EXPECT_EQ(field_of(R"({"text_config": {"hidden_act": "relu"}})"), "text_config.hidden_act");
  EXPECT_EQ(field_of(R"({"vision_config": {"hidden_size": 5000000}})"),
            "vision_config.hidden_size");
  EXPECT_EQ(field_of(R"({"text_config": {"projection_size": 512}})"),
            "text_config.projection_size");
  EXPECT_EQ(field_of(R"({"vision_config": {"vision_use_head": false}})"),
            "vision_config.vision_use_head");
  EXPECT_EQ(field_of(R"({"vision_config": {"patch_size": 300}})"), "vision_config.patch_size");
  EXPECT_EQ(field_of("{}", R"({"resample": 0})"), "resample");
  EXPECT_EQ(field_of("{}", R"({"size": {"height": 256, "width": 256}})"), "size");
}

TEST(SiglipModel, AMisshapenTensorIsNamedWithBothShapes) {
  const fs::path dir =
      fs::temp_directory_path() / ("winokit_siglip_bad_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const auto& e : fs::directory_iterator(kFixtures / "tiny-a"))
    fs::copy_file(e.path(), dir / e.path().filename());
  auto cfg = nlohmann::json::parse(read_file(dir / "config.json"));
  cfg["text_config"]["intermediate_size"] = 64;
  std::ofstream(dir / "config.json") << cfg.dump();
  try {
    SiglipModel::load(dir);
    ADD_FAILURE() << "loaded";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("text_model.encoder.layers.0.mlp.fc1"), std::string::npos) << msg;
    EXPECT_NE(msg.find("64"), std::string::npos) << msg;
    EXPECT_NE(msg.find("60"), std::string::npos) << msg;
  }
  fs::remove_all(dir);
}

// ---- the VlModel adapter (open_siglip) ----

std::vector<ImageRequest> image_requests() {
  std::vector<ImageRequest> out;
  for (const auto& n : metadata_list("images")) {
    const fs::path p = fs::exists(kFixtures / n) ? kFixtures / n : kSharedImages / n;
    out.push_back(image_file_request(p.string(), n));
  }
  return out;
}

std::vector<PairIndex> every_pair(std::size_t captions, std::size_t images) {
  std::vector<PairIndex> pairs;
  for (std::size_t i = 0; i < images; ++i)
    for (std::size_t c = 0; c < captions; ++c)
      pairs.emplace_back(c, i);
  return pairs;
}

TEST(SiglipAdapter, RecognisesSiglipFoldersOnly) {
  EXPECT_TRUE(is_siglip_checkpoint(kFixtures / "tiny-a"));
  EXPECT_TRUE(is_siglip_checkpoint(kFixtures / "tiny-b"));
  EXPECT_FALSE(
      is_siglip_checkpoint(fs::path(WINOKIT_SHARED_DIR) / "golden/clip/models/tiny-gelu-hf"));
  EXPECT_FALSE(is_siglip_checkpoint(kFixtures / "tiny-a" / "config.json"));
  EXPECT_FALSE(is_siglip_checkpoint(kFixtures / "no-such-folder"));
}

TEST(SiglipAdapter, ScorePairsAreTheLogitsAndASecondRunIsFullyCached) {
  const auto captions = metadata_list("captions");
  const auto images = image_requests();
  const auto pairs = every_pair(captions.size(), images.size());
  double worst = 0;
  for (const auto& f : kAll) {
    const fs::path cache = fresh_dir("winokit_siglip_cache_" + f.key);
    ModelOptions o;
    o.cache_dir = cache;
    o.batch_size = 2;  // several batches: read-ahead and batching on the way
    std::vector<std::string> stages;
    o.on_progress = [&](const std::string& stage, std::size_t, std::size_t) {
      stages.push_back(stage);
    };
    const auto model = open_siglip(f.dir, o);
    EXPECT_EQ(model->family(), "siglip");
    EXPECT_EQ(model->name(), f.dir.filename().string());
    EXPECT_TRUE(model->can(Ability::PairScores));
    EXPECT_TRUE(model->can(Ability::Embeddings));
    EXPECT_FALSE(model->can(Ability::States));
    ASSERT_NE(model->dual_encoder(), nullptr);
    EXPECT_EQ(model->dual_encoder()->embed_dim(), f.key == "a" ? 40 : f.key == "b" ? 32 : 28);
    EmbedStats first;
    const auto s = model->score_pairs(images, captions, pairs, &first);
    EXPECT_EQ(first.images_computed, 5u);
    EXPECT_EQ(first.texts_computed, 12u);
    EXPECT_EQ(first.images_cached + first.texts_cached, 0u);
    EXPECT_NE(std::find(stages.begin(), stages.end(), "images"), stages.end());
    EXPECT_NE(std::find(stages.begin(), stages.end(), "captions"), stages.end());
    const auto& logits = want(f.key + "/logits_per_image");
    ASSERT_EQ(s.size(), pairs.size());
    for (std::size_t p = 0; p < pairs.size(); ++p) {
      const double ref = logits[pairs[p].second * captions.size() + pairs[p].first];
      EXPECT_NEAR(s[p], ref, kFeatureTolerance) << f.key << " pair " << p;
      worst = std::max(worst, std::fabs(s[p] - ref));
    }
    // A new model on the same cache: nothing is computed, the scores are the same bits.
    const auto again = open_siglip(f.dir, o);
    EmbedStats second;
    const auto s2 = again->score_pairs(images, captions, pairs, &second);
    EXPECT_EQ(second.images_computed + second.texts_computed, 0u);
    EXPECT_EQ(second.images_cached, 5u);
    EXPECT_EQ(second.texts_cached, 12u);
    EXPECT_EQ(s2, s);
    // Without the cache, in batches of 32: the same bits again, all computed.
    ModelOptions plain;
    plain.use_cache = false;
    plain.cache_dir = cache;
    EmbedStats third;
    EXPECT_EQ(open_siglip(f.dir, plain)->score_pairs(images, captions, pairs, &third), s);
    EXPECT_EQ(third.images_computed, 5u);
    EXPECT_EQ(third.texts_cached, 0u);
    // Provenance.
    const auto d = model->describe();
    EXPECT_EQ(d["kind"], "siglip");
    EXPECT_EQ(d["weights_sha256"], sha256_hex(read_file(f.dir / "model.safetensors")));
    if (f.key == "c") {
      EXPECT_EQ(d["tokenizer"]["tokenizer_model_sha256"],
                sha256_hex(read_file(f.dir / "tokenizer.model")));
    } else {
      EXPECT_EQ(d["tokenizer"]["spiece_sha256"], sha256_hex(read_file(f.dir / "spiece.model")));
    }
    EXPECT_EQ(d["tokenizer"]["attention_mask"], false);
    EXPECT_NE(d["score"].get<std::string>().find("logit_bias"), std::string::npos);
    EXPECT_NE(d["score"].get<std::string>().find("sigmoid"), std::string::npos);
    EXPECT_EQ(d["preprocess"]["resample"], f.key == "a" ? "PIL bicubic" : "PIL bilinear");
    EXPECT_TRUE(d.contains("compute") && d.contains("threads") && d.contains("config"));
    fs::remove_all(cache);
  }
  std::printf("max adapter logit error %.3g\n", worst);
}

TEST(SiglipAdapter, TheMaskedCheckpointScoresWithTheMask) {
  const auto captions = metadata_list("captions");
  const auto images = image_requests();
  const auto pairs = every_pair(captions.size(), images.size());
  const fs::path dir = masked_copy(kBoth[0]);
  ModelOptions o;
  o.use_cache = false;
  const auto model = open_siglip(dir, o);
  EXPECT_EQ(model->describe()["tokenizer"]["attention_mask"], true);
  const auto s = model->score_pairs(images, captions, pairs);
  const auto& logits = want("a/masked/logits_per_image");
  for (std::size_t p = 0; p < pairs.size(); ++p)
    EXPECT_NEAR(s[p], logits[pairs[p].second * captions.size() + pairs[p].first],
                kFeatureTolerance);
  fs::remove_all(dir);
}

TEST(SiglipAdapter, RefusesOptionsItHasNoUseFor) {
  auto message = [](ModelOptions o) {
    o.use_cache = false;
    try {
      open_model(kFixtures / "tiny-a", o);  // the registry refuses family-specific options
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  ModelOptions p;
  p.preprocess = "hf";
  // The families that take --preprocess are named (CLIP's among them), then this one.
  EXPECT_NE(message(p).find("--preprocess is for "), std::string::npos) << message(p);
  EXPECT_NE(message(p).find("clip models; tiny-a is a siglip model"), std::string::npos)
      << message(p);
  ModelOptions s;
  s.settings = {{"answer", "Yes"}};
  // The VQAScore families that take it are named, then this one.
  EXPECT_NE(message(s).find("--model-option answer is for smolvlm"), std::string::npos)
      << message(s);
  EXPECT_NE(message(s).find(" models; tiny-a is a siglip model"), std::string::npos) << message(s);
  EXPECT_NE(message(s).find("siglip models take no --model-option"), std::string::npos)
      << message(s);
  ModelOptions t;
  t.tokenizer = "vocab.json";
  EXPECT_NE(message(t).find("--tokenizer"), std::string::npos) << message(t);
  ModelOptions h;
  h.head = "itm";
  EXPECT_NE(message(h).find("--head"), std::string::npos) << message(h);
  // A batch whose working memory cannot fit is refused before anything is allocated.
  ModelOptions huge;
  huge.use_cache = false;
  huge.batch_size = 1 << 30;
  EXPECT_THROW(
      open_siglip(kFixtures / "tiny-a", huge)->score_pairs(image_requests(), {"a dog"}, {{0, 0}}),
      UsageError);
  // And states (probes) through the dual encoder.
  ModelOptions plain;
  plain.use_cache = false;
  const auto model = open_siglip(kFixtures / "tiny-a", plain);
  EncodeOptions states;
  states.hidden_states = true;
  EXPECT_THROW(model->dual_encoder()->embed_texts({"a dog"}, nullptr, states), UsageError);
}

}  // namespace
}  // namespace winokit
