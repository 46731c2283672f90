// The engine's building blocks against plain reference implementations, and their error paths.
#include <gtest/gtest.h>

#include <zip.h>

#include <cmath>

#include "model/gemm.hpp"
#include "test_util.hpp"
#include "winokit/clip.hpp"
#include "winokit/embedding_cache.hpp"
#include "winokit/error.hpp"
#include "winokit/files.hpp"
#include "winokit/hash.hpp"
#include "winokit/image.hpp"
#include "winokit/png_writer.hpp"
#include "winokit/rng.hpp"
#include "winokit/safetensors.hpp"
#include "winokit/tokenizer.hpp"

namespace winokit {
namespace fs = std::filesystem;
namespace {

std::vector<float> random_vector(std::size_t n, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<float> v(n);
  for (auto& x : v)
    x = static_cast<float>(rng.uniform() * 2 - 1);
  return v;
}

TEST(Gemm, MatchesPlainReferenceAndRowsDoNotDependOnM) {
  constexpr int kN = 96, kK = 200;
  auto w = random_vector(kN * kK, 1), b = random_vector(kN, 2);
  detail::Linear layer(w, b, kN, kK);
  auto x = random_vector(333 * kK, 3);
  std::vector<float> all(333 * kN);
  layer.forward(x.data(), 333, all.data());
  std::vector<float> ref(all.size());
  detail::reference_linear(x.data(), 333, w, b, kN, kK, ref.data());
  for (std::size_t i = 0; i < all.size(); ++i) {
    // float32 accumulation over K = 200 terms of magnitude <= 1: well within 1e-4.
    ASSERT_NEAR(all[i], ref[i], 1e-4) << i;
  }
  for (int m : {1, 3, 16, 50, 77}) {
    std::vector<float> part(static_cast<std::size_t>(m) * kN);
    layer.forward(x.data() + 5 * kK, m, part.data());
    for (std::size_t i = 0; i < part.size(); ++i)
      ASSERT_EQ(part[i], all[5 * kN + i]) << "M=" << m;
  }
}

TEST(Gemm, AccumulateAddsToTheOutput) {
  auto w = random_vector(8 * 4, 4);
  detail::Linear plain(w, {}, 8, 4), acc(w, {}, 8, 4, detail::PostOp::None, true);
  auto x = random_vector(20 * 4, 5);
  std::vector<float> y(20 * 8), z(20 * 8, 1.0f);
  plain.forward(x.data(), 20, y.data());
  acc.forward(x.data(), 20, z.data());
  for (std::size_t i = 0; i < y.size(); ++i)
    EXPECT_FLOAT_EQ(z[i], y[i] + 1.0f);
}

TEST(Attention, BatchedMatchesPlainSoftmaxAttention) {
  constexpr int kSeqs = 3, kLen = 17, kWidth = 32, kHeads = 4, kD = kWidth / kHeads;
  auto qkv = random_vector(kSeqs * kLen * 3 * kWidth, 6);
  std::vector<float> out(kSeqs * kLen * kWidth);
  detail::BatchedAttention().run(qkv.data(), kSeqs, kLen, kWidth, kHeads, out.data());
  for (int s = 0; s < kSeqs; ++s) {
    for (int h = 0; h < kHeads; ++h) {
      for (int i = 0; i < kLen; ++i) {
        auto at = [&](int t, int part, int k) {
          return qkv[(static_cast<std::size_t>(s) * kLen + t) * 3 * kWidth + part * kWidth +
                     h * kD + k];
        };
        std::vector<double> p(kLen);
        double mx = -1e300, sum = 0;
        for (int j = 0; j < kLen; ++j) {
          double dot = 0;
          for (int k = 0; k < kD; ++k)
            dot += at(i, 0, k) * at(j, 1, k);
          p[static_cast<std::size_t>(j)] = dot / std::sqrt(static_cast<double>(kD));
          mx = std::max(mx, p[static_cast<std::size_t>(j)]);
        }
        for (auto& v : p)
          sum += (v = std::exp(v - mx));
        for (int k = 0; k < kD; ++k) {
          double o = 0;
          for (int j = 0; j < kLen; ++j)
            o += p[static_cast<std::size_t>(j)] / sum * at(j, 2, k);
          ASSERT_NEAR(out[(static_cast<std::size_t>(s) * kLen + i) * kWidth + h * kD + k], o, 1e-5);
        }
      }
    }
  }
}

TEST(SafeTensors, RoundTripAndHalfPrecision) {
  test::TempDir dir;
  auto file =
      dir.write("t.safetensors",
                encode_safetensors_f32({{"a", {{2, 3}, {1, 2, 3, 4, 5, 6}}}, {"b", {{1}, {7}}}},
                                       {{"note", "x"}}));
  auto st = SafeTensors::open(file);
  EXPECT_EQ(st.to_float("a", {2, 3}), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(st.content_hash(), sha256_file(file));
  EXPECT_FLOAT_EQ(half_to_float(0x3C00), 1.0f);
  EXPECT_FLOAT_EQ(half_to_float(0xC000), -2.0f);
  EXPECT_FLOAT_EQ(half_to_float(0x7BFF), 65504.0f);
  EXPECT_FLOAT_EQ(half_to_float(0x0001), 5.9604645e-8f);
  EXPECT_TRUE(std::isinf(half_to_float(0x7C00)));
  EXPECT_FLOAT_EQ(bfloat16_to_float(0x3F80), 1.0f);
  EXPECT_FLOAT_EQ(bfloat16_to_float(0xC0A0), -5.0f);
}

TEST(SafeTensors, ErrorsNameTheTensorAndBothShapes) {
  test::TempDir dir;
  auto file =
      dir.write("t.safetensors", encode_safetensors_f32({{"w", {{2, 3}, std::vector<float>(6)}}}));
  auto st = SafeTensors::open(file);
  try {
    st.get("visual.proj", {768, 512});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(
        std::string(e.what()).find("'visual.proj': tensor missing (expected shape [768, 512])"),
        std::string::npos)
        << e.what();
  }
  try {
    st.get("w", {3, 2});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'w': expected shape [3, 2], found [2, 3]"),
              std::string::npos)
        << e.what();
  }
  std::string bytes = read_file(file);
  auto truncated = dir.write("cut.safetensors", bytes.substr(0, bytes.size() - 4));
  EXPECT_THROW(SafeTensors::open(truncated), InputError);
  EXPECT_THROW(SafeTensors::open(dir.write("tiny.safetensors", "abc")), InputError);
  auto index = dir.write("model.safetensors.index.json",
                         R"({"weight_map": {"w": "t.safetensors", "gone": "t.safetensors"}})");
  EXPECT_THROW(SafeTensors::open(index), InputError);
  auto missing = dir.write("m.index.json", R"({"weight_map": {"w": "nope.safetensors"}})");
  EXPECT_THROW(SafeTensors::open(missing), IoError);
}

// A zip with one data.pkl, as torch.save writes it.
std::filesystem::path torch_zip(const test::TempDir& dir, const std::string& name,
                                const std::string& pickle) {
  const auto path = dir.path() / name;
  int err = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  zip_source_t* s = zip_source_buffer(z, pickle.data(), pickle.size(), 0);
  zip_file_add(z, "archive/data.pkl", s, 0);
  zip_close(z);
  return path;
}

TEST(TorchCheckpoint, RefusesAnythingButTensors) {
  test::TempDir dir;
  // pickle.dumps(os.system('ls')): GLOBAL os.system, then REDUCE.
  using namespace std::string_literals;
  const std::string hostile = "\x80\x02"s + "cos\nsystem\n" + "q\x00"s + "X\x02\x00\x00\x00"s +
                              "ls" + "q\x01"s + "\x85" + "R.";
  try {
    SafeTensors::open_torch(torch_zip(dir, "evil.bin", hostile));
    FAIL() << "a hostile pickle was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("refusing to load os.system"), std::string::npos)
        << e.what();
  }
  // builtins.eval through STACK_GLOBAL (protocol 4) is refused too.
  const std::string stack_global =
      "\x80\x04"s + "\x8c\x08" + "builtins" + "\x8c\x04" + "eval" + "\x93.";
  EXPECT_THROW(SafeTensors::open_torch(torch_zip(dir, "evil2.bin", stack_global)), InputError);
  EXPECT_THROW(SafeTensors::open_torch(torch_zip(dir, "empty.bin", "\x80\x02"s + "}.")),
               InputError);  // no tensors
  EXPECT_THROW(SafeTensors::open_torch(dir.write("old.bin", "not a zip")), InputError);
}

TEST(Tokenizer, HtmlUnescapeLikePython) {
  EXPECT_EQ(html_unescape("&amp; &lt;b&gt; &quot;x&quot; &#39;y&#x27;"), "& <b> \"x\" 'y'");
  EXPECT_EQ(html_unescape("&amp"), "&");
  EXPECT_EQ(html_unescape("&ampx &notit;"), "&x \xC2\xACit;");
  EXPECT_EQ(html_unescape("&unknown; & alone"), "&unknown; & alone");
  EXPECT_EQ(html_unescape("&#0;"), "\xEF\xBF\xBD");
  EXPECT_EQ(html_unescape("&#128;"), "\xE2\x82\xAC");
  EXPECT_EQ(html_unescape("&eacute;l&egrave;ve"), "\xC3\xA9l\xC3\xA8ve");
}

TEST(Tokenizer, CleaningAndPreTokens) {
  EXPECT_EQ(ClipTokenizer::clean("  It\xE2\x80\x99s   A\tDog&amp;Cat\n"), "it's a dog&cat");
  EXPECT_EQ(ClipTokenizer::pre_tokenize("it's the kid's 2nd ball!!"),
            (std::vector<std::string>{"it", "'s", "the", "kid", "'s", "2", "nd", "ball", "!!"}));
  EXPECT_EQ(ClipTokenizer::pre_tokenize("<|endoftext|>x"),
            (std::vector<std::string>{"<|endoftext|>", "x"}));
  EXPECT_THROW(ClipTokenizer::clean("bad \xC3"), UsageError);
}

TEST(Tokenizer, ByteLevelNeedsNoFiles) {
  auto tok = ClipTokenizer::byte_level();
  auto ids = tok.encode("ab");
  // start, 'a' (a plain symbol), 'b</w>' (symbols then symbols with </w>), end.
  ASSERT_EQ(ids.size(), 4u);
  EXPECT_EQ(ids.front(), 49406);
  EXPECT_EQ(ids.back(), 49407);
  EXPECT_LT(ids[1], 256);
  EXPECT_GE(ids[2], 256);
  auto longest = tok.encode(std::string(200, 'x'));
  EXPECT_EQ(longest.size(), 77u);
  EXPECT_EQ(longest.back(), 49407);
}

TEST(ImageDecode, PngRoundTripAndCorruptFilesNamed) {
  std::vector<std::uint8_t> rgb(7 * 5 * 3);
  for (std::size_t i = 0; i < rgb.size(); ++i)
    rgb[i] = static_cast<std::uint8_t>(i * 7);
  std::string png = encode_png_rgb8(rgb, 7, 5);
  auto im = decode_image(png, "ok.png");
  EXPECT_EQ(im.mode, PixelMode::RGB);
  EXPECT_EQ(im.width, 7);
  EXPECT_EQ(im.pixels, rgb);
  try {
    decode_image(png.substr(0, png.size() / 2), "images/ex_3_img_1.png");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("images/ex_3_img_1.png"), std::string::npos);
  }
  EXPECT_THROW(decode_image(std::string("hello"), "x.png"), InputError);
  EXPECT_THROW(decode_image(std::string("\xFF\xD8\xFF\xE0garbage", 11), "x.jpg"), InputError);
  EXPECT_THROW(decode_image(std::string(""), "empty.png"), InputError);
}

TEST(ImageDecode, ResizeIsIdentityAtTheSameSizeAndPreprocessShape) {
  std::vector<std::uint8_t> rgb(300 * 200 * 3, 128);
  auto im = decode_image(encode_png_rgb8(rgb, 300, 200), "flat.png");
  auto same = pil_resize(im, 300, 200);
  EXPECT_EQ(same.pixels, im.pixels);
  // A flat image stays flat through bicubic resampling.
  auto small = pil_resize(im, 100, 67);
  for (auto v : small.pixels)
    ASSERT_EQ(v, 128);
  PreprocessConfig cfg;
  auto chw = preprocess(im, cfg);
  EXPECT_EQ(chw.size(), 3u * 224 * 224);
  EXPECT_NEAR(chw[0], (128.0 / 255.0 - cfg.mean[0]) / cfg.std[0], 1e-6);
}

TEST(EmbeddingCache, HitsAndDetectsCorruption) {
  test::TempDir dir;
  EmbeddingCache cache(dir.path(), "weights-a");
  const std::string key = cache.text_key("a dog");
  EXPECT_FALSE(cache.get(key, 3));
  cache.put(key, {1.0f, 2.0f, 3.0f});
  ASSERT_TRUE(cache.get(key, 3));
  EXPECT_EQ(*cache.get(key, 3), (std::vector<float>{1, 2, 3}));
  EXPECT_FALSE(cache.get(key, 4));  // another model size: not used
  EXPECT_NE(EmbeddingCache(dir.path(), "weights-b").text_key("a dog"), key);
  // Flip one byte of the stored values.
  fs::path file;
  for (const auto& e : fs::recursive_directory_iterator(dir.path())) {
    if (e.is_regular_file()) file = e.path();
  }
  std::string bytes = read_file(file);
  bytes[80] = static_cast<char>(bytes[80] ^ 1);
  write_file_atomic(file, bytes);
  EXPECT_FALSE(cache.get(key, 3));
  EXPECT_EQ(cache.corrupt(), 1u);
}

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
