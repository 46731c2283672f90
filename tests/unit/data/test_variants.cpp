#include <gtest/gtest.h>

#include <algorithm>

#include "test_util.hpp"
#include "winokit/core/error.hpp"
#include "winokit/core/text.hpp"
#include "winokit/data/variants.hpp"
#include "winokit/eval/augment.hpp"

namespace winokit {
namespace {

WinogroundDataset pair_dataset() {
  return parse_examples(
      R"({"id": 0, "caption_0": "an old dog bites a young cat", "caption_1": "a young dog bites an old cat", "image_0": "a", "image_1": "b"})"
      "\n",
      "e.jsonl");
}

TEST(Variants, SubstitutionKeepsThePairAPair) {
  WinogroundDataset ds = pair_dataset();
  VariantOptions o;
  o.substitutions = {{"dog", "doggo"}, {"cat", "kitty"}};
  auto v = generate_variants(ds, VariantMethod::Substitution, nullptr, o);
  ASSERT_EQ(v.size(), 4u);  // two substituted words, each in both captions
  for (std::size_t i = 0; i + 1 < v.size(); i += 2) {
    auto w0 = split_whitespace(v[i].text), w1 = split_whitespace(v[i + 1].text);
    std::sort(w0.begin(), w0.end());
    std::sort(w1.begin(), w1.end());
    EXPECT_EQ(w0, w1) << v[i].text << " / " << v[i + 1].text;
    EXPECT_EQ(v[i].augmentation, "substitution");
  }
}

TEST(Variants, WordNetLookupsUseTheMostFrequentSense) {
  auto wn = WordNet::open();
  EXPECT_EQ(wn.lemmas("kisses"), (std::vector<std::string>{"kiss"}));
  auto syn = wn.synonyms("dog");
  EXPECT_NE(std::find(syn.begin(), syn.end(), "domestic dog"), syn.end());
  auto hyper = wn.hypernyms("dog");
  EXPECT_NE(std::find(hyper.begin(), hyper.end(), "canine"), hyper.end());
  auto hypo = wn.hyponyms("dog");
  EXPECT_NE(std::find(hypo.begin(), hypo.end(), "puppy"), hypo.end());
  EXPECT_TRUE(wn.synonyms("zzzzqqq").empty());
  // Seeded and deterministic; identical variants are dropped.
  WinogroundDataset ds = pair_dataset();
  VariantOptions o;
  auto a = generate_variants(ds, VariantMethod::Hypernym, &wn, o);
  auto b = generate_variants(ds, VariantMethod::Hypernym, &wn, o);
  ASSERT_FALSE(a.empty());
  EXPECT_EQ(variants_jsonl(ds, a), variants_jsonl(ds, b));
  for (const auto& v : a)
    EXPECT_NE(v.text, ds.examples[0].captions[static_cast<std::size_t>(v.caption)]);
}

TEST(Variants, ImportsTheOfficialAugmentedLayout) {
  WinogroundDataset ds = pair_dataset();
  auto v = load_variants(
      std::string(WINOKIT_SOURCE_DIR) + "/tests/fixtures/variants/examples_augmented.jsonl", ds);
  ASSERT_EQ(v.size(), 4u);  // the originals are skipped
  EXPECT_EQ(v[0].caption, 0);
  EXPECT_EQ(v[0].augmentation, "backtranslation");
  EXPECT_EQ(v[0].family, "paraphrasing");
  EXPECT_EQ(v[0].text, "an elderly dog bites a young cat");
  EXPECT_EQ(v[3].caption, 1);
  EXPECT_EQ(v[3].augmentation, "propbanksrlroles");
  test::TempDir dir;
  auto bad = dir.write("b.jsonl", R"({"id": 0, "caption_0": [{"type": "x"}], "caption_1": []})");
  try {
    load_variants(bad.string(), ds);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("b.jsonl:1: field 'caption_0[0]'"), std::string::npos)
        << e.what();
  }
}

TEST(Variants, BadLinesNameFileAndLine) {
  test::TempDir dir;
  WinogroundDataset ds = pair_dataset();
  auto f = dir.write("v.jsonl", R"({"id": 0, "caption": 2, "augmentation": "x", "text": "t"})"
                                "\n");
  try {
    load_variants(f.string(), ds);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("v.jsonl:1: field 'caption'"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(
      load_variants(
          dir.write("u.jsonl", R"({"id": 9, "caption": 0, "augmentation": "x", "text": "t"})")
              .string(),
          ds),
      InputError);
  // A variant identical to its caption is dropped.
  auto same = dir.write(
      "s.jsonl",
      R"({"id": 0, "caption": 0, "augmentation": "x", "text": "an old dog bites a young cat"})");
  EXPECT_TRUE(load_variants(same.string(), ds).empty());
}

}  // namespace
}  // namespace winokit
