#include "winokit/data/variants.hpp"

#include <algorithm>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "winokit/core/error.hpp"
#include "winokit/core/rng.hpp"
#include "winokit/core/text.hpp"
#include "winokit/io/files.hpp"
#include "winokit/io/table.hpp"

namespace winokit {

namespace fs = std::filesystem;
using nlohmann::json;

const char* to_string(VariantMethod m) {
  switch (m) {
    case VariantMethod::Synonym:
      return "wordnet-synonym";
    case VariantMethod::Hypernym:
      return "wordnet-hypernym";
    case VariantMethod::Hyponym:
      return "wordnet-hyponym";
    case VariantMethod::Substitution:
      return "substitution";
  }
  return "?";
}

namespace {

// One line of the official examples_augmented.jsonl: an example whose caption_0 and caption_1
// are lists of {"type", "name", "variant"}, the original first.
void read_official_variants(const json& j, const WinogroundDataset& ds, const std::string& file,
                            std::size_t line, std::vector<CaptionVariant>& out) {
  auto id = j.contains("id") ? id_text(j["id"]) : std::nullopt;
  if (!id) throw InputError({file, line, "id"}, "missing or not an id");
  auto index = ds.find(*id);
  if (!index) throw InputError({file, line, "id"}, "unknown example id '" + *id + "'");
  for (int c = 0; c < 2; ++c) {
    const std::string field = "caption_" + std::to_string(c);
    if (!j.contains(field) || !j[field].is_array())
      throw InputError({file, line, field}, "expected a list of {type, name, variant}");
    const std::string& caption = ds.examples[*index].captions[static_cast<std::size_t>(c)];
    for (std::size_t i = 0; i < j[field].size(); ++i) {
      const json& e = j[field][i];
      const std::string where = field + "[" + std::to_string(i) + "]";
      if (!e.is_object() || !e.contains("variant") || !e["variant"].is_string() ||
          !e.contains("name") || !e["name"].is_string()) {
        throw InputError({file, line, where}, "expected an object with string name and variant");
      }
      const std::string type =
          e.contains("type") && e["type"].is_string() ? e["type"].get<std::string>() : "";
      if (type == "original") continue;
      CaptionVariant v;
      v.example = *index;
      v.caption = c;
      v.augmentation = e["name"].get<std::string>();
      v.family = type;
      v.text = e["variant"].get<std::string>();
      if (!is_valid_utf8(v.text)) throw InputError({file, line, where}, "invalid UTF-8");
      if (trim(v.text).empty() || v.text == caption) continue;  // as the official generator
      out.push_back(std::move(v));
    }
  }
}

}  // namespace

std::vector<CaptionVariant> load_variants(const std::string& file, const WinogroundDataset& ds) {
  std::string text = read_text_file(file);
  std::vector<CaptionVariant> out;
  auto lines = split_lines(text);
  for (std::size_t n = 0; n < lines.size(); ++n) {
    if (trim(lines[n]).empty()) continue;
    Location where{file, n + 1, ""};
    if (!is_valid_utf8(lines[n])) throw InputError(where, "invalid UTF-8");
    json j;
    try {
      j = json::parse(lines[n]);
    } catch (const json::exception& e) {  // parse_error, or out_of_range (1e400)
      throw InputError(where, std::string("malformed JSON: ") + e.what());
    }
    if (!j.is_object()) throw InputError(where, "expected a JSON object");
    if (j.contains("caption_0") && j["caption_0"].is_array()) {
      read_official_variants(j, ds, file, n + 1, out);
      continue;
    }
    auto id = j.contains("id") ? id_text(j["id"]) : std::nullopt;
    if (!id) throw InputError({file, n + 1, "id"}, "missing or not an id");
    auto index = ds.find(*id);
    if (!index) throw InputError({file, n + 1, "id"}, "unknown example id '" + *id + "'");
    CaptionVariant v;
    v.example = *index;
    if (!j.contains("caption") || !j["caption"].is_number_integer() ||
        (j["caption"].get<int>() != 0 && j["caption"].get<int>() != 1)) {
      throw InputError({file, n + 1, "caption"}, "expected 0 or 1");
    }
    v.caption = j["caption"].get<int>();
    if (!j.contains("augmentation") || !j["augmentation"].is_string()) {
      throw InputError({file, n + 1, "augmentation"}, "missing or not a string");
    }
    v.augmentation = j["augmentation"].get<std::string>();
    if (!j.contains("text") || !j["text"].is_string() ||
        trim(j["text"].get<std::string>()).empty()) {
      throw InputError({file, n + 1, "text"}, "missing or empty");
    }
    v.text = j["text"].get<std::string>();
    if (v.text == ds.examples[v.example].captions[static_cast<std::size_t>(v.caption)]) continue;
    out.push_back(std::move(v));
  }
  return out;
}

std::string variants_jsonl(const WinogroundDataset& ds,
                           const std::vector<CaptionVariant>& variants) {
  std::string out;
  for (const auto& v : variants) {
    const auto& ex = ds.examples[v.example];
    json j = {{"id", ds.numeric_ids ? json(std::stoll(ex.id)) : json(ex.id)},
              {"caption", v.caption},
              {"augmentation", v.augmentation},
              {"text", v.text}};
    out += j.dump() + "\n";
  }
  return out;
}

// ---- WordNet (the database files of Debian's wordnet-base) ----
struct WordNet::Impl {
  static constexpr std::array<const char*, 4> kPos = {"noun", "verb", "adj", "adv"};
  struct Entry {
    std::vector<long> offsets;  // synsets, most frequent sense first
    int tagged = 0;             // sense-tagged occurrences in WordNet's corpus
  };
  std::array<std::map<std::string, Entry>, 4> index;             // lemma -> synsets
  std::array<std::string, 4> data;                               // whole data.<pos> files
  std::array<std::map<std::string, std::string>, 4> exceptions;  // inflected -> base

  // The synset line at `offset` of data.<pos>: its words and pointers of `symbol`.
  std::pair<std::vector<std::string>, std::vector<std::pair<long, int>>> synset(
      int pos, long offset, const std::string& symbol) const {
    const std::string& d = data[static_cast<std::size_t>(pos)];
    const std::size_t end = d.find('\n', static_cast<std::size_t>(offset));
    std::vector<std::string> f = split_whitespace(std::string_view(d).substr(
        static_cast<std::size_t>(offset), end - static_cast<std::size_t>(offset)));
    std::vector<std::string> words;
    std::vector<std::pair<long, int>> pointers;
    if (f.size() < 4) return {words, pointers};
    const int w_cnt = std::stoi(f[3], nullptr, 16);
    std::size_t i = 4;
    for (int w = 0; w < w_cnt && i + 1 < f.size(); ++w, i += 2) {
      std::string word = f[i];
      if (auto paren = word.find('('); paren != std::string::npos)
        word.resize(paren);  // adj markers
      std::replace(word.begin(), word.end(), '_', ' ');
      words.push_back(word);
    }
    if (i >= f.size()) return {words, pointers};
    const int p_cnt = std::stoi(f[i++]);
    for (int p = 0; p < p_cnt && i + 3 < f.size(); ++p, i += 4) {
      if (f[i] == symbol) {
        const int target_pos = f[i + 2] == "n"                      ? 0
                               : f[i + 2] == "v"                    ? 1
                               : f[i + 2] == "a" || f[i + 2] == "s" ? 2
                                                                    : 3;
        pointers.emplace_back(std::stol(f[i + 1]), target_pos);
      }
    }
    return {words, pointers};
  }

  // A base form of a surface word: the lemma, its part of speech and how the word inflects it
  // (the suffix rule's surface suffix and lemma ending; `irregular` for an exception list).
  struct BaseForm {
    std::string lemma;
    int pos = 0;
    std::string suffix, ending;
    bool irregular = false;
  };

  // morphy: exception lists, then the suffix rules, keeping forms in the index.
  std::vector<std::pair<std::string, int>> base_forms(const std::string& word) const {
    std::vector<std::pair<std::string, int>> out;
    for (const auto& f : inflected_forms(word))
      if (std::find(out.begin(), out.end(), std::pair{f.lemma, f.pos}) == out.end())
        out.emplace_back(f.lemma, f.pos);
    return out;
  }

  std::vector<BaseForm> inflected_forms(const std::string& word) const {
    static const std::vector<std::vector<std::pair<std::string, std::string>>> kRules = {
        {{"s", ""},
         {"ses", "s"},
         {"xes", "x"},
         {"zes", "z"},
         {"ches", "ch"},
         {"shes", "sh"},
         {"men", "man"},
         {"ies", "y"}},
        {{"s", ""},
         {"ies", "y"},
         {"es", "e"},
         {"es", ""},
         {"ed", "e"},
         {"ed", ""},
         {"ing", "e"},
         {"ing", ""}},
        {{"er", ""}, {"est", ""}, {"er", "e"}, {"est", "e"}},
        {}};
    std::vector<BaseForm> out;
    for (int pos = 0; pos < 4; ++pos) {
      auto add = [&](const std::string& w, BaseForm f) {
        if (!index[static_cast<std::size_t>(pos)].count(w)) return;
        for (const auto& o : out)
          if (o.lemma == w && o.pos == pos) return;
        f.lemma = w;
        f.pos = pos;
        out.push_back(std::move(f));
      };
      add(word, {});
      if (auto e = exceptions[static_cast<std::size_t>(pos)].find(word);
          e != exceptions[static_cast<std::size_t>(pos)].end())
        add(e->second, {{}, pos, {}, {}, true});
      for (const auto& [suffix, repl] : kRules[static_cast<std::size_t>(pos)]) {
        if (word.size() > suffix.size() &&
            word.compare(word.size() - suffix.size(), suffix.size(), suffix) == 0) {
          add(word.substr(0, word.size() - suffix.size()) + repl, {{}, pos, suffix, repl, false});
        }
      }
    }
    return out;
  }

  // The words of a relation of one synset (`symbol` "" : the synset's own words).
  std::vector<std::string> relation_words(int pos, const std::string& lemma,
                                          const std::string& symbol) const {
    std::vector<std::string> out;
    const long first = index[static_cast<std::size_t>(pos)].at(lemma).offsets.front();
    auto [words, pointers] = synset(pos, first, symbol.empty() ? "\x01" : symbol);
    if (symbol.empty()) {
      for (const auto& w : words)
        if (to_lower_ascii(w) != lemma) out.push_back(w);
    } else {
      for (const auto& [offset, target] : pointers) {
        auto target_words = synset(target, offset, "\x01").first;
        if (!target_words.empty()) out.push_back(target_words.front());
      }
    }
    return out;
  }

  int most_tagged_pos(const std::string& word) const {
    int best = -1, tagged = -1;
    for (const auto& [lemma, pos] : base_forms(word)) {
      const int t = index[static_cast<std::size_t>(pos)].at(lemma).tagged;
      if (t > tagged) {
        tagged = t;
        best = pos;
      }
    }
    return best;
  }

  // The parts of speech caption word i may have in its context, by the words around it:
  // after a determiner, a preposition, an adjective or at the start, a noun or an adjective
  // ("a young person"); after a form of "be", an adjective or a participle; after another word
  // (the subject, a noun), a verb when the word has a verb reading ("a person kisses").
  std::set<int> context_pos(const std::vector<std::string>& words, std::size_t i) const {
    static const std::set<std::string> kModifierContext = {
        "",        "a",      "an",      "the",     "this",    "that",    "these",  "those",
        "some",    "his",    "her",     "their",   "its",     "my",      "your",   "our",
        "each",    "every",  "no",      "another", "one",     "two",     "three",  "four",
        "five",    "many",   "few",     "several", "more",    "most",    "less",   "fewer",
        "in",      "on",     "at",      "with",    "from",    "to",      "of",     "by",
        "for",     "into",   "onto",    "under",   "over",    "behind",  "above",  "below",
        "near",    "inside", "outside", "than",    "without", "through", "across", "around",
        "between", "beside", "toward",  "towards", "and",     "or",      "very",   "other"};
    static const std::set<std::string> kBe = {"is", "are",  "was",   "were",
                                              "be", "been", "being", "am"};
    constexpr int kNoun = 0, kVerb = 1, kAdj = 2, kAdv = 3;
    const std::string prev = i == 0 ? "" : to_lower_ascii(words[i - 1]);
    const std::string word = to_lower_ascii(words[i]);
    const bool participle = word.size() > 3 && (word.ends_with("ing") || word.ends_with("ed"));
    if (kModifierContext.count(prev)) return {kNoun, kAdj};
    if (kBe.count(prev)) return participle ? std::set<int>{kAdj, kVerb} : std::set<int>{kAdj};
    const int prev_pos = most_tagged_pos(prev);
    if (prev_pos == kAdj || prev_pos == kAdv) return {kNoun, kAdj};
    bool has_verb = false;
    for (const auto& [lemma, pos] : base_forms(word))
      has_verb = has_verb || pos == kVerb;
    if (has_verb) return {kVerb};
    return {kNoun, kAdj, kAdv};
  }

  // `replacement` (a lemma, maybe several words) inflected as `form` inflects its lemma:
  // nullopt when that cannot be done reliably (an irregular form).
  static std::optional<std::string> inflect(const std::string& replacement, const BaseForm& form) {
    if (form.irregular) return std::nullopt;
    if (form.suffix.empty()) return replacement;
    // Nouns inflect their last word ("domestic dogs"), verbs their first ("looks at").
    std::vector<std::string> parts = split_whitespace(replacement);
    if (parts.empty()) return std::nullopt;
    std::string& head = form.pos == 1 ? parts.front() : parts.back();
    const std::string& s = form.suffix;
    // English's regular rules for the inflection the word shows (the rule's own ending is the
    // original lemma's: "kisses" is kiss + "es", "osculate" takes "s").
    if (s == "men") {
      if (!head.ends_with("man")) return std::nullopt;
      head = head.substr(0, head.size() - 3) + "men";
    } else if (s == "s" || s == "es" || s == "ies" || s.ends_with("es")) {
      const bool sibilant = head.ends_with("s") || head.ends_with("x") || head.ends_with("z") ||
                            head.ends_with("ch") || head.ends_with("sh");
      const bool consonant_y =
          head.size() > 1 && head.back() == 'y' &&
          std::string("aeiou").find(head[head.size() - 2]) == std::string::npos;
      head = consonant_y ? head.substr(0, head.size() - 1) + "ies" : head + (sibilant ? "es" : "s");
    } else if (s == "ed") {
      head += head.ends_with("e") ? "d" : "ed";
    } else if (s == "ing") {
      head =
          (head.ends_with("e") && !head.ends_with("ee") ? head.substr(0, head.size() - 1) : head) +
          "ing";
    } else if (s == "er" || s == "est") {
      head += head.ends_with("e") ? s.substr(1) : s;
    } else {
      return std::nullopt;
    }
    std::string out;
    for (const auto& p : parts)
      out += (out.empty() ? "" : " ") + p;
    return out;
  }

  std::vector<std::string> related_in_context(const std::vector<std::string>& words, std::size_t i,
                                              const std::string& symbol) const {
    const std::set<int> allowed = context_pos(words, i);
    auto forms = inflected_forms(to_lower_ascii(words[i]));
    std::erase_if(forms, [&](const BaseForm& f) { return !allowed.count(f.pos); });
    std::stable_sort(forms.begin(), forms.end(), [&](const auto& a, const auto& b) {
      return index[static_cast<std::size_t>(a.pos)].at(a.lemma).tagged >
             index[static_cast<std::size_t>(b.pos)].at(b.lemma).tagged;
    });
    std::vector<std::string> out;
    for (const auto& form : forms) {
      for (const auto& r : relation_words(form.pos, form.lemma, symbol)) {
        if (auto inflected = inflect(r, form);
            inflected && std::find(out.begin(), out.end(), *inflected) == out.end())
          out.push_back(*inflected);
      }
      if (!out.empty()) break;
    }
    return out;
  }

  std::vector<std::string> related(const std::string& word, const std::string& symbol) const {
    std::vector<std::string> out;
    // The part of speech with the most sense-tagged occurrences first ("young": adjective).
    auto forms = base_forms(to_lower_ascii(word));
    std::stable_sort(forms.begin(), forms.end(), [&](const auto& a, const auto& b) {
      return index[static_cast<std::size_t>(a.second)].at(a.first).tagged >
             index[static_cast<std::size_t>(b.second)].at(b.first).tagged;
    });
    for (const auto& [lemma, pos] : forms) {
      const long first =
          index[static_cast<std::size_t>(pos)].at(lemma).offsets.front();  // most frequent sense
      auto [words, pointers] = synset(pos, first, symbol.empty() ? "\x01" : symbol);
      if (symbol.empty()) {
        for (const auto& w : words) {
          if (to_lower_ascii(w) != lemma) out.push_back(w);
        }
      } else {
        for (const auto& [offset, target] : pointers) {
          auto target_words = synset(target, offset, "\x01").first;
          if (!target_words.empty()) out.push_back(target_words.front());
        }
      }
      if (!out.empty()) break;
    }
    return out;
  }
};

WordNet::WordNet() : impl_(std::make_unique<Impl>()) {}
WordNet::WordNet(WordNet&&) noexcept = default;
WordNet::~WordNet() = default;

WordNet WordNet::open(const fs::path& dir) {
  WordNet wn;
  for (std::size_t p = 0; p < Impl::kPos.size(); ++p) {
    const fs::path index = dir / (std::string("index.") + Impl::kPos[p]);
    const fs::path data = dir / (std::string("data.") + Impl::kPos[p]);
    if (!fs::is_regular_file(index) || !fs::is_regular_file(data)) {
      throw IoError(index.string() + ": WordNet database not found",
                    "install Debian's wordnet-base (scripts/setup does)");
    }
    const std::string index_text = read_text_file(index);
    for (auto line : split_lines(index_text)) {
      if (line.empty() || line.front() == ' ') continue;  // licence header
      auto f = split_whitespace(line);
      if (f.size() < 4) continue;
      const std::size_t synsets = std::stoul(f[2]);
      if (synsets + 2 > f.size()) continue;
      Impl::Entry entry;
      for (std::size_t i = f.size() - synsets; i < f.size(); ++i)
        entry.offsets.push_back(std::stol(f[i]));
      entry.tagged = std::stoi(f[f.size() - synsets - 1]);
      wn.impl_->index[p][f[0]] = std::move(entry);
    }
    wn.impl_->data[p] = read_text_file(data);
    const fs::path exc = dir / (std::string(p == 2 ? "adj" : Impl::kPos[p]) + ".exc");
    if (fs::is_regular_file(exc)) {
      const std::string exc_text = read_text_file(exc);
      for (auto line : split_lines(exc_text)) {
        auto f = split_whitespace(line);
        if (f.size() >= 2) wn.impl_->exceptions[p][f[0]] = f[1];
      }
    }
  }
  return wn;
}

std::vector<std::string> WordNet::lemmas(const std::string& word) const {
  std::vector<std::string> out;
  for (const auto& [w, pos] : impl_->base_forms(to_lower_ascii(word))) {
    if (std::find(out.begin(), out.end(), w) == out.end()) out.push_back(w);
  }
  return out;
}
std::vector<std::string> WordNet::synonyms(const std::string& w) const {
  return impl_->related(w, "");
}
std::vector<std::string> WordNet::hypernyms(const std::string& w) const {
  return impl_->related(w, "@");
}
std::vector<std::string> WordNet::hyponyms(const std::string& w) const {
  return impl_->related(w, "~");
}
std::vector<std::string> WordNet::in_context(const std::vector<std::string>& words, std::size_t i,
                                             WordRelation relation) const {
  const char* symbol = relation == WordRelation::Synonym    ? ""
                       : relation == WordRelation::Hypernym ? "@"
                                                            : "~";
  return impl_->related_in_context(words, i, symbol);
}

std::map<std::string, std::string> load_substitutions(const std::string& file) {
  Table t = read_table(read_text_file(file), file);
  auto from = t.find_column({"word", "from", "original"});
  auto to = t.find_column({"replacement", "to", "substitute"});
  if (!from || !to) throw InputError({file, 1, ""}, "expected columns word and replacement");
  std::map<std::string, std::string> out;
  for (const auto& row : t.rows) {
    if (!is_valid_utf8(row.cells[*from]) || !is_valid_utf8(row.cells[*to])) {
      throw InputError({file, row.line, ""}, "invalid UTF-8");
    }
    out[to_lower_ascii(trim(row.cells[*from]))] = std::string(trim(row.cells[*to]));
  }
  return out;
}

namespace {

// Words of a caption that may be substituted: alphabetic, not a function word.
bool content_word(const std::string& w) {
  static const std::set<std::string> kStop = {
      "a",     "an", "the",  "is",  "are",  "and",  "or",   "of",    "in",
      "on",    "to", "with", "it",  "its",  "some", "one",  "other", "than",
      "while", "at", "by",   "for", "from", "this", "that", "there"};
  if (w.empty() || kStop.count(w)) return false;
  return std::all_of(w.begin(), w.end(), [](char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '-';
  });
}

std::string substitute(const std::string& caption, const std::string& word,
                       const std::string& with) {
  auto words = split_whitespace(caption);
  std::string out;
  for (const auto& w : words) {
    out += (out.empty() ? "" : " ") + (to_lower_ascii(w) == word ? with : w);
  }
  return out;
}

}  // namespace

std::vector<CaptionVariant> generate_variants(const WinogroundDataset& ds, VariantMethod method,
                                              const WordNet* wn, const VariantOptions& o) {
  if (method != VariantMethod::Substitution && wn == nullptr)
    throw UsageError("WordNet methods need the WordNet database");
  std::vector<CaptionVariant> out;
  for (std::size_t e = 0; e < ds.examples.size(); ++e) {
    const auto& ex = ds.examples[e];
    // Each caption on its own, as the official augmentation script (generate_variants over
    // caption_0, then caption_1): its own words, replacements and seeded stream.
    for (int c = 0; c < 2; ++c) {
      const std::string& caption = ex.captions[static_cast<std::size_t>(c)];
      Rng rng(derive_seed(o.seed,
                          std::string(to_string(method)) + "/" + ex.id + "/" + std::to_string(c)));
      const std::vector<std::string> words = split_whitespace(caption);
      std::vector<std::pair<std::string, std::string>> options;  // (word, replacement)
      std::set<std::string> seen;
      for (std::size_t i = 0; i < words.size(); ++i) {
        const std::string w = to_lower_ascii(words[i]);
        if (!content_word(w) || !seen.insert(w).second) continue;
        std::vector<std::string> repl;
        switch (method) {
          case VariantMethod::Synonym:
            repl = wn->in_context(words, i, WordRelation::Synonym);
            break;
          case VariantMethod::Hypernym:
            repl = wn->in_context(words, i, WordRelation::Hypernym);
            break;
          case VariantMethod::Hyponym:
            repl = wn->in_context(words, i, WordRelation::Hyponym);
            break;
          case VariantMethod::Substitution:
            if (auto it = o.substitutions.find(w); it != o.substitutions.end()) repl = {it->second};
            break;
        }
        if (repl.empty()) continue;
        options.emplace_back(w, repl[rng.below(static_cast<std::uint32_t>(repl.size()))]);
      }
      shuffle(options, rng);
      int made = 0;
      for (const auto& [word, with] : options) {
        if (made >= o.per_caption) break;
        const std::string text = substitute(caption, word, with);
        if (text == caption) continue;
        out.push_back({e, c, to_string(method), text, {}});
        ++made;
      }
    }
  }
  return out;
}

}  // namespace winokit
