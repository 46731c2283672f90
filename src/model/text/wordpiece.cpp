#include "model/text/wordpiece.hpp"

#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/ustring.h>

#include <nlohmann/json.hpp>

#include "winokit/core/error.hpp"
#include "winokit/core/hash.hpp"
#include "winokit/core/text.hpp"
#include "winokit/io/files.hpp"

namespace winokit {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kMaxCharsPerWord = 100;  // WordpieceTokenizer.max_input_chars_per_word
const char* const kSpecialTokens[] = {"[UNK]", "[SEP]", "[PAD]", "[CLS]", "[MASK]"};

std::u32string to_u32(const std::string& s) {
  std::u32string out;
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    char32_t cp;
    std::size_t n;
    if (c < 0x80) {
      cp = c;
      n = 1;
    } else if ((c & 0xE0) == 0xC0) {
      cp = c & 0x1F;
      n = 2;
    } else if ((c & 0xF0) == 0xE0) {
      cp = c & 0x0F;
      n = 3;
    } else {
      cp = c & 0x07;
      n = 4;
    }
    for (std::size_t k = 1; k < n && i + k < s.size(); ++k)
      cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    out.push_back(cp);
    i += n;
  }
  return out;
}

std::string to_utf8(const std::u32string& s) {
  std::string out;
  for (char32_t cp : s) {
    if (cp < 0x80) {
      out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }
  return out;
}

std::u16string to_u16(const std::u32string& s) {
  std::u16string out;
  for (char32_t c : s) {
    if (c >= 0x10000) {
      c -= 0x10000;
      out.push_back(static_cast<char16_t>(0xD800 + (c >> 10)));
      out.push_back(static_cast<char16_t>(0xDC00 + (c & 0x3FF)));
    } else {
      out.push_back(static_cast<char16_t>(c));
    }
  }
  return out;
}

std::u32string from_u16(const std::u16string& s) {
  std::u32string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char32_t c = s[i];
    if (c >= 0xD800 && c < 0xDC00 && i + 1 < s.size()) {
      c = 0x10000 + ((c - 0xD800) << 10) + (s[i + 1] - 0xDC00);
      ++i;
    }
    out.push_back(c);
  }
  return out;
}

std::u32string normalize(const std::u32string& s, bool compose) {
  UErrorCode err = U_ZERO_ERROR;
  const UNormalizer2* n = compose ? unorm2_getNFCInstance(&err) : unorm2_getNFDInstance(&err);
  const std::u16string in = to_u16(s);
  std::u16string out(in.size() * 4 + 16, u'\0');
  err = U_ZERO_ERROR;
  const int32_t len = unorm2_normalize(
      n, reinterpret_cast<const UChar*>(in.data()), static_cast<int32_t>(in.size()),
      reinterpret_cast<UChar*>(out.data()), static_cast<int32_t>(out.size()), &err);
  if (U_FAILURE(err)) throw std::runtime_error("ICU normalisation failed");
  out.resize(static_cast<std::size_t>(len));
  return from_u16(out);
}

// Python's str.lower(): full case mapping (SpecialCasing, final sigma), root locale.
std::u32string lower(const std::u32string& s) {
  const std::u16string in = to_u16(s);
  std::u16string out(in.size() * 3 + 16, u'\0');
  UErrorCode err = U_ZERO_ERROR;
  const int32_t len = u_strToLower(
      reinterpret_cast<UChar*>(out.data()), static_cast<int32_t>(out.size()),
      reinterpret_cast<const UChar*>(in.data()), static_cast<int32_t>(in.size()), "", &err);
  if (U_FAILURE(err)) throw std::runtime_error("ICU lower-casing failed");
  out.resize(static_cast<std::size_t>(len));
  return from_u16(out);
}

// Python's str.isspace() (what str.split() and str.strip() split on).
bool py_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
         c == 0x205F || c == 0x3000;
}

bool is_whitespace(char32_t c) {  // _is_whitespace
  if (c == ' ' || c == '\t' || c == '\n' || c == '\r') return true;
  return u_charType(static_cast<UChar32>(c)) == U_SPACE_SEPARATOR;
}

bool is_control(char32_t c) {  // _is_control: category C*
  if (c == '\t' || c == '\n' || c == '\r') return false;
  switch (u_charType(static_cast<UChar32>(c))) {
    case U_CONTROL_CHAR:
    case U_FORMAT_CHAR:
    case U_SURROGATE:
    case U_PRIVATE_USE_CHAR:
    case U_GENERAL_OTHER_TYPES:  // Cn, unassigned
      return true;
    default:
      return false;
  }
}

bool is_punctuation(char32_t c) {  // _is_punctuation
  if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
      (c >= 123 && c <= 126)) {
    return true;
  }
  switch (u_charType(static_cast<UChar32>(c))) {
    case U_DASH_PUNCTUATION:
    case U_START_PUNCTUATION:
    case U_END_PUNCTUATION:
    case U_CONNECTOR_PUNCTUATION:
    case U_OTHER_PUNCTUATION:
    case U_INITIAL_PUNCTUATION:
    case U_FINAL_PUNCTUATION:
      return true;
    default:
      return false;
  }
}

bool is_chinese_char(char32_t cp) {  // _is_chinese_char
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
         (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

// whitespace_tokenize: str.strip().split()
std::vector<std::u32string> split_ws(const std::u32string& s) {
  std::vector<std::u32string> out;
  std::u32string cur;
  for (char32_t c : s) {
    if (py_space(c)) {
      if (!cur.empty()) out.push_back(std::move(cur));
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

std::u32string strip_accents(const std::u32string& s) {
  std::u32string out;
  for (char32_t c : normalize(s, false)) {
    if (u_charType(static_cast<UChar32>(c)) != U_NON_SPACING_MARK) out.push_back(c);
  }
  return out;
}

bool is_special(const std::u32string& s) {
  const std::string u = to_utf8(s);
  for (const char* t : kSpecialTokens)
    if (u == t) return true;
  return false;
}

}  // namespace

WordPieceTokenizer WordPieceTokenizer::from_vocab(std::vector<std::string> vocab,
                                                  WordPieceOptions options) {
  WordPieceTokenizer t;
  t.vocab_ = std::move(vocab);
  t.options_ = options;
  std::string joined;
  for (std::size_t i = 0; i < t.vocab_.size(); ++i) {
    t.index_[t.vocab_[i]] = static_cast<int>(i);  // a repeated token keeps its last index
    joined += t.vocab_[i] + "\n";
  }
  t.sha_ = sha256_hex(joined);
  auto need = [&](const char* tok) {
    auto it = t.index_.find(tok);
    if (it == t.index_.end()) {
      throw InputError({"vocab.txt", 0, ""}, std::string("the vocabulary has no ") + tok);
    }
    return it->second;
  };
  t.cls_ = need("[CLS]");
  t.sep_ = need("[SEP]");
  t.unk_ = need("[UNK]");
  return t;
}

WordPieceTokenizer WordPieceTokenizer::load(const fs::path& path) {
  const fs::path file = fs::is_directory(path) ? path / "vocab.txt" : path;
  const fs::path dir = fs::is_directory(path) ? path : path.parent_path();
  if (!fs::exists(file)) throw IoError("no WordPiece vocabulary at " + file.string());
  const std::string text = read_file(file);
  if (!is_valid_utf8(text)) throw InputError({file.string(), 0, ""}, "not valid UTF-8");
  // Python's readlines() in text mode: lines end at \n, \r\n or \r.
  std::vector<std::string> vocab;
  std::string cur;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n' || c == '\r') {
      vocab.push_back(cur);
      cur.clear();
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
    } else {
      cur.push_back(c);
    }
  }
  if (!cur.empty()) vocab.push_back(cur);
  WordPieceOptions o;
  const fs::path cfg = dir / "tokenizer_config.json";
  if (fs::exists(cfg)) {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(read_file(cfg));
    } catch (const nlohmann::json::exception& e) {
      throw InputError({cfg.string(), 0, ""}, std::string("invalid JSON: ") + e.what());
    }
    auto flag = [&](const char* key) -> std::optional<bool> {
      if (!j.contains(key) || j[key].is_null()) return std::nullopt;
      if (!j[key].is_boolean()) throw InputError({cfg.string(), 0, key}, "expected true or false");
      return j[key].get<bool>();
    };
    if (auto v = flag("do_lower_case")) o.lower_case = *v;
    o.strip_accents = flag("strip_accents");
    if (auto v = flag("tokenize_chinese_chars")) o.tokenize_chinese_chars = *v;
  }
  try {
    WordPieceTokenizer t = from_vocab(std::move(vocab), o);
    t.sha_ = sha256_hex(text);
    return t;
  } catch (const InputError& e) {
    throw InputError({file.string(), 0, ""}, e.problem());
  }
}

std::vector<std::string> WordPieceTokenizer::tokenize(const std::string& text) const {
  // PreTrainedTokenizer.tokenize: special tokens written in the text are split out first.
  std::u32string all = to_u32(text);
  std::vector<std::pair<std::u32string, bool>> segments;  // (text, is special)
  {
    std::u32string cur;
    std::size_t i = 0;
    while (i < all.size()) {
      bool matched = false;
      if (all[i] == U'[') {
        for (const char* t : kSpecialTokens) {
          const std::u32string st = to_u32(t);
          if (all.compare(i, st.size(), st) == 0) {
            segments.emplace_back(cur, false);
            cur.clear();
            segments.emplace_back(st, true);
            i += st.size();
            matched = true;
            break;
          }
        }
      }
      if (!matched) cur.push_back(all[i++]);
    }
    segments.emplace_back(cur, false);
  }
  std::vector<std::string> out;
  const bool strip = options_.strip_accents.value_or(options_.lower_case);
  for (const auto& [seg, special] : segments) {
    if (special) {
      out.push_back(to_utf8(seg));
      continue;
    }
    // BasicTokenizer.tokenize
    std::u32string clean;
    for (char32_t c : seg) {
      if (c == 0 || c == 0xFFFD || is_control(c)) continue;
      if (is_whitespace(c)) {
        clean.push_back(U' ');
      } else if (options_.tokenize_chinese_chars && is_chinese_char(c)) {
        clean.push_back(U' ');
        clean.push_back(c);
        clean.push_back(U' ');
      } else {
        clean.push_back(c);
      }
    }
    std::vector<std::u32string> split;
    for (std::u32string tok : split_ws(normalize(clean, true))) {
      if (!is_special(tok)) {
        if (options_.lower_case) {
          tok = lower(tok);
          if (options_.strip_accents.value_or(true)) tok = strip_accents(tok);
        } else if (strip && options_.strip_accents.has_value()) {
          tok = strip_accents(tok);
        }
        // _run_split_on_punc
        bool start_new = true;
        for (char32_t c : tok) {
          if (is_punctuation(c)) {
            split.push_back(std::u32string(1, c));
            start_new = true;
          } else {
            if (start_new) split.emplace_back();
            start_new = false;
            split.back().push_back(c);
          }
        }
      } else {
        split.push_back(tok);
      }
    }
    std::u32string joined;
    for (std::size_t k = 0; k < split.size(); ++k) {
      if (k) joined.push_back(U' ');
      joined += split[k];
    }
    for (const auto& word : split_ws(joined)) {
      if (is_special(word)) {
        out.push_back(to_utf8(word));
        continue;
      }
      // WordpieceTokenizer.tokenize
      if (word.size() > kMaxCharsPerWord) {
        out.emplace_back("[UNK]");
        continue;
      }
      std::vector<std::string> pieces;
      bool bad = false;
      std::size_t start = 0;
      while (start < word.size()) {
        std::size_t end = word.size();
        std::string found;
        while (start < end) {
          std::string sub = to_utf8(word.substr(start, end - start));
          if (start > 0) sub = "##" + sub;
          if (index_.count(sub)) {
            found = std::move(sub);
            break;
          }
          --end;
        }
        if (found.empty()) {
          bad = true;
          break;
        }
        pieces.push_back(std::move(found));
        start = end;
      }
      if (bad) {
        out.emplace_back("[UNK]");
      } else {
        out.insert(out.end(), pieces.begin(), pieces.end());
      }
    }
  }
  return out;
}

int WordPieceTokenizer::id(const std::string& token) const {
  auto it = index_.find(token);
  return it == index_.end() ? unk_ : it->second;
}

const std::string& WordPieceTokenizer::token_text(int id) const {
  static const std::string kUnknown = "[UNK]";
  if (id < 0 || static_cast<std::size_t>(id) >= vocab_.size()) return kUnknown;
  return vocab_[static_cast<std::size_t>(id)];
}

std::vector<int> WordPieceTokenizer::encode(const std::string& text, int max_length) const {
  std::vector<int> ids = {cls_};
  for (const auto& p : tokenize(text))
    ids.push_back(id(p));
  if (max_length > 2 && ids.size() + 1 > static_cast<std::size_t>(max_length)) {
    ids.resize(static_cast<std::size_t>(max_length - 1));
  }
  ids.push_back(sep_);
  return ids;
}

}  // namespace winokit
