#include "model/text/hf_tokenizer.hpp"

#include <unicode/uchar.h>
#include <unicode/unorm2.h>

#include <algorithm>
#include <array>
#include <climits>
#include <functional>

#include "winokit/core/error.hpp"
#include "winokit/core/hash.hpp"
#include "winokit/core/text.hpp"
#include "winokit/io/files.hpp"
#include "winokit/model/tokenizer.hpp"

namespace winokit {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// GPT-2's pre-token pattern as tokenizer.json files spell it (ByteLevel's built-in regex).
constexpr const char* kGpt2Pattern =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

// Qwen2's and Llama 3's pattern (the latter with \p{N}{1,3}), as tokenizer.json files spell them.
constexpr const char* kQwen2Pattern =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
constexpr const char* kLlama3Pattern =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

// Caps on what a tokenizer.json may hold (real ones: a few MB, nesting under 10 levels, up to 4
// pre-tokenizer steps and a few hundred added tokens). Beyond them the file is refused with an
// InputError naming the field, instead of a stack overflow (nlohmann's dump recurses), quadratic
// work or an out-of-memory on a hostile file.
constexpr std::size_t kMaxFileBytes = std::size_t{256} << 20;
constexpr int kMaxJsonDepth = 64;
constexpr int kMaxSequenceDepth = 8;     // a Sequence of Sequences...
constexpr std::size_t kMaxSteps = 64;    // pre-tokenizers or post-processors in all
constexpr std::size_t kMaxQuoted = 120;  // JSON quoted in a message

// Whether `j` nests deeper than `limit` (arrays and objects), without recursing.
bool deeper_than(const json& j, int limit) {
  std::vector<std::pair<const json*, int>> stack = {{&j, 1}};
  while (!stack.empty()) {
    const auto [node, depth] = stack.back();
    stack.pop_back();
    if (!node->is_structured()) continue;
    if (depth > limit) return true;
    for (const auto& child : *node)
      stack.emplace_back(&child, depth + 1);
  }
  return false;
}

// A JSON value for an error message, cut to kMaxQuoted characters.
std::string quoted(const json& j) {
  std::string s = j.dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() > kMaxQuoted) s = s.substr(0, kMaxQuoted) + "...";
  return s;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Valid UTF-8 (checked by the caller) to code points.
std::u32string to_u32(const std::string& s) {
  std::u32string out;
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const std::size_t n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : 4;
    char32_t cp = n == 1 ? c : n == 2 ? (c & 0x1F) : n == 3 ? (c & 0x0F) : (c & 0x07);
    for (std::size_t k = 1; k < n; ++k)
      cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    out += cp;
    i += n;
  }
  return out;
}
std::string to_utf8(const std::u32string& s) {
  std::string out;
  for (char32_t c : s)
    append_utf8(out, c);
  return out;
}

bool letter(char32_t c) {
  return (U_GET_GC_MASK(static_cast<UChar32>(c)) & U_GC_L_MASK) != 0;
}
bool number(char32_t c) {
  return (U_GET_GC_MASK(static_cast<UChar32>(c)) & U_GC_N_MASK) != 0;
}
bool space(char32_t c) {  // Unicode White_Space, the regex engines' \s
  return u_isUWhiteSpace(static_cast<UChar32>(c)) != 0;
}
bool newline(char32_t c) {
  return c == U'\r' || c == U'\n';
}
char32_t lower_ascii(char32_t c) {
  return c >= U'A' && c <= U'Z' ? c + 32 : c;
}

// The matches of Qwen2's pattern (max_digits 1) or Llama 3's (3), leftmost first, each
// alternative tried in the pattern's order as a backtracking regex engine does.
std::vector<std::string> split_qwen(const std::string& text, int max_digits) {
  const std::u32string t = to_u32(text);
  const std::size_t n = t.size();
  std::vector<std::string> out;
  static const std::u32string kContractions[] = {U"s", U"t", U"re", U"ve", U"m", U"ll", U"d"};
  auto other = [](char32_t c) { return !space(c) && !letter(c) && !number(c); };
  std::size_t i = 0;
  while (i < n) {
    std::size_t len = 0;
    if (t[i] == U'\'') {  // (?i:'s|'t|'re|'ve|'m|'ll|'d)
      for (const auto& c : kContractions) {
        if (i + 1 + c.size() > n) continue;
        bool ok = true;
        for (std::size_t k = 0; k < c.size(); ++k)
          ok = ok && lower_ascii(t[i + 1 + k]) == c[k];
        if (ok) {
          len = 1 + c.size();
          break;
        }
      }
    }
    if (len == 0) {  // [^\r\n\p{L}\p{N}]?\p{L}+
      std::size_t start = 0;
      if (!newline(t[i]) && !letter(t[i]) && !number(t[i]) && i + 1 < n && letter(t[i + 1])) {
        start = 1;
      }
      if (letter(t[i + start])) {
        len = start;
        while (i + len < n && letter(t[i + len]))
          ++len;
      }
    }
    if (len == 0 && number(t[i])) {  // \p{N}{1,max}
      while (i + len < n && len < static_cast<std::size_t>(max_digits) && number(t[i + len]))
        ++len;
    }
    if (len == 0) {  //  ?[^\s\p{L}\p{N}]+[\r\n]*
      std::size_t start = t[i] == U' ' && i + 1 < n && other(t[i + 1]) ? 1 : 0;
      if (other(t[i + start])) {
        len = start;
        while (i + len < n && other(t[i + len]))
          ++len;
        while (i + len < n && newline(t[i + len]))
          ++len;
      }
    }
    if (len == 0) {  // t[i] is white space
      std::size_t end = i;
      while (end < n && space(t[end]))
        ++end;
      std::size_t last_newline = end;
      for (std::size_t k = i; k < end; ++k)
        if (newline(t[k])) last_newline = k;
      if (last_newline != end) {
        len = last_newline + 1 - i;  // \s*[\r\n]+
      } else {
        len = end - i;  // \s+(?!\S), else \s+
        if (end < n && len > 1) --len;
      }
    }
    out.push_back(to_utf8(t.substr(i, len)));
    i += len;
  }
  return out;
}

std::string nfc(const std::string& text) {
  UErrorCode err = U_ZERO_ERROR;
  const UNormalizer2* norm = unorm2_getNFCInstance(&err);
  if (U_FAILURE(err)) throw Error("ICU: no NFC normalizer");
  std::u16string in;
  for (char32_t c : to_u32(text)) {
    if (c >= 0x10000) {
      in += static_cast<char16_t>(0xD800 + ((c - 0x10000) >> 10));
      in += static_cast<char16_t>(0xDC00 + ((c - 0x10000) & 0x3FF));
    } else {
      in += static_cast<char16_t>(c);
    }
  }
  std::u16string out(in.size() * 3 + 16, u'\0');
  const int32_t len = unorm2_normalize(
      norm, reinterpret_cast<const UChar*>(in.data()), static_cast<int32_t>(in.size()),
      reinterpret_cast<UChar*>(out.data()), static_cast<int32_t>(out.size()), &err);
  if (U_FAILURE(err)) throw Error("ICU: NFC normalisation failed");
  out.resize(static_cast<std::size_t>(len));
  std::u32string u;
  for (std::size_t k = 0; k < out.size(); ++k) {
    const char16_t c = out[k];
    if (c >= 0xD800 && c < 0xDC00 && k + 1 < out.size()) {
      u += static_cast<char32_t>(0x10000 + ((c - 0xD800) << 10) + (out[k + 1] - 0xDC00));
      ++k;
    } else {
      u += c;
    }
  }
  return to_utf8(u);
}

// bytes_to_unicode (openai/gpt-2, tokenizers' ByteLevel): printable bytes map to themselves, the
// rest to 256 + n.
const std::array<std::string, 256>& byte_table() {
  static const std::array<std::string, 256> kTable = [] {
    std::array<std::string, 256> table;
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      append_utf8(table[static_cast<std::size_t>(b)],
                  printable ? static_cast<char32_t>(b) : next++);
    }
    return table;
  }();
  return kTable;
}

std::size_t utf8_length(unsigned char c) {
  return c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : 4;
}

bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

std::string rank_key(const std::string& a, const std::string& b) {
  std::string k = a;
  k += '\0';
  k += b;
  return k;
}

}  // namespace

HfTokenizer HfTokenizer::from_file(const fs::path& tokenizer_json) {
  TextLimits limits;
  limits.max_file_bytes = kMaxFileBytes;
  limits.max_line_bytes = 0;  // tokenizer.json files are often one line
  const std::string text = read_text_file(tokenizer_json, limits);
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw InputError({tokenizer_json.string(), 0, ""}, std::string("malformed JSON: ") + e.what());
  }
  HfTokenizer tok = from_json(j, tokenizer_json.string());
  tok.sha256_ = sha256_hex(text);
  return tok;
}

HfTokenizer HfTokenizer::from_json(const json& j, const std::string& where) {
  if (deeper_than(j, kMaxJsonDepth)) {
    throw InputError({where, 0, ""}, "nested deeper than " + std::to_string(kMaxJsonDepth) +
                                         " levels: not a tokenizer.json");
  }
  HfTokenizer tok = parse(j, where);
  tok.sha256_ = sha256_hex(j.dump());
  return tok;
}

HfTokenizer HfTokenizer::parse(const json& j, const std::string& where) {
  auto fail = [&where](const std::string& field, const std::string& problem) {
    return InputError({where, 0, field}, problem,
                      "byte-level BPE tokenizers (GPT-2, SmolLM2 / SmolVLM) are supported");
  };
  // The field being read: a value of the wrong type (nlohmann's type_error) is reported there.
  std::string field;
  try {
    if (!j.is_object()) throw fail("", "expected a JSON object");
    HfTokenizer tok;
    field = "model";
    const json model = j.value("model", json());
    field = "model.type";
    if (!model.is_object() || model.value("type", std::string()) != "BPE") {
      throw fail("model.type", "not a BPE model");
    }
    field = "model.byte_fallback";
    if (model.value("byte_fallback", false)) throw fail(field, "not supported");
    for (const char* f : {"continuing_subword_prefix", "end_of_word_suffix"}) {
      if (auto it = model.find(f); it != model.end() && !it->is_null() && *it != "") {
        throw fail(std::string("model.") + f, "not supported");
      }
    }
    field = "model.ignore_merges";
    tok.ignore_merges_ = model.value("ignore_merges", false);
    field = "model.vocab";
    const json& vocab = model.contains("vocab") ? model["vocab"] : json();
    if (!vocab.is_object()) throw fail(field, "expected an object of token: id");
    for (const auto& [token, id] : vocab.items()) {
      if (!id.is_number_integer() || id.get<long long>() < 0 || id.get<long long>() > INT_MAX) {
        throw fail(field, "bad id " + quoted(id) + " for " + quoted(json(token)));
      }
      tok.vocab_[token] = id.get<int>();
      tok.id_to_token_[id.get<int>()] = token;
    }
    field = "model.merges";
    const json merges = model.value("merges", json::array());
    if (!merges.is_array()) throw fail(field, "expected an array");
    int rank = 0;
    for (const auto& m : merges) {
      std::string a, b;
      if (m.is_string()) {
        const std::string s = m.get<std::string>();
        const auto sp = s.find(' ');
        if (sp == std::string::npos) {
          throw fail(field, "merge " + std::to_string(rank) + " " + quoted(m) + " has no space");
        }
        a = s.substr(0, sp);
        b = s.substr(sp + 1);
      } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
        a = m[0].get<std::string>();
        b = m[1].get<std::string>();
      } else {
        throw fail(field, "merge " + std::to_string(rank) + " is malformed: " + quoted(m));
      }
      if (tok.vocab_.find(a + b) == tok.vocab_.end()) {
        throw fail(field, "merge " + std::to_string(rank) + " (" + quoted(json(a)) + " " +
                              quoted(json(b)) + ") makes a token outside the vocabulary");
      }
      tok.ranks_.emplace(rank_key(a, b), rank++);
    }
    for (const auto& symbol : byte_table()) {
      if (tok.vocab_.find(symbol) == tok.vocab_.end()) {
        throw fail("model.vocab",
                   "byte symbol '" + symbol + "' missing: not a byte-level BPE vocabulary");
      }
    }
    field = "normalizer";
    if (auto it = j.find("normalizer"); it != j.end() && !it->is_null()) {
      const std::string type = it->is_object() ? it->value("type", std::string("?")) : "?";
      if (type != "NFC") throw fail(field, "normalizer " + quoted(json(type)) + " not supported");
      tok.nfc_ = true;
    }
    // The pre-tokenizer steps, Sequences flattened (depth and count capped).
    field = "pre_tokenizer";
    // The steps of j[key], Sequences (their steps under list_key) flattened in order, each leaf
    // with its type; at most kMaxSteps steps and kMaxSequenceDepth nested Sequences.
    auto for_each_step = [&](const char* key, const char* list_key,
                             const std::function<void(const json&, const std::string&)>& leaf) {
      std::size_t visited = 0;
      std::function<void(const json&, int)> walk = [&](const json& p, int depth) {
        if (++visited > kMaxSteps || depth > kMaxSequenceDepth) {
          throw fail(field, "more than " + std::to_string(kMaxSteps) + " steps or " +
                                std::to_string(kMaxSequenceDepth) + " nested Sequences");
        }
        if (!p.is_object()) throw fail(field, "expected an object, got " + quoted(p));
        const std::string type = p.value("type", std::string());
        if (type != "Sequence") return leaf(p, type);
        const json list = p.value(list_key, json::array());
        if (!list.is_array()) {
          throw fail(field, std::string("Sequence: ") + list_key + " is not an array");
        }
        for (const auto& q : list)
          walk(q, depth + 1);
      };
      if (auto it = j.find(key); it != j.end() && !it->is_null()) walk(*it, 0);
    };
    for_each_step("pre_tokenizer", "pretokenizers", [&](const json& p, const std::string& type) {
      if (type == "ByteLevel") {
        tok.steps_.push_back({Step::Kind::ByteLevel, p.value("add_prefix_space", false),
                              p.value("use_regex", true)});
      } else if (type == "Digits") {
        tok.steps_.push_back({Step::Kind::Digits, p.value("individual_digits", false), false});
      } else if (type == "Split") {
        const json pattern = p.value("pattern", json::object());
        if (!pattern.is_object()) throw fail(field, "Split: pattern is not an object");
        const std::string regex = pattern.value("Regex", std::string());
        if (p.value("behavior", std::string()) != "Isolated" || p.value("invert", false)) {
          throw fail(field, "Split " + quoted(p) + " not supported");
        }
        if (regex == kGpt2Pattern) {
          tok.steps_.push_back({Step::Kind::SplitGpt2, false, true});
        } else if (regex == kQwen2Pattern || regex == kLlama3Pattern) {
          Step st{Step::Kind::SplitQwen, false, true};
          st.digits = regex == kQwen2Pattern ? 1 : 3;
          tok.steps_.push_back(st);
        } else {
          throw fail(field, "Split pattern " + quoted(json(regex)) + " not supported");
        }
      } else {
        throw fail(field, "pre-tokenizer " + quoted(json(type)) + " not supported");
      }
    });
    if (std::none_of(tok.steps_.begin(), tok.steps_.end(),
                     [](const Step& s) { return s.kind == Step::Kind::ByteLevel; })) {
      throw fail(field, "no ByteLevel pre-tokenizer: not a byte-level BPE tokenizer");
    }
    field = "added_tokens";
    const json added = j.value("added_tokens", json::array());
    if (!added.is_array()) throw fail(field, "expected an array");
    for (const auto& a : added) {
      if (!a.is_object() || !a.contains("content") || !a.contains("id") ||
          !a["content"].is_string() || !a["id"].is_number_integer() || a["content"] == "" ||
          a["id"].get<long long>() < 0 || a["id"].get<long long>() > INT_MAX) {
        throw fail(field, "malformed entry " + quoted(a));
      }
      if (a.value("single_word", false)) {
        throw fail(field, "single_word tokens are not supported (" + quoted(a) + ")");
      }
      Added t{a["content"].get<std::string>(), a["id"].get<int>(), a.value("lstrip", false),
              a.value("rstrip", false)};
      tok.id_to_token_[t.id] = t.content;
      // The first entry of a content wins (as the longest-first search did).
      if (tok.added_index_.emplace(t.content, tok.added_.size()).second) tok.added_.push_back(t);
    }
    for (const auto& a : tok.added_)
      tok.added_lengths_.push_back(a.content.size());
    std::sort(tok.added_lengths_.begin(), tok.added_lengths_.end(), std::greater<>());
    tok.added_lengths_.erase(std::unique(tok.added_lengths_.begin(), tok.added_lengths_.end()),
                             tok.added_lengths_.end());
    // The post-processor's template for one sequence.
    field = "post_processor";
    for_each_step("post_processor", "processors", [&](const json& p, const std::string& type) {
      if (type == "TemplateProcessing") {
        const json single = p.value("single", json::array());
        if (!single.is_array()) throw fail(field, "TemplateProcessing: single is not an array");
        bool after = false;
        for (const auto& item : single) {
          if (!item.is_object()) throw fail(field, "template item " + quoted(item));
          if (item.contains("Sequence")) {
            after = true;
          } else if (item.contains("SpecialToken")) {
            const json& special = item["SpecialToken"];
            if (!special.is_object()) throw fail(field, "template item " + quoted(item));
            const std::string name = special.value("id", std::string());
            const int id = tok.token_id(name);
            if (id < 0) throw fail(field, "special token " + quoted(json(name)) + " unknown");
            (after ? tok.suffix_ids_ : tok.prefix_ids_).push_back(id);
          }
        }
      } else if (type != "ByteLevel") {
        throw fail(field, "post-processor " + quoted(json(type)) + " not supported");
      }
    });
    for (const auto& [id, token] : tok.id_to_token_) {
      (void)token;
      tok.max_id_ = std::max(tok.max_id_, id);
    }
    return tok;
  } catch (const json::exception& e) {
    throw fail(field, std::string("unexpected JSON: ") + e.what());
  }
}

int HfTokenizer::token_id(const std::string& token) const {
  if (auto it = added_index_.find(token); it != added_index_.end()) return added_[it->second].id;
  auto it = vocab_.find(token);
  return it == vocab_.end() ? -1 : it->second;
}

std::string HfTokenizer::token(int id) const {
  auto it = id_to_token_.find(id);
  return it == id_to_token_.end() ? std::string() : it->second;
}

std::vector<std::string> HfTokenizer::pre_tokenize(const std::string& text) const {
  std::vector<std::string> pieces = {text};
  for (const Step& step : steps_) {
    std::vector<std::string> next;
    for (std::string piece : pieces) {
      switch (step.kind) {
        case Step::Kind::Digits: {
          std::string run;
          bool run_digits = false;
          for (char c : piece) {
            const bool digit = c >= '0' && c <= '9';
            if (!run.empty() && (digit != run_digits || (digit && step.flag))) {
              next.push_back(run);
              run.clear();
            }
            run += c;
            run_digits = digit;
          }
          if (!run.empty()) next.push_back(run);
          break;
        }
        case Step::Kind::ByteLevel:
          if (step.flag && (piece.empty() || piece[0] != ' ')) piece.insert(piece.begin(), ' ');
          if (!step.regex) {
            next.push_back(piece);
            break;
          }
          [[fallthrough]];
        case Step::Kind::SplitGpt2:
          for (auto& p : Gpt2Tokenizer::pre_tokenize(piece))
            next.push_back(std::move(p));
          break;
        case Step::Kind::SplitQwen:
          for (auto& p : split_qwen(piece, step.digits))
            next.push_back(std::move(p));
          break;
      }
    }
    pieces = std::move(next);
  }
  return pieces;
}

std::vector<int> HfTokenizer::bpe_ids(const std::string& piece) const {
  std::string mapped;
  std::vector<std::string> word;
  for (unsigned char b : piece) {
    word.push_back(byte_table()[b]);
    mapped += word.back();
  }
  if (ignore_merges_) {
    if (auto it = vocab_.find(mapped); it != vocab_.end()) return {it->second};
  }
  // Merge the lowest-ranked adjacent pair (the leftmost of equal ranks) until none has a rank.
  while (word.size() > 1) {
    int best_rank = INT_MAX;
    std::size_t best = 0;
    for (std::size_t k = 0; k + 1 < word.size(); ++k) {
      auto it = ranks_.find(rank_key(word[k], word[k + 1]));
      if (it != ranks_.end() && it->second < best_rank) {
        best_rank = it->second;
        best = k;
      }
    }
    if (best_rank == INT_MAX) break;
    word[best] += word[best + 1];
    word.erase(word.begin() + static_cast<std::ptrdiff_t>(best) + 1);
  }
  std::vector<int> ids;
  for (const auto& w : word) {
    auto it = vocab_.find(w);
    if (it == vocab_.end()) throw Error("tokenizer: '" + w + "' is not in the vocabulary");
    ids.push_back(it->second);
  }
  return ids;
}

std::vector<int> HfTokenizer::encode(const std::string& text, bool add_special_tokens) const {
  if (!is_valid_utf8(text)) throw UsageError("text is not valid UTF-8");
  std::vector<int> ids;
  if (add_special_tokens) ids = prefix_ids_;
  auto plain = [&](std::size_t from, std::size_t to) {
    if (to <= from) return;
    const std::string part = text.substr(from, to - from);
    for (const auto& piece : pre_tokenize(nfc_ ? nfc(part) : part)) {
      for (int id : bpe_ids(piece))
        ids.push_back(id);
    }
  };
  std::size_t done = 0;  // text before `done` is handled
  std::size_t i = 0;
  while (i < text.size()) {
    const Added* hit = nullptr;
    for (std::size_t len : added_lengths_) {  // longest first
      if (len > text.size() - i) continue;
      const std::string_view slice(text.data() + i, len);
      if (auto it = added_index_.find(slice); it != added_index_.end()) {
        hit = &added_[it->second];
        break;
      }
    }
    if (!hit) {
      i += utf8_length(static_cast<unsigned char>(text[i]));
      continue;
    }
    std::size_t left = i, right = i + hit->content.size();
    if (hit->lstrip) {
      while (left > done && is_blank(text[left - 1]))
        --left;
    }
    if (hit->rstrip) {
      while (right < text.size() && is_blank(text[right]))
        ++right;
    }
    plain(done, left);
    ids.push_back(hit->id);
    done = i = right;
  }
  plain(done, text.size());
  if (add_special_tokens) ids.insert(ids.end(), suffix_ids_.begin(), suffix_ids_.end());
  return ids;
}

}  // namespace winokit
