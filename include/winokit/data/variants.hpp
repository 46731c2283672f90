// Caption variants ("Why is Winoground Hard?", Diwan et al. 2022): generators that run offline,
// and the augmentation-aware score (the paper's appendix D and the official
// winoground_text_aug_expts.py)
//   S_aug(I, T) = (1 - lambda) S(I, T) + lambda * agg_i S(I, T_i),  agg in {mean, max}
// where the T_i are the variants of caption T and, by default, T itself as the identity variant
// (the official code aggregates over the list whose first entry is the original); with
// `include_original = false` the aggregate runs over the variants only. A caption without
// variants keeps S either way.
//
// Variants made elsewhere (paraphrase, back-translation, syntactic rewrites: generative models)
// are imported from a file in either layout, and scored like the built-in ones:
//   - winokit's JSONL, one variant a line: {"id", "caption": 0|1, "augmentation", "text"};
//   - the official examples_augmented.jsonl of "Why is Winoground Hard?": one example a line,
//     its "caption_0" and "caption_1" each a list of {"type", "name", "variant"}, the first
//     {"type": "original"} (skipped); `augmentation` is the entry's "name" and `family` its
//     "type" (paraphrasing, rulebased, semanticwordbased).
//
//   auto wn = winokit::WordNet::open("/usr/share/wordnet");
//   auto variants = winokit::generate_variants(dataset, winokit::VariantMethod::Synonym, wn, {});
//   std::string jsonl = winokit::variants_jsonl(dataset, variants);
//
// Generators substitute one word per variant and treat each caption on its own, as the official
// augmentation script does (its own words, replacements and seeded stream; the two captions of
// a pair need not get the same substitution). WordNet lookups keep the word's part of speech in
// its context and its inflection (WordNet::in_context), then use the most frequent sense (the
// first in WordNet's index) after WordNet's own lemmatisation (the exception lists and suffix
// rules of morphy); the substitute is the lemma as WordNet writes it (underscores become
// spaces), inflected as the word. Seeded; a variant identical to its caption is dropped.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "winokit/data/winoground.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(data);

namespace winokit {

struct CaptionVariant {
  std::size_t example = 0;  // index into dataset.examples
  int caption = 0;          // 0 or 1
  std::string augmentation;
  std::string text;
  std::string family;  // the official layout's "type"; empty for winokit's JSONL
};

std::vector<CaptionVariant> load_variants(const std::string& file,
                                          const WinogroundDataset& dataset);
std::string variants_jsonl(const WinogroundDataset& dataset,
                           const std::vector<CaptionVariant>& variants);

enum class WordRelation { Synonym, Hypernym, Hyponym };

class WordNet {
 public:
  static WordNet open(const std::filesystem::path& dir = "/usr/share/wordnet");
  WordNet(WordNet&&) noexcept;
  ~WordNet();
  // Lemma forms of `word` found in WordNet (the word itself first, then morphy's).
  std::vector<std::string> lemmas(const std::string& word) const;
  std::vector<std::string> synonyms(const std::string& word) const;
  std::vector<std::string> hypernyms(const std::string& word) const;
  std::vector<std::string> hyponyms(const std::string& word) const;
  // Replacements for caption word `i` of `words` (the caption split on white space) that agree
  // with it: only senses of a part of speech the word can have in its context (after a
  // determiner, preposition or adjective a noun or an adjective; after a form of "be" an
  // adjective or participle; after another word a verb when it has a verb reading), the most
  // sense-tagged one first, and each replacement inflected as the word is ("kisses" after a
  // noun is the verb: "busses", never the noun "osculation"). Irregular forms get none.
  std::vector<std::string> in_context(const std::vector<std::string>& words, std::size_t i,
                                      WordRelation relation) const;

 private:
  WordNet();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

enum class VariantMethod { Synonym, Hypernym, Hyponym, Substitution };
const char* to_string(VariantMethod method);

struct VariantOptions {
  std::uint64_t seed = 0;
  int per_caption = 3;  // at most this many variants per caption and method
  std::map<std::string, std::string> substitutions;  // for VariantMethod::Substitution
};

std::vector<CaptionVariant> generate_variants(const WinogroundDataset& dataset,
                                              VariantMethod method, const WordNet* wordnet,
                                              const VariantOptions& options);
std::map<std::string, std::string> load_substitutions(const std::string& file);

}  // namespace winokit
