// Probes: the split, the MLP's gradients, probes on embeddings whose answer is known, the SVM,
// and the embedding files they read.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "test_util.hpp"
#include "winokit/core/error.hpp"
#include "winokit/core/rng.hpp"
#include "winokit/eval/probe.hpp"
#include "winokit/io/npy.hpp"
#include "winokit/io/safetensors.hpp"

namespace winokit {
namespace {

const char* const kTags[] = {"Object", "Relation", "Both"};

// n examples; tag groups in proportion 5:3:2.
WinogroundDataset tagged_dataset(int n) {
  std::string text;
  for (int i = 0; i < n; ++i) {
    const int r = i % 10;
    text += test::example_line(i, "Noun", "", kTags[r < 5 ? 0 : (r < 8 ? 1 : 2)]);
  }
  return parse_examples(text, "examples.jsonl");
}

// Two-hot states: image k and caption k of every item point along axis k (plus a little
// per-item noise), so "does this caption match this image" is an XOR of two features, and a
// variant of caption k points along axis k too. The answer is known: a probe can reach 100%.
ProbeEmbeddings separable_embeddings(std::size_t items, int dim, std::uint64_t seed) {
  Rng rng(seed);
  auto vec = [&](int axis) {
    std::vector<float> v(static_cast<std::size_t>(dim));
    for (auto& x : v)
      x = static_cast<float>(0.1 * (rng.uniform() - 0.5));
    v[static_cast<std::size_t>(axis)] += 1.0f;
    return v;
  };
  ProbeEmbeddings e;
  ProbeLayer l;
  l.name = "final";
  l.image_dim = l.text_dim = dim;
  for (std::size_t i = 0; i < items; ++i) {
    for (int k = 0; k < 2; ++k) {
      auto im = vec(k), tx = vec(k);
      l.image.insert(l.image.end(), im.begin(), im.end());
      l.text.insert(l.text.end(), tx.begin(), tx.end());
      for (int v = 0; v < 2; ++v) {
        auto var = vec(k);
        l.variants.insert(l.variants.end(), var.begin(), var.end());
        e.variant_owner.push_back(2 * i + static_cast<std::size_t>(k));
      }
    }
  }
  e.layers.push_back(std::move(l));
  return e;
}

ProbeOptions small_options() {
  ProbeOptions o;
  o.mlp.depth = 4;
  o.mlp.hidden = 32;
  o.mlp.learning_rate = 1e-3;
  o.mlp.epochs = 60;
  o.mlp.batch_size = 32;
  o.seeds = {0, 1, 2};
  return o;
}

TEST(ProbeSplit, StratifiedByTagWithExactTotal) {
  WinogroundDataset ds = tagged_dataset(400);  // 200 Object, 120 Relation, 80 Both
  const auto train = stratified_split(ds, 0.75, 3, ProbeSplitKind::CollapsedTag);
  std::map<std::string, int> per_tag;
  int total = 0;
  for (std::size_t i = 0; i < train.size(); ++i) {
    if (!train[i]) continue;
    ++total;
    ++per_tag[ds.examples[i].collapsed_tag];
  }
  EXPECT_EQ(total, 300);
  EXPECT_EQ(per_tag["Object"], 150);
  EXPECT_EQ(per_tag["Relation"], 90);
  EXPECT_EQ(per_tag["Both"], 60);
  EXPECT_EQ(train, stratified_split(ds, 0.75, 3, ProbeSplitKind::CollapsedTag));  // seeded
  EXPECT_NE(train, stratified_split(ds, 0.75, 4, ProbeSplitKind::CollapsedTag));
  // 7 items at 0.5: 3.5 rounds to 4 in total, by largest remainder across groups.
  WinogroundDataset small = tagged_dataset(7);
  const auto s = stratified_split(small, 0.5, 0, ProbeSplitKind::CollapsedTag);
  EXPECT_EQ(std::count(s.begin(), s.end(), true), 4);
  EXPECT_THROW(stratified_split(ds, 1.0, 0), UsageError);
}

// Winoground-like secondary tags: the strata of the paper's split, with uneven sizes.
WinogroundDataset secondary_tagged_dataset() {
  // (secondary_tag, count): 400 in all.
  const std::pair<const char*, int> kMix[] = {{"", 262},
                                              {"Symbolic", 27},
                                              {"Pragmatics", 17},
                                              {"Morpheme-Level", 21},
                                              {"Series", 23},
                                              {"Symbolic, Series", 13},
                                              {"Symbolic, Pragmatics", 7},
                                              {"Pragmatics, Morpheme-Level", 3},
                                              {"Series, Pragmatics", 27}};
  std::string text;
  int id = 0;
  for (const auto& [tag, count] : kMix) {
    for (int k = 0; k < count; ++k, ++id)
      text += test::example_line(id, "Noun", tag, kTags[id % 3]);
  }
  return parse_examples(text, "examples.jsonl");
}

TEST(ProbeSplit, PaperStrataPlaceAnItemInOneStratum) {
  WinogroundDataset ds = secondary_tagged_dataset();
  auto stratum_of = [&](int id) {
    return paper_stratum(ds.examples[static_cast<std::size_t>(id)]);
  };
  EXPECT_EQ(stratum_of(0), "None");
  EXPECT_EQ(stratum_of(262), "Symbolic");
  EXPECT_EQ(stratum_of(262 + 27), "Pragmatics");
  EXPECT_EQ(stratum_of(262 + 27 + 17), "Morpheme-Level");
  EXPECT_EQ(stratum_of(262 + 27 + 17 + 21), "None");            // Series alone
  EXPECT_EQ(stratum_of(262 + 27 + 17 + 21 + 23), "Symbolic");   // Series does not count
  EXPECT_EQ(stratum_of(262 + 27 + 17 + 21 + 23 + 13), "Both");  // two of the three
  EXPECT_EQ(stratum_of(262 + 27 + 17 + 21 + 23 + 13 + 7), "Both");
  EXPECT_EQ(stratum_of(399), "Pragmatics");
}

TEST(ProbeSplit, StrataProportionsPreservedWithinOneItem) {
  WinogroundDataset ds = secondary_tagged_dataset();
  std::map<std::string, int> size;
  for (const auto& ex : ds.examples)
    ++size[paper_stratum(ex)];
  ASSERT_EQ(size.size(), 5u);  // None, Symbolic, Pragmatics, Morpheme-Level, Both
  for (std::uint64_t seed = 0; seed < 5; ++seed) {
    const auto train = stratified_split(ds, 0.75, seed);
    EXPECT_EQ(std::count(train.begin(), train.end(), true), 300);
    std::map<std::string, int> in_train;
    for (std::size_t i = 0; i < train.size(); ++i)
      in_train[paper_stratum(ds.examples[i])] += train[i] ? 1 : 0;
    for (const auto& [stratum, n] : size) {
      EXPECT_LT(std::fabs(in_train[stratum] - 0.75 * n), 1.0) << stratum << " seed " << seed;
      // ...and so the test split keeps each stratum's share too.
      EXPECT_LT(std::fabs((n - in_train[stratum]) - 0.25 * n), 1.0) << stratum;
    }
  }
  EXPECT_NE(stratified_split(ds, 0.75, 0), stratified_split(ds, 0.75, 1));
  // The option picks the kind; the paper's fixed lists win over it when paper_split is set.
  ProbeOptions o;
  o.split = ProbeSplitKind::Random;
  const auto random = probe_split(ds, o, 0);
  EXPECT_EQ(std::count(random.begin(), random.end(), true), 300);
  EXPECT_EQ(random, stratified_split(ds, 0.75, 0, ProbeSplitKind::Random));
  EXPECT_NE(describe_split(o).find("random"), std::string::npos);
  o.paper_split = true;
  EXPECT_EQ(probe_split(ds, o, 0), paper_split(ds));
  EXPECT_NE(describe_split(o).find("split_train_test.py"), std::string::npos);
}

TEST(ProbeMlp, GradientMatchesFiniteDifferences) {
  ProbeData d;
  d.inputs = 5;
  Rng rng(7);
  for (int r = 0; r < 9; ++r) {
    for (int k = 0; k < d.inputs; ++k)
      d.x.push_back(static_cast<float>(rng.uniform() * 2 - 1));
    d.y.push_back(static_cast<float>(r % 2));
    d.item.push_back(static_cast<std::size_t>(r));
  }
  MlpProbeOptions o;
  o.depth = 3;
  o.hidden = 6;
  ProbeMlp mlp(d.inputs, o, 1);
  std::vector<std::size_t> rows(9);
  std::iota(rows.begin(), rows.end(), std::size_t{0});
  std::vector<std::vector<float>> grad, scratch;
  mlp.loss_and_gradient(d, rows, grad);
  ASSERT_EQ(grad.size(), 6u);  // W, b for three layers
  int checked = 0;
  for (std::size_t p = 0; p < grad.size(); ++p) {
    for (std::size_t t = 0; t < grad[p].size(); t += 3) {
      float& w = mlp.parameters()[p][t];
      const float keep = w;
      constexpr float kH = 1e-2f;
      w = keep + kH;
      const double up = mlp.loss_and_gradient(d, rows, scratch);
      w = keep - kH;
      const double down = mlp.loss_and_gradient(d, rows, scratch);
      w = keep;
      const double numeric = (up - down) / (2.0 * kH);
      EXPECT_NEAR(grad[p][t], numeric, 2e-3 + 2e-2 * std::abs(numeric)) << p << "/" << t;
      ++checked;
    }
  }
  EXPECT_GT(checked, 20);
}

TEST(Probe, SeparablePairProbesReachFullAccuracyAndControlsStayNearChance) {
  WinogroundDataset ds = tagged_dataset(200);
  ProbeEmbeddings e = separable_embeddings(200, 6, 11);
  for (ProbeTask task : {ProbeTask::PairText, ProbeTask::PairImage, ProbeTask::TextOnly}) {
    ProbeResult r = run_mlp_probe(task, ds, e.layers[0], e, small_options());
    ASSERT_EQ(r.runs.size(), 3u);
    EXPECT_EQ(r.train_items, 150u);
    EXPECT_EQ(r.test_items, 50u);
    EXPECT_DOUBLE_EQ(r.target_min, 1.0) << to_string(task);
    // 50 test items, half of all items flipped at random: a probe cannot know which.
    EXPECT_GT(r.control_min, 0.25) << to_string(task);
    EXPECT_LT(r.control_max, 0.75) << to_string(task);
    for (const auto& run : r.runs)
      EXPECT_DOUBLE_EQ(run.target_train, 1.0);
  }
}

TEST(Probe, SameSeedSameAccuraciesWhateverTheParallelism) {
  WinogroundDataset ds = tagged_dataset(60);
  ProbeEmbeddings e = separable_embeddings(60, 4, 2);
  ProbeOptions o = small_options();
  o.mlp.epochs = 5;
  o.parallel_fits = 1;
  const ProbeResult a = run_mlp_probe(ProbeTask::PairText, ds, e.layers[0], e, o);
  o.parallel_fits = 3;
  const ProbeResult b = run_mlp_probe(ProbeTask::PairText, ds, e.layers[0], e, o);
  ASSERT_EQ(a.runs.size(), b.runs.size());
  for (std::size_t s = 0; s < a.runs.size(); ++s) {
    EXPECT_EQ(a.runs[s].target_test, b.runs[s].target_test);
    EXPECT_EQ(a.runs[s].control_test, b.runs[s].control_test);
  }
}

TEST(Probe, DataLayoutAndBalancedLabels) {
  ProbeEmbeddings e = separable_embeddings(100, 3, 5);
  ProbeData d = probe_data(ProbeTask::PairText, e.layers[0], e, 100, 0);
  ASSERT_EQ(d.rows(), 200u);
  EXPECT_EQ(d.inputs, 12);
  const double positives = std::accumulate(d.y.begin(), d.y.end(), 0.0);
  EXPECT_GT(positives, 70);
  EXPECT_LT(positives, 130);
  // Row 0 is image 0 of item 0 twice, with caption 0 first when the label is 1.
  const auto& l = e.layers[0];
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(d.x[static_cast<std::size_t>(k)], l.image[static_cast<std::size_t>(k)]);
    EXPECT_EQ(d.x[static_cast<std::size_t>(6 + k)], l.image[static_cast<std::size_t>(k)]);
    const std::size_t first_caption = d.y[0] > 0.5f ? 0 : 1;
    EXPECT_EQ(d.x[static_cast<std::size_t>(3 + k)], l.text[first_caption * 3 + k]);
  }
  ProbeData t = probe_data(ProbeTask::TextOnly, e.layers[0], e, 100, 0);
  EXPECT_EQ(t.rows(), 400u);
  EXPECT_EQ(t.inputs, 9);
}

TEST(Svm, KnownMarginAndNonSeparableSets) {
  // x = +1 against x = -1 (second feature 0): w = (1, 0), b = 0, margin 2.
  const SvmFit a = linear_svm({1, 0, -1, 0}, 2, {1, -1}, 100);
  EXPECT_TRUE(a.separated);
  EXPECT_NEAR(a.margin, 2.0, 1e-3);
  // Four points at +-3 and +-5 on one axis: the closest pair sets the margin (6).
  const SvmFit b = linear_svm({3, 5, -3, -5}, 1, {1, 1, -1, -1}, 100);
  EXPECT_TRUE(b.separated);
  EXPECT_NEAR(b.margin, 6.0, 1e-2);
  // XOR is not linearly separable.
  const SvmFit c = linear_svm({0, 0, 1, 1, 0, 1, 1, 0}, 2, {1, 1, -1, -1}, 100);
  EXPECT_FALSE(c.separated);
}

TEST(Svm, SeparabilityOverItems) {
  ProbeEmbeddings e = separable_embeddings(30, 5, 9);
  const SvmLayerResult r = svm_separability(e.layers[0], e, {});
  EXPECT_EQ(r.items, 30u);
  EXPECT_DOUBLE_EQ(r.target_separated, 1.0);
  EXPECT_GT(r.target_margin, 1.0);  // the sets sit about sqrt(2) apart
  // Random reassignment of 6 points into 3 + 3 breaks most separations' margins.
  EXPECT_LT(r.control_margin, r.target_margin);
}

TEST(Npy, RoundTripAndRefusals) {
  const std::vector<float> v = {1.5f, -2, 3, 4, 5, 6};
  const NpyArray a = parse_npy(encode_npy_f32({2, 3}, v), "a.npy");
  EXPECT_EQ(a.shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(a.values, v);
  const NpyArray b = parse_npy(encode_npy_f32({6}, v), "b.npy");
  EXPECT_EQ(b.shape, (std::vector<std::int64_t>{6}));
  std::string bytes = encode_npy_f32({2, 3}, v);
  std::string be = bytes;
  be.replace(be.find("<f4"), 3, ">f4");
  EXPECT_THROW(parse_npy(be, "be.npy"), InputError);
  std::string fortran = bytes;
  fortran.replace(fortran.find("False"), 5, "True ");
  EXPECT_THROW(parse_npy(fortran, "f.npy"), InputError);
  EXPECT_THROW(parse_npy(bytes.substr(0, bytes.size() - 4), "short.npy"), InputError);
  EXPECT_THROW(parse_npy("not numpy", "x.npy"), InputError);
  try {
    parse_npy(be, "be.npy");
  } catch (const InputError& e) {
    EXPECT_EQ(e.location().file, "be.npy");
    EXPECT_EQ(e.location().field, "descr");
  }
}

TEST(ProbeEmbeddings, ReadsEmbedFilesAndNpyFoldersAlike) {
  test::TempDir dir;
  WinogroundDataset ds = test::dataset_of(2);
  // Rows out of dataset order, one unrelated row, two variants.
  const std::vector<std::string> image_ids = {"ex_1_img_0", "ex_0_img_0", "ex_0_img_1",
                                              "ex_1_img_1"};
  const std::vector<std::string> text_ids = {"0_c0",       "0_c1",  "1_c0",        "1_c1",
                                             "0_c1:syn:0", "other", "1_c0:slang:1"};
  std::vector<float> img(4 * 2), txt(7 * 3);
  std::iota(img.begin(), img.end(), 0.0f);
  std::iota(txt.begin(), txt.end(), 100.0f);
  const std::string st =
      encode_safetensors_f32({{"image_embeds", {{4, 2}, img}}, {"text_embeds", {{7, 3}, txt}}},
                             {{"image_ids", nlohmann::json(image_ids).dump()},
                              {"text_ids", nlohmann::json(text_ids).dump()}});
  const auto file = dir.write("e.safetensors", st);
  std::string ids_img, ids_txt;
  for (const auto& s : image_ids)
    ids_img += s + "\n";
  for (const auto& s : text_ids)
    ids_txt += s + "\n";
  dir.write("npy/image_embeds.npy", encode_npy_f32({4, 2}, img));
  dir.write("npy/text_embeds.npy", encode_npy_f32({7, 3}, txt));
  dir.write("npy/image_ids.txt", ids_img);
  dir.write("npy/text_ids.txt", ids_txt);
  for (const auto& path : {file, dir.path() / "npy"}) {
    ProbeEmbeddings e = probe_embeddings(ds, load_embedding_table(path));
    ASSERT_EQ(e.layers.size(), 1u);
    const ProbeLayer& l = e.layers[0];
    EXPECT_EQ(l.name, "final");
    // Image 0 of example 0 is row 1 of the table.
    EXPECT_EQ(l.image[0], 2.0f);
    EXPECT_EQ(l.image[2 * 2], 0.0f);  // image 0 of example 1: row 0
    EXPECT_EQ(e.variant_owner, (std::vector<std::size_t>{1, 2}));
    EXPECT_EQ(l.variants[0], 112.0f);  // text row 4
    EXPECT_EQ(l.variants[3], 118.0f);  // text row 6
  }
  // A missing caption row is named.
  const auto bad = dir.write(
      "bad.safetensors", encode_safetensors_f32({{"image_embeds", {{4, 2}, img}},
                                                 {"text_embeds", {{1, 3}, {1, 2, 3}}}},
                                                {{"image_ids", nlohmann::json(image_ids).dump()},
                                                 {"text_ids", nlohmann::json({"0_c0"}).dump()}}));
  try {
    probe_embeddings(ds, load_embedding_table(bad));
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("0_c1"), std::string::npos) << e.what();
  }
  // Row counts must match the ids.
  const auto mismatch =
      dir.write("mismatch.safetensors",
                encode_safetensors_f32({{"image_embeds", {{4, 2}, img}}},
                                       {{"image_ids", nlohmann::json({"a"}).dump()}}));
  EXPECT_THROW(load_embedding_table(mismatch), InputError);
}

}  // namespace
}  // namespace winokit

namespace winokit {
namespace {

// Issue 12, item 11: Mean@l / Max@l states read from embedding files (safetensors and the .npy
// folder) by the names `embed --hidden-states` writes.
TEST(ProbeEmbeddings, MeanAndMaxPooledStatesFromFiles) {
  test::TempDir dir;
  WinogroundDataset ds = test::dataset_of(1);
  // [L + 1 = 2, rows 2, width 3]; the token, mean and max states differ by their base value.
  auto states = [](float base) {
    std::vector<float> v(2 * 2 * 3);
    std::iota(v.begin(), v.end(), base);
    return v;
  };
  const std::vector<std::pair<std::string, float>> names = {
      {"image_hidden_cls", 0},   {"text_hidden_eot", 100},  {"image_hidden_mean", 200},
      {"text_hidden_mean", 300}, {"image_hidden_max", 400}, {"text_hidden_max", 500}};
  std::map<std::string, std::pair<std::vector<std::int64_t>, std::vector<float>>> tensors;
  for (const auto& [name, base] : names) {
    tensors[name] = {{2, 2, 3}, states(base)};
    dir.write("npy/" + name + ".npy", encode_npy_f32({2, 2, 3}, states(base)));
  }
  dir.write("npy/image_ids.txt", "ex_0_img_0\nex_0_img_1\n");
  dir.write("npy/text_ids.txt", "0_c0\n0_c1\n");
  const auto st =
      dir.write("e.safetensors",
                encode_safetensors_f32(tensors, {{"image_ids", R"(["ex_0_img_0", "ex_0_img_1"])"},
                                                 {"text_ids", R"(["0_c0", "0_c1"])"}}));
  for (const auto& path : {st, dir.path() / "npy"}) {
    SCOPED_TRACE(path.string());
    const EmbeddingTable table = load_embedding_table(path);
    const ProbeEmbeddings cls = probe_embeddings(ds, table);
    const ProbeEmbeddings mean = probe_embeddings(ds, table, ProbePooling::Mean);
    const ProbeEmbeddings max = probe_embeddings(ds, table, ProbePooling::Max);
    ASSERT_EQ(mean.layers.size(), 2u);
    EXPECT_EQ(cls.layers[1].image[0], 6.0f);     // layer 1, row 0
    EXPECT_EQ(mean.layers[1].image[0], 206.0f);  // image_hidden_mean
    EXPECT_EQ(mean.layers[0].text[3], 303.0f);   // text_hidden_mean, layer 0, row 1
    EXPECT_EQ(max.layers[1].text[0], 506.0f);    // text_hidden_max
  }
  // A file without pooled states is refused, naming what is missing.
  dir.write("cls/image_hidden_cls.npy", encode_npy_f32({2, 2, 3}, states(0)));
  dir.write("cls/text_hidden_eot.npy", encode_npy_f32({2, 2, 3}, states(100)));
  dir.write("cls/image_ids.txt", "ex_0_img_0\nex_0_img_1\n");
  dir.write("cls/text_ids.txt", "0_c0\n0_c1\n");
  try {
    probe_embeddings(ds, load_embedding_table(dir.path() / "cls"), ProbePooling::Max);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no max-pooled states (image_hidden_max and "
                                         "text_hidden_max)"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace winokit

namespace winokit {
namespace {

// Issue 12, item 11: the paper's fixed split (split_train_test.py): 300 train, 100 test ids.
TEST(ProbeSplit, PapersFixedSplit) {
  WinogroundDataset ds = test::dataset_of(400);
  const auto train = paper_split(ds);
  EXPECT_EQ(std::count(train.begin(), train.end(), true), 300);
  EXPECT_FALSE(train[*ds.find("12")]);   // first test id
  EXPECT_FALSE(train[*ds.find("398")]);  // last test id
  EXPECT_TRUE(train[*ds.find("0")]);     // in train_idxs
  EXPECT_TRUE(train[*ds.find("399")]);
  EXPECT_THROW(paper_split(test::dataset_of(10)), UsageError);
}

}  // namespace
}  // namespace winokit

namespace winokit {
namespace {

// Issue 12, item 11: pair probes over joint per-pair embeddings (one vector per caption-image
// pair, for UNITER/LXMERT-style models scored elsewhere), ids <example id>_c<k>_i<j>.
TEST(ProbeEmbeddings, JointPerPairEmbeddings) {
  test::TempDir dir;
  WinogroundDataset ds = test::dataset_of(2);
  std::string ids;
  std::vector<float> v;
  // Rows in reverse order; value = 10 * (4 * example + 2 * caption + image) + dimension.
  for (int r = 7; r >= 0; --r) {
    const int i = r / 4, c = (r / 2) % 2, k = r % 2;
    ids += std::to_string(i) + "_c" + std::to_string(c) + "_i" + std::to_string(k) + "\n";
    for (int d = 0; d < 3; ++d)
      v.push_back(static_cast<float>(10 * r + d));
  }
  dir.write("pairs/pair_embeds.npy", encode_npy_f32({8, 3}, v));
  dir.write("pairs/pair_ids.txt", ids);
  const ProbeEmbeddings e = probe_embeddings(ds, load_embedding_table(dir.path() / "pairs"));
  ASSERT_EQ(e.layers.size(), 1u);
  EXPECT_EQ(e.layers[0].name, "final");
  EXPECT_EQ(e.layers[0].pair_dim, 3);
  EXPECT_EQ(e.layers[0].pairs[3 * 5], 50.0f);  // example 1, caption 0, image 1
  const ProbeData d = probe_data(ProbeTask::PairText, e.layers[0], e, 2, 0);
  ASSERT_EQ(d.inputs, 6);
  ASSERT_EQ(d.rows(), 4u);
  for (std::size_t r = 0; r < d.rows(); ++r) {
    // Text task: both pairs share the image; the first is the match when the label is 1.
    const float first = d.x[r * 6], second = d.x[r * 6 + 3];
    const int fr = static_cast<int>(first) / 10, sr = static_cast<int>(second) / 10;
    EXPECT_EQ(fr % 2, sr % 2);                          // same image
    EXPECT_NE((fr / 2) % 2, (sr / 2) % 2);              // different captions
    EXPECT_EQ(d.y[r] == 1.0f, (fr / 2) % 2 == fr % 2);  // caption k matches image k
  }
  // A missing pair is named.
  dir.write("bad/pair_embeds.npy", encode_npy_f32({1, 3}, {1, 2, 3}));
  dir.write("bad/pair_ids.txt", "0_c0_i0\n");
  try {
    probe_embeddings(ds, load_embedding_table(dir.path() / "bad"));
    FAIL();
  } catch (const InputError& err) {
    EXPECT_NE(std::string(err.what()).find("no row for pair '0_c0_i1'"), std::string::npos)
        << err.what();
  }
}

}  // namespace
}  // namespace winokit
