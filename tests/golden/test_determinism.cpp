// Results that do not depend on the CPU (CONTRIBUTING): for every model family, every item's
// output has the same bits alone and in batches of 1, 3, 7, 32 and 33 of varied composition, on
// 1 and 2 threads, and on the AVX2 and the portable kernel (what a CPU without AVX2 + FMA runs).
// Bits are compared, not tolerances.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/families/blip/blip_model.hpp"
#include "model/families/clip/clip_model.hpp"
#include "model/families/flava/flava_family.hpp"
#include "model/families/llava_onevision/llava_onevision_model.hpp"
#include "model/families/siglip/siglip_model.hpp"
#include "model/families/smolvlm/smolvlm_model.hpp"
#include "model/families/vilt/vilt_family.hpp"
#include "model/families/vilt/vilt_model.hpp"
#include "model/kernels/kernels.hpp"
#include "model/lm/llama_model.hpp"
#include "model/text/wordpiece.hpp"
#include "winokit/io/files.hpp"
#include "winokit/io/image_decode.hpp"
#include "winokit/io/safetensors.hpp"
#include "winokit/model/compute.hpp"
#include "winokit/model/gpt2_model.hpp"
#include "winokit/model/preprocess.hpp"
#include "winokit/model/vl_model.hpp"

namespace winokit {
namespace {

namespace fs = std::filesystem;
const std::string kGolden = std::string(WINOKIT_SHARED_DIR) + "/golden/clip/";
const fs::path kFixtures = fs::path(WINOKIT_SOURCE_DIR) / "tests" / "fixtures";
const std::vector<int> kBatches = {1, 3, 7, 32, 33};
constexpr int kItems = 33;

// One setting the outputs must not depend on: every batch size on 1 and 2 threads, and the AVX2
// kernel (what AVX2-only CPUs run; on other CPUs what they run anyway) and the portable kernel
// (slow) on batches of 7. With these in the suite, scripts/test's WINOKIT_KERNEL re-runs of the
// golden tests leave this suite out: it compares the kernels itself.
enum class KernelChoice { Dispatched, Avx2, Portable };
struct Setting {
  int threads;
  KernelChoice kernel;
  std::vector<int> batches;
};
const std::vector<Setting> kSettings = {{1, KernelChoice::Dispatched, kBatches},
                                        {2, KernelChoice::Dispatched, kBatches},
                                        {2, KernelChoice::Avx2, {7}},
                                        {2, KernelChoice::Portable, {7}}};

struct Restore {
  int threads = omp_get_max_threads();
  ~Restore() {
    set_compute_threads(threads);
    detail::force_portable_kernel(false);
    detail::force_avx2_kernel(false);
  }
};

void apply(const Setting& s) {
  set_compute_threads(s.threads);
  detail::force_portable_kernel(false);
  detail::force_avx2_kernel(false);
  if (s.kernel == KernelChoice::Avx2) detail::force_avx2_kernel(true);
  if (s.kernel == KernelChoice::Portable) detail::force_portable_kernel(true);
}

std::string describe(const Setting& s, int batch) {
  return "batch " + std::to_string(batch) + ", " + std::to_string(s.threads) + " thread(s), " +
         (s.kernel == KernelChoice::Portable ? "portable"
          : s.kernel == KernelChoice::Avx2   ? "avx2"
                                             : "dispatched") +
         " kernel";
}

// Runs `run(first, count)` -> [count * dim] over kItems items in batches, for every batch size
// and setting, and checks each item's `dim` values against the item computed alone (1 thread,
// dispatched kernel).
void check_batches(const std::string& family, std::size_t dim,
                   const std::function<std::vector<float>(int, int)>& run) {
  Restore restore;
  apply({1, KernelChoice::Dispatched, {}});
  std::vector<std::vector<float>> alone;
  for (int i = 0; i < kItems; ++i) {
    alone.push_back(run(i, 1));
    ASSERT_EQ(alone.back().size(), dim) << family;
  }
  for (const Setting& s : kSettings) {
    apply(s);
    for (int batch : s.batches) {
      for (int first = 0; first < kItems; first += batch) {
        const int count = std::min(batch, kItems - first);
        const auto out = run(first, count);
        ASSERT_EQ(out.size(), dim * static_cast<std::size_t>(count)) << family;
        for (int i = 0; i < count; ++i) {
          ASSERT_EQ(
              std::memcmp(out.data() + static_cast<std::size_t>(i) * dim,
                          alone[static_cast<std::size_t>(first + i)].data(), dim * sizeof(float)),
              0)
              << family << ": item " << first + i << " at " << i << ", " << describe(s, batch);
        }
      }
    }
  }
}

std::vector<std::vector<int>> golden_ids() {
  std::vector<std::vector<int>> ids;
  std::ifstream in(kGolden + "tokenizer.jsonl");
  std::string line;
  while (std::getline(in, line))
    ids.push_back(nlohmann::json::parse(line)["input_ids"].get<std::vector<int>>());
  return ids;
}

std::vector<float> golden_pixels(std::size_t* per_image, std::size_t* images) {
  auto pixels = read_safetensors_f32(kGolden + "preprocess.safetensors");
  const auto manifest = nlohmann::json::parse(read_file(kGolden + "manifest.json"));
  std::vector<float> px;
  *images = 0;
  for (const auto& image : manifest["images"]) {
    const auto& t = pixels.at("hf/" + image.get<std::string>()).second;
    *per_image = t.size();
    px.insert(px.end(), t.begin(), t.end());
    ++*images;
  }
  return px;
}

// Item i of kItems cycles through the fixtures (so batches mix different inputs).
TEST(DeterminismAllFamilies, ClipVitImagesAndTexts) {
  for (const char* name : {"tiny-quickgelu-hf", "tiny-gelu-hf"}) {
    ClipModel model = ClipModel::load(kGolden + "models/" + name);
    std::size_t per = 0, images = 0;
    const auto px = golden_pixels(&per, &images);
    std::vector<float> cycled;
    for (int i = 0; i < kItems; ++i) {
      const auto first = px.begin() + static_cast<std::ptrdiff_t>((i % images) * per);
      cycled.insert(cycled.end(), first, first + static_cast<std::ptrdiff_t>(per));
    }
    const std::size_t dim = static_cast<std::size_t>(model.config().embed_dim);
    check_batches(std::string(name) + " images", dim, [&](int first, int count) {
      return model.encode_images(cycled.data() + static_cast<std::size_t>(first) * per, count)
          .embeds;
    });
    const auto ids = golden_ids();
    check_batches(std::string(name) + " texts", dim, [&](int first, int count) {
      std::vector<std::vector<int>> batch;
      // Reversed order inside the batch: every caption meets other neighbours and paddings.
      for (int i = count - 1; i >= 0; --i)
        batch.push_back(ids[static_cast<std::size_t>(first + i) % ids.size()]);
      const auto out = model.encode_texts(batch).embeds;
      std::vector<float> ordered(out.size());
      for (int i = 0; i < count; ++i) {
        std::copy_n(out.begin() + static_cast<std::ptrdiff_t>(i * dim), dim,
                    ordered.begin() + static_cast<std::ptrdiff_t>((count - 1 - i) * dim));
      }
      return ordered;
    });
    // With states asked for: on 2 threads a batch is cut into one part per thread
    // (ClipModel::encode_images / encode_texts), and the parts' states are interleaved back
    // level by level; on 1 thread it runs as one. Every field must be the same bits.
    EncodeOptions all_states;
    all_states.hidden_states = all_states.pooled_states = true;
    auto same = [&](const TowerOutput& a, const TowerOutput& b, const std::string& what) {
      EXPECT_EQ(a.count, b.count) << what;
      EXPECT_EQ(a.token_count, b.token_count) << what;
      EXPECT_EQ(a.embeds, b.embeds) << what << ": embeds";
      EXPECT_EQ(a.hidden, b.hidden) << what << ": hidden";
      EXPECT_EQ(a.hidden_mean, b.hidden_mean) << what << ": hidden_mean";
      EXPECT_EQ(a.hidden_max, b.hidden_max) << what << ": hidden_max";
      EXPECT_EQ(a.tokens, b.tokens) << what << ": tokens";
    };
    std::vector<std::vector<int>> texts;
    for (int i = 0; i < kItems; ++i)
      texts.push_back(ids[static_cast<std::size_t>(i) % ids.size()]);
    for (bool tokens : {false, true}) {
      EncodeOptions o = all_states;
      o.token_states = tokens;
      Restore restore;
      set_compute_threads(1);
      const TowerOutput img1 = model.encode_images(cycled.data(), kItems, o);
      const TowerOutput txt1 = model.encode_texts(texts, o);
      set_compute_threads(2);
      const std::string what =
          std::string(name) + (tokens ? " with" : " without") + " token states, 2 threads vs 1";
      same(model.encode_images(cycled.data(), kItems, o), img1, what + ", images");
      same(model.encode_texts(texts, o), txt1, what + ", texts");
      EXPECT_FALSE(img1.hidden.empty() || img1.hidden_mean.empty()) << what;
    }
  }
}

TEST(DeterminismAllFamilies, ClipResNetImages) {
  const auto model = ClipModel::load((kFixtures / "resnet" / "tiny-rn.pt").string());
  auto t = read_safetensors_f32(kFixtures / "resnet" / "tiny-rn-expected.safetensors");
  const auto& px = t.at("pixels").second;
  const std::size_t images = static_cast<std::size_t>(t.at("pixels").first[0]);
  const std::size_t per = px.size() / images;
  std::vector<float> cycled;
  for (int i = 0; i < kItems; ++i) {
    const auto first = px.begin() + static_cast<std::ptrdiff_t>((i % images) * per);
    cycled.insert(cycled.end(), first, first + static_cast<std::ptrdiff_t>(per));
  }
  check_batches(
      "RN images", static_cast<std::size_t>(model.config().embed_dim), [&](int first, int count) {
        return model.encode_images(cycled.data() + static_cast<std::size_t>(first) * per, count)
            .embeds;
      });
}

// SigLIP: the image tower (with its attention pooling head) on the goldens' pixels, the text
// tower without and with the padding mask (the masked attention is winokit's own loop).
TEST(DeterminismAllFamilies, SiglipImagesAndTexts) {
  const fs::path dir = kFixtures / "siglip" / "tiny-a";
  const SiglipModel model = SiglipModel::load(dir);
  const SiglipTokenizer tok = SiglipTokenizer::from_directory(dir);
  const auto expected = read_safetensors_f32(kFixtures / "siglip" / "expected.safetensors");
  std::vector<std::vector<float>> images;
  for (const auto& [name, t] : expected) {
    if (name.rfind("a/pixel_values/", 0) == 0) images.push_back(t.second);
  }
  ASSERT_EQ(images.size(), 5u);
  const std::size_t per = images[0].size();
  std::vector<float> cycled;
  for (int i = 0; i < kItems; ++i)
    cycled.insert(cycled.end(), images[static_cast<std::size_t>(i) % images.size()].begin(),
                  images[static_cast<std::size_t>(i) % images.size()].end());
  const std::size_t dim = static_cast<std::size_t>(model.config().embed_dim());
  check_batches("SigLIP images", dim, [&](int first, int count) {
    return model.encode_images(cycled.data() + static_cast<std::size_t>(first) * per, count);
  });
  const auto captions = nlohmann::json::parse(read_file(kFixtures / "siglip" / "tokens.json"))["a"];
  std::vector<SiglipTokens> tokens;
  for (const auto& c : captions)
    tokens.push_back(tok.encode(c["text"].get<std::string>()));
  for (bool masked : {false, true}) {
    check_batches(std::string("SigLIP texts") + (masked ? " masked" : ""), dim,
                  [&](int first, int count) {
                    std::vector<SiglipTokens> batch;
                    for (int i = 0; i < count; ++i)
                      batch.push_back(tokens[static_cast<std::size_t>(first + i) % tokens.size()]);
                    return model.encode_texts(batch, masked);
                  });
  }
}

TEST(DeterminismAllFamilies, Gpt2LogProbabilities) {
  Gpt2Model model = Gpt2Model::load(kFixtures.parent_path() / "golden" / "gpt2_tiny" / "f32");
  const auto j = nlohmann::json::parse(
      read_file(kFixtures.parent_path() / "golden" / "gpt2_tiny" / "expected.json"));
  std::vector<std::vector<int>> seqs;
  for (const auto& s : j["expected"]["f32"])
    seqs.push_back(s["ids"].get<std::vector<int>>());
  // Every item scored as the same 12-token prefix of its sequence (fixed dim), sequences of
  // other lengths around it.
  constexpr std::size_t kTokens = 12;
  std::vector<std::vector<int>> items;
  for (int i = 0; i < kItems; ++i) {
    auto s = seqs[static_cast<std::size_t>(i) % seqs.size()];
    while (s.size() < kTokens + 1)
      s.insert(s.end(), s.begin(), s.end());
    s.resize(kTokens + 1 + static_cast<std::size_t>(i % 3));
    items.push_back(s);
  }
  check_batches("GPT-2 log-probabilities", kTokens, [&](int first, int count) {
    std::vector<std::vector<int>> batch(items.begin() + first, items.begin() + first + count);
    const auto scored = model.score(batch, Gpt2Options{});
    std::vector<float> out;
    for (const auto& s : scored) {
      for (std::size_t k = 0; k < kTokens; ++k)
        out.push_back(static_cast<float>(s.log_probs[k]));
    }
    return out;
  });
}

ImageBytes shared_image(const std::string& name) {
  ImageBytes b;
  b.name = name;
  b.source = kGolden + "images/" + name;
  b.bytes = read_file(b.source);
  return b;
}

const std::vector<std::string> kImageNames = {"chelsea_odd.jpg", "astronaut_portrait.jpg",
                                              "coffee_1920x1281.jpg"};
const std::vector<std::string> kCaptions = {"a dog bites a man", "a man bites a dog",
                                            "The old cat sits under a tree.", "naïve résumé",
                                            "two"};

TEST(DeterminismAllFamilies, ViltPairScores) {
  for (const char* head : {"tiny-rank", "tiny-itm"}) {
    const ViltRuntime rt = ViltRuntime::load(kFixtures / "vilt" / head, {});
    std::vector<ViltImageEmbeds> embeds;
    for (const auto& n : kImageNames) {
      embeds.push_back(rt.model->embed_image(
          vilt_preprocess(decode_image(shared_image(n)), rt.model->config())));
    }
    check_batches(std::string("ViLT ") + head, 1, [&](int first, int count) {
      std::vector<std::vector<int>> ids;
      std::vector<const ViltImageEmbeds*> ims;
      for (int i = first; i < first + count; ++i) {
        ids.push_back(rt.encode(kCaptions[static_cast<std::size_t>(i) % kCaptions.size()]));
        ims.push_back(&embeds[static_cast<std::size_t>(i / 5) % embeds.size()]);
      }
      const auto s = rt.model->score(ids, ims).scores;
      return std::vector<float>(s.begin(), s.end());
    });
  }
}

TEST(DeterminismAllFamilies, FlavaPairScoresBothHeads) {
  for (FlavaHead head : {FlavaHead::Itm, FlavaHead::Contrastive}) {
    std::vector<std::function<ImageBytes()>> readers;
    for (const auto& n : kImageNames)
      readers.emplace_back([n] { return shared_image(n); });
    std::vector<std::pair<std::size_t, std::size_t>> pairs;
    for (int i = 0; i < kItems; ++i) {
      pairs.emplace_back(static_cast<std::size_t>(i) % kCaptions.size(),
                         static_cast<std::size_t>(i / 5) % kImageNames.size());
    }
    const auto score = [&](int batch, int first, int count) {
      FlavaRunOptions o;
      o.batch_size = batch;
      o.image_batch = batch;
      FlavaRuntime rt = FlavaRuntime::load(kFixtures / "flava" / "tiny-pretraining", head, o);
      std::vector<std::pair<std::size_t, std::size_t>> part(pairs.begin() + first,
                                                            pairs.begin() + first + count);
      const auto s = flava_score_pairs(rt, readers, kCaptions, part);
      return std::vector<float>(s.begin(), s.end());
    };
    // The runtime batches internally: the batch size is its option, the items one call.
    Restore restore;
    set_compute_threads(1);
    const auto alone_all = score(1, 0, kItems);
    for (const Setting& s : kSettings) {
      apply(s);
      for (int batch : s.batches) {
        const auto all = score(batch, 0, kItems);
        ASSERT_EQ(all.size(), alone_all.size());
        for (std::size_t i = 0; i < all.size(); ++i) {
          ASSERT_EQ(std::memcmp(&all[i], &alone_all[i], sizeof(float)), 0)
              << "FLAVA " << to_string(head) << " pair " << i << ", " << describe(s, batch);
        }
      }
    }
  }
}

TEST(DeterminismAllFamilies, BlipItmLogitsAndItcFeatures) {
  const fs::path dir = kFixtures / "blip" / "tiny-itm";
  const BlipModel model = BlipModel::load(dir);
  const WordPieceTokenizer tok = WordPieceTokenizer::load(dir);
  std::vector<BlipImageEmbeds> embeds;
  std::vector<std::vector<float>> pixels;
  {
    Restore restore;
    set_compute_threads(1);
    for (const auto& n : kImageNames) {
      pixels.push_back(blip_preprocess(decode_image(shared_image(n)), model.config()));
      embeds.push_back(model.encode_image(pixels.back().data()));
    }
  }
  // Several images at once (each thread runs whole images when there are enough), on 1 and 2
  // threads: every image's states, feature and cross-attention keys are the bits of the image
  // encoded alone.
  auto same_bits = [](const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), sizeof(float) * a.size()) == 0;
  };
  for (int threads : {1, 2}) {
    for (std::size_t count : {std::size_t{1}, pixels.size() - 1, pixels.size()}) {
      Restore restore;
      set_compute_threads(threads);
      std::vector<const float*> ptrs;
      for (std::size_t i = 0; i < count; ++i)
        ptrs.push_back(pixels[i].data());
      const std::vector<BlipImageEmbeds> many = model.encode_images(ptrs);
      ASSERT_EQ(many.size(), count);
      for (std::size_t i = 0; i < count; ++i) {
        const std::string where = "BLIP image " + std::to_string(i) + " of " +
                                  std::to_string(count) + ", " + std::to_string(threads) +
                                  " thread(s)";
        EXPECT_TRUE(same_bits(many[i].states, embeds[i].states)) << where;
        EXPECT_TRUE(same_bits(many[i].feature, embeds[i].feature)) << where;
        ASSERT_EQ(many[i].cross_kv.size(), embeds[i].cross_kv.size()) << where;
        for (std::size_t l = 0; l < many[i].cross_kv.size(); ++l)
          EXPECT_TRUE(same_bits(many[i].cross_kv[l], embeds[i].cross_kv[l])) << where;
      }
    }
  }
  std::vector<std::vector<int>> ids;
  for (int i = 0; i < kItems; ++i) {
    ids.push_back(tok.encode(kCaptions[static_cast<std::size_t>(i) % kCaptions.size()],
                             model.config().max_text_len));
  }
  // Pairs sharing an image are adjacent (one cross-attention group) in some batches and split
  // across batches in others.
  check_batches("BLIP itm", 2, [&](int first, int count) {
    std::vector<const std::vector<int>*> bi;
    std::vector<const BlipImageEmbeds*> bm;
    for (int i = first; i < first + count; ++i) {
      bi.push_back(&ids[static_cast<std::size_t>(i)]);
      bm.push_back(&embeds[static_cast<std::size_t>(i / 5) % embeds.size()]);
    }
    return model.itm_logits(bi, bm);
  });
  check_batches("BLIP itc text", static_cast<std::size_t>(model.config().embed_dim),
                [&](int first, int count) {
                  std::vector<const std::vector<int>*> bi;
                  for (int i = first; i < first + count; ++i)
                    bi.push_back(&ids[static_cast<std::size_t>(i)]);
                  return model.text_features(bi);
                });
}

// Llama / Qwen2: the next-token logits of sequences of varied lengths, from position 0 and
// continuing a shared KV-cached prefix (tests/golden/llama_tiny).
TEST(DeterminismAllFamilies, LlamaLogitsWithAndWithoutACachedPrefix) {
  const fs::path dir = fs::path(WINOKIT_SOURCE_DIR) / "tests" / "golden" / "llama_tiny";
  const auto expected = nlohmann::json::parse(read_file(dir / "expected.json"));
  std::vector<int> pool;
  for (const auto& t : expected["texts"])
    for (int id : t["with_special"])
      pool.push_back(id);
  for (const char* name : {"llama", "qwen2"}) {
    const LlamaModel lm = LlamaModel::load(dir / name);
    std::vector<std::vector<float>> x;
    std::vector<int> len;
    for (int i = 0; i < kItems; ++i) {
      len.push_back(1 + (i * 7) % 23);
      const std::vector<int> ids(pool.begin() + i, pool.begin() + i + len.back());
      x.push_back(lm.embed(ids));
    }
    KvCache prefix;
    const std::vector<float> p = lm.embed({pool[3], pool[5], pool[8]});
    lm.forward({{p.data(), 3, nullptr, &prefix}}, LogitRows::None);
    check_batches(
        std::string(name) + " logits", static_cast<std::size_t>(lm.config().vocab_size),
        [&](int first, int count) {
          std::vector<LlamaSequence> seqs;
          for (int i = first; i < first + count; ++i) {
            const auto u = static_cast<std::size_t>(i);
            seqs.push_back({x[u].data(), len[u], i % 3 == 0 ? &prefix : nullptr, nullptr});
          }
          return lm.forward(seqs, LogitRows::Last);
        });
  }
}

// A VQAScore family's questions continuing an image's cached prefix: their last logits.
template <class Model>
void check_question_logits(const std::string& family, const Model& m, const KvCache& prefix) {
  const std::vector<std::string> captions = {"a dog", "two red circles and a square",
                                             "It's 3 apples"};
  std::vector<std::vector<int>> ids;
  std::vector<std::vector<float>> x;
  for (int i = 0; i < kItems; ++i) {
    ids.push_back(m.question_ids(captions[static_cast<std::size_t>(i) % captions.size()] +
                                 std::string(static_cast<std::size_t>(i % 4), '!')));
    x.push_back(m.text_model().embed(ids.back()));
  }
  check_batches(
      family, static_cast<std::size_t>(m.config().text.vocab_size), [&](int first, int count) {
        std::vector<LlamaSequence> seqs;
        for (int i = first; i < first + count; ++i) {
          const auto u = static_cast<std::size_t>(i);
          seqs.push_back({x[u].data(), static_cast<int>(ids[u].size()), &prefix, nullptr});
        }
        return m.text_model().forward(seqs, LogitRows::Last);
      });
}

// SmolVLM: the vision tower + connector per tile, and the logits of questions continuing an
// image's cached prefix (tests/golden/smolvlm_tiny).
TEST(DeterminismAllFamilies, SmolVlmImageFeaturesAndQuestionLogits) {
  const fs::path dir = fs::path(WINOKIT_SOURCE_DIR) / "tests" / "golden" / "smolvlm_tiny";
  const SmolVlmModel m = SmolVlmModel::load(dir / "model");
  const SmolVlmTiles tiles = smolvlm_preprocess(
      decode_image(image_file_request((dir / "images" / "wide.png").string()).read()),
      m.config().preprocess);
  const std::size_t tile_floats = tiles.pixels.size() / static_cast<std::size_t>(tiles.count);
  const std::size_t feature_dim =
      static_cast<std::size_t>(m.config().image_seq_len) * m.config().text.hidden;
  check_batches("SmolVLM image features", feature_dim, [&](int first, int count) {
    SmolVlmTiles t;
    t.size = tiles.size;
    t.count = count;
    for (int i = first; i < first + count; ++i) {
      const auto at =
          tiles.pixels.begin() +
          static_cast<std::ptrdiff_t>(static_cast<std::size_t>(i % tiles.count) * tile_floats);
      t.pixels.insert(t.pixels.end(), at, at + static_cast<std::ptrdiff_t>(tile_floats));
    }
    return m.image_features(t);
  });
  check_question_logits("SmolVLM question logits", m, m.image_prefix(tiles));
}

// LLaVA-OneVision: an image's packed features (its tiles through the vision tower and the
// projector in one batch, the anyres_max_9 downscale), and the logits of questions continuing an
// image's cached prefix (tests/fixtures/llava_onevision).
TEST(DeterminismAllFamilies, LlavaOnevisionImageFeaturesAndQuestionLogits) {
  const fs::path dir = fs::path(WINOKIT_SOURCE_DIR) / "tests" / "fixtures" / "llava_onevision";
  const LlavaOnevisionModel m = LlavaOnevisionModel::load(dir / "model");
  const LlavaOnevisionTiles tiles = llava_onevision_preprocess(
      decode_image(image_file_request((dir / "images" / "big.png").string()).read()),
      m.config().preprocess);
  const std::vector<float> one = m.image_features(tiles);
  check_batches("LLaVA-OneVision image features", one.size(), [&](int, int count) {
    std::vector<float> out;
    for (int i = 0; i < count; ++i) {
      const std::vector<float> f = m.image_features(tiles);
      out.insert(out.end(), f.begin(), f.end());
    }
    return out;
  });
  check_question_logits("LLaVA-OneVision question logits", m, m.image_prefix(tiles));
}

TEST(DeterminismAllFamilies, ProvenanceNamesTheKernels) {
  EXPECT_EQ(kernel_version(), "winokit-kernels-1");
  EXPECT_TRUE(kernel_isa() == "avx512f-fma" || kernel_isa() == "avx2-fma" ||
              kernel_isa() == "portable-fma")
      << kernel_isa();
  EXPECT_NE(cpu_description(), "");
  const auto vit = ClipModel::load(kGolden + "models/tiny-quickgelu-hf");
  EXPECT_EQ(vit.compute_signature(), kernel_version());
  const auto rn = ClipModel::load((kFixtures / "resnet" / "tiny-rn.pt").string());
  EXPECT_EQ(rn.compute_signature(), kernel_version());
}

// Every registered family, every head: the images prepared once (the game's rival:
// PreparedImages) score the same bits as score_pairs, whatever the order of the pairs. The
// table must name a fixture for every family of the registry, so a new family fails here until
// it has one.
TEST(DeterminismAllFamilies, EveryFamilyScoresPreparedImagesAsPairs) {
  const fs::path source = WINOKIT_SOURCE_DIR;
  const std::map<std::string, fs::path> fixture = {
      {"clip", kGolden + "models/tiny-quickgelu-hf"},
      {"vilt", kFixtures / "vilt" / "tiny-rank"},
      {"flava", kFixtures / "flava" / "tiny-pretraining"},
      {"siglip", kFixtures / "siglip" / "tiny-a"},
      {"blip", kFixtures / "blip" / "tiny-itm"},
      {"smolvlm", source / "tests" / "golden" / "smolvlm_tiny" / "model"},
      {"llava-onevision", kFixtures / "llava_onevision" / "model"},
  };
  std::vector<ImageRequest> images;
  for (const char* name : {"chelsea_odd.jpg", "noise.png", "palette.png"})
    images.push_back(image_file_request(kGolden + "images/" + name));
  const std::vector<std::string> captions = {"a cat on a sofa", "noise", "a dog"};
  std::vector<PairIndex> pairs;
  for (std::size_t c = 0; c < captions.size(); ++c)
    for (std::size_t i = 0; i < images.size(); ++i)
      pairs.emplace_back(c, (i + c) % images.size());
  pairs.emplace_back(0, 0);  // a pair twice
  for (const ModelFamily& family : model_families()) {
    ASSERT_TRUE(fixture.count(family.name)) << "no fixture for the family " << family.name;
    std::vector<std::string> heads = family.heads;
    if (heads.empty()) heads.push_back("");
    for (const std::string& head : heads) {
      ModelOptions o;
      o.use_cache = false;
      o.head = head;
      o.batch_size = 2;
      const auto model = open_model(fixture.at(family.name), o);
      const std::vector<double> direct = model->score_pairs(images, captions, pairs);
      std::vector<PairIndex> reversed(pairs.rbegin(), pairs.rend());
      const std::vector<double> prepared = model->prepare_images(images)->score(captions, reversed);
      ASSERT_EQ(prepared.size(), direct.size());
      for (std::size_t p = 0; p < pairs.size(); ++p) {
        EXPECT_EQ(prepared[pairs.size() - 1 - p], direct[p])
            << family.name << " " << head << " pair " << p;
      }
    }
  }
}

}  // namespace
}  // namespace winokit
