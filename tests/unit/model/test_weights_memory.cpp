// Issue 14 item 6 (engine memory): the weights' hash remembered in the cache folder, the towers
// packed lazily (a fully cached run never reads the weights), mapped pages given back after
// packing; and the caps on the covariate, SWOW and variants readers.
#include <gtest/gtest.h>

#include <filesystem>

#include "model/runtime/embedding_runtime.hpp"
#include "test_util.hpp"
#include "winokit/core/error.hpp"
#include "winokit/core/hash.hpp"
#include "winokit/data/covariates.hpp"
#include "winokit/data/swow.hpp"
#include "winokit/data/variants.hpp"
#include "winokit/eval/augment.hpp"
#include "winokit/io/files.hpp"
#include "winokit/io/safetensors.hpp"

namespace winokit {
namespace {

namespace fs = std::filesystem;
const fs::path kGolden = fs::path(WINOKIT_SHARED_DIR) / "golden" / "clip";

std::string only_entry(const fs::path& index_dir) {
  std::vector<fs::path> entries;
  for (const auto& e : fs::directory_iterator(index_dir))
    entries.push_back(e.path());
  EXPECT_EQ(entries.size(), 1u);
  return entries.empty() ? std::string() : entries.front().string();
}

TEST(RememberedHash, IsTheFilesSha256AndIsNotRecomputedWhileTheFileIsUnchanged) {
  test::TempDir dir;
  auto file = dir.write("w.safetensors", encode_safetensors_f32({{"a", {{2}, {1, 2}}}}));
  const fs::path index = dir.path() / "index";
  const std::string digest = sha256_file(file);
  EXPECT_EQ(stream_sha256_file(file), digest);
  EXPECT_EQ(remembered_sha256_file(file, index), digest);
  // Proof that the remembered value is used: a forged entry for the same file identity is
  // returned as it is.
  const std::string entry = only_entry(index);
  std::string text = read_file(entry);
  const std::string forged(64, 'f');
  text.replace(text.find(digest), digest.size(), forged);
  write_file_atomic(entry, text, false);
  EXPECT_EQ(remembered_sha256_file(file, index), forged);
  EXPECT_EQ(SafeTensors::open(file).content_hash(index), forged);
  // Any change of the file (here its size and content) makes it hashed again.
  auto changed = dir.write("w.safetensors", encode_safetensors_f32({{"a", {{3}, {1, 2, 3}}}}));
  EXPECT_EQ(remembered_sha256_file(changed, index), sha256_file(changed));
  EXPECT_NE(remembered_sha256_file(changed, index), forged);
  // Without an index, or with a broken entry, the file is hashed.
  EXPECT_EQ(remembered_sha256_file(changed, {}), sha256_file(changed));
  write_file_atomic(only_entry(index), "{not json", false);
  EXPECT_EQ(remembered_sha256_file(changed, index), sha256_file(changed));
}

TEST(RememberedHash, TouchingTheFileMakesItHashedAgain) {
  test::TempDir dir;
  auto file = dir.write("w.bin", "weights");
  const fs::path index = dir.path() / "index";
  const std::string digest = remembered_sha256_file(file, index);
  const std::string entry = only_entry(index);
  std::string text = read_file(entry);
  text.replace(text.find(digest), digest.size(), std::string(64, '0'));
  write_file_atomic(entry, text, false);
  fs::last_write_time(file, fs::last_write_time(file) + std::chrono::seconds(5));
  EXPECT_EQ(remembered_sha256_file(file, index), digest);
}

TEST(SafeTensorsRelease, ATensorReadAfterItsPagesWereGivenBackIsUnchanged) {
  test::TempDir dir;
  std::vector<float> big(300000);
  for (std::size_t i = 0; i < big.size(); ++i)
    big[i] = static_cast<float>(i) * 0.5f;
  auto file = dir.write("t.safetensors", encode_safetensors_f32({{"a", {{2}, {1, 2}}},
                                                                 {"big", {{300000}, big}},
                                                                 {"c", {{3}, {4, 5, 6}}}}));
  auto st = SafeTensors::open(file);
  EXPECT_EQ(st.to_float("big"), big);
  st.release("big");
  st.release("a");
  st.release("no-such-tensor");  // ignored
  EXPECT_EQ(st.to_float("big"), big);
  EXPECT_EQ(st.to_float("a"), (std::vector<float>{1, 2}));
  EXPECT_EQ(st.to_float("c"), (std::vector<float>{4, 5, 6}));
}

TEST(LazyModel, AFullyCachedRunPacksNoWeightsAndGivesTheSameEmbeddings) {
  test::TempDir dir;
  const fs::path model = kGolden / "models" / "tiny-gelu-hf";
  ClipRunOptions options;
  options.cache_dir = dir.path() / "cache";
  const std::vector<ImageRequest> images = {
      image_file_request((kGolden / "images" / "astronaut_q90.jpg").string())};
  const std::vector<std::string> captions = {"a photo of an astronaut"};
  ClipRuntime first = ClipRuntime::load(model, options);
  EXPECT_FALSE(first.model->image_tower_built());
  EXPECT_FALSE(first.model->text_tower_built());
  EXPECT_EQ(first.model->weights_id(), sha256_file(model / "model.safetensors"));
  const auto image = embed_images(first, images);
  EXPECT_TRUE(first.model->image_tower_built());
  EXPECT_FALSE(first.model->text_tower_built());
  const auto text = embed_texts(first, captions);
  EXPECT_TRUE(first.model->text_tower_built());
  EXPECT_TRUE(fs::is_directory(options.cache_dir / "file-hashes"));

  ClipRuntime second = ClipRuntime::load(model, options);
  EXPECT_EQ(second.model->weights_id(), first.model->weights_id());
  EmbedStats stats;
  EXPECT_EQ(embed_images(second, images, &stats), image);
  EXPECT_EQ(embed_texts(second, captions, &stats), text);
  EXPECT_EQ(stats.images_cached, 1u);
  EXPECT_EQ(stats.texts_cached, 1u);
  EXPECT_FALSE(second.model->image_tower_built());
  EXPECT_FALSE(second.model->text_tower_built());
  EXPECT_EQ(second.model->logit_scale_exp(), first.model->logit_scale_exp());
  // Nor are the images read: their cache keys come from the remembered file hashes.
  std::vector<ImageRequest> unreadable = images;
  unreadable[0].read = []() -> ImageBytes { throw IoError("read although cached"); };
  EXPECT_EQ(embed_images(second, unreadable), image);

  // Without the cache the towers are built and give the same embeddings.
  options.use_cache = false;
  ClipRuntime uncached = ClipRuntime::load(model, options);
  EXPECT_EQ(embed_images(uncached, images), image);
  EXPECT_EQ(embed_texts(uncached, captions), text);
}

TEST(LazyModel, AMissingTensorIsStillReportedAtLoad) {
  test::TempDir dir;
  const fs::path golden = kGolden / "models" / "tiny-gelu-hf";
  const fs::path copy = dir.path() / "model";
  fs::create_directories(copy);
  for (const auto& e : fs::directory_iterator(golden)) {
    if (e.path().filename() != "model.safetensors")
      fs::copy_file(e.path(), copy / e.path().filename());
  }
  auto tensors = read_safetensors_f32(golden / "model.safetensors");
  tensors.erase("text_model.encoder.layers.1.mlp.fc2.weight");
  write_file_atomic(copy / "model.safetensors", encode_safetensors_f32(tensors), false);
  try {
    ClipModel::load(copy);
    FAIL() << "loaded";
  } catch (const InputError& e) {
    EXPECT_NE(
        std::string(e.what()).find("'text_model.encoder.layers.1.mlp.fc2.weight': tensor missing"),
        std::string::npos)
        << e.what();
  }
}

// The readers below read whole files through read_text_file: a line over the 1 MiB cap is
// refused with the file and line named, after reading at most the cap.
std::string long_line() {
  return std::string(2 << 20, 'x');
}

TEST(ReaderCaps, CovariatesRefuseAnOversizeLine) {
  test::TempDir dir;
  WinogroundDataset ds = test::dataset_of(2);
  auto file = dir.write("c.csv", "id,ppl\n0,1\n" + long_line() + "\n");
  try {
    load_covariates(file.string(), ds);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("c.csv:3"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("line longer than 1 MiB"), std::string::npos) << e.what();
  }
}

TEST(ReaderCaps, SwowRefusesAnOversizeLine) {
  test::TempDir dir;
  auto file = dir.write("swow.csv", "cue,R1,R2,R3\ndog,cat,bone,bark\n" + long_line());
  try {
    load_swow(file.string());
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("swow.csv:3"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("line longer than 1 MiB"), std::string::npos) << e.what();
  }
}

TEST(ReaderCaps, VariantsAndSubstitutionsRefuseAnOversizeLine) {
  test::TempDir dir;
  WinogroundDataset ds = test::dataset_of(1);
  auto variants = dir.write("v.jsonl", long_line() + "\n");
  try {
    load_variants(variants.string(), ds);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("v.jsonl:1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("line longer than 1 MiB"), std::string::npos) << e.what();
  }
  auto subs = dir.write("s.csv", "word,replacement\n" + long_line() + ",y\n");
  try {
    load_substitutions(subs.string());
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("s.csv:2"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace winokit
