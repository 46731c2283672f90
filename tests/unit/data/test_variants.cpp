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

TEST(Variants, SubstitutionTreatsEachCaptionOnItsOwn) {
  WinogroundDataset ds = pair_dataset();
  VariantOptions o;
  o.substitutions = {{"dog", "doggo"}, {"cat", "kitty"}};
  auto v = generate_variants(ds, VariantMethod::Substitution, nullptr, o);
  ASSERT_EQ(v.size(), 4u);  // two substituted words per caption
  for (const auto& x : v)
    EXPECT_EQ(x.augmentation, "substitution");
  // A word only in caption 1 is substituted there: the captions are augmented independently,
  // as the official script does, not with caption 0's swap applied to both.
  WinogroundDataset other = parse_examples(
      R"({"id": 3, "caption_0": "a dog sleeps", "caption_1": "a cat sleeps", "image_0": "a", "image_1": "b"})"
      "\n",
      "e.jsonl");
  o.substitutions = {{"cat", "kitty"}};
  auto w = generate_variants(other, VariantMethod::Substitution, nullptr, o);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].caption, 1);
  EXPECT_EQ(w[0].text, "a kitty sleeps");
}

// "kisses" after a noun is a verb: its replacements are the verb's, inflected ("osculates"),
// never the noun's "osculation"; after a determiner a word is a noun or an adjective.
TEST(Variants, WordNetReplacementsAgreeInPartOfSpeechAndInflection) {
  auto wn = WordNet::open();
  const std::vector<std::string> words = split_whitespace("an old person kisses a young person");
  auto kisses = wn.in_context(words, 3, WordRelation::Synonym);
  EXPECT_EQ(kisses, (std::vector<std::string>{"snogs", "busses", "osculates"}));
  EXPECT_EQ(std::find(kisses.begin(), kisses.end(), "osculation"), kisses.end());
  // The noun reading after a determiner keeps the plural: "the kisses" -> "busses"/"osculations".
  const std::vector<std::string> noun = split_whitespace("the kisses");
  EXPECT_EQ(wn.in_context(noun, 1, WordRelation::Synonym),
            (std::vector<std::string>{"busses", "osculations"}));
  // Plural nouns stay plural under hypernyms: "two dogs" -> "two canines".
  const std::vector<std::string> dogs = split_whitespace("two dogs");
  auto hyper = wn.in_context(dogs, 1, WordRelation::Hypernym);
  EXPECT_NE(std::find(hyper.begin(), hyper.end(), "canines"), hyper.end());
  // Generated variants of the real first Winoground caption never hold the noun.
  WinogroundDataset ds = parse_examples(
      R"({"id": 0, "caption_0": "an old person kisses a young person", "caption_1": "a young person kisses an old person", "image_0": "a", "image_1": "b"})"
      "\n",
      "e.jsonl");
  VariantOptions o;
  o.per_caption = 10;
  for (const auto& v : generate_variants(ds, VariantMethod::Synonym, &wn, o)) {
    EXPECT_EQ(v.text.find("osculation"), std::string::npos) << v.text;
    EXPECT_EQ(v.text.find(" buss "), std::string::npos) << v.text;
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
