#include "winokit/model/tokenizer.hpp"

#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/ustring.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <climits>
#include <nlohmann/json.hpp>
#include <set>

#include "model/text/html_entities.hpp"
#include "winokit/core/error.hpp"
#include "winokit/core/text.hpp"
#include "winokit/io/files.hpp"

namespace winokit {

namespace fs = std::filesystem;

namespace {

// ---- UTF-8 / UTF-32 ----
std::u32string utf8_to_u32(const std::string& s) {
  std::u32string out;
  for (std::size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
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
    for (std::size_t k = 1; k < n; ++k)
      cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    out.push_back(cp);
    i += n;
  }
  return out;
}

void append_utf8(std::string& out, char32_t cp) {
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

std::string u32_to_utf8(const std::u32string& s) {
  std::string out;
  for (char32_t c : s)
    append_utf8(out, c);
  return out;
}

// ---- ICU helpers (UTF-16 in between) ----
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
    if (c >= 0xD800 && c <= 0xDBFF && i + 1 < s.size()) {
      c = 0x10000 + ((c - 0xD800) << 10) + (s[i + 1] - 0xDC00);
      ++i;
    }
    out.push_back(c);
  }
  return out;
}

std::u32string icu_normalize(const std::u32string& s, bool nfkc) {
  UErrorCode err = U_ZERO_ERROR;
  const UNormalizer2* norm = nfkc ? unorm2_getNFKCInstance(&err) : unorm2_getNFCInstance(&err);
  if (U_FAILURE(err)) throw Error("ICU: no normalizer");
  std::u16string in = to_u16(s);
  std::u16string out(in.size() * 3 + 16, u'\0');
  int32_t n = unorm2_normalize(
      norm, reinterpret_cast<const UChar*>(in.data()), static_cast<int32_t>(in.size()),
      reinterpret_cast<UChar*>(out.data()), static_cast<int32_t>(out.size()), &err);
  if (U_FAILURE(err)) throw Error("ICU: normalisation failed");
  out.resize(static_cast<std::size_t>(n));
  return from_u16(out);
}

std::u32string icu_lower(const std::u32string& s) {
  UErrorCode err = U_ZERO_ERROR;
  std::u16string in = to_u16(s);
  std::u16string out(in.size() * 3 + 16, u'\0');
  int32_t n = u_strToLower(reinterpret_cast<UChar*>(out.data()), static_cast<int32_t>(out.size()),
                           reinterpret_cast<const UChar*>(in.data()),
                           static_cast<int32_t>(in.size()), "", &err);
  if (U_FAILURE(err)) throw Error("ICU: lower-casing failed");
  out.resize(static_cast<std::size_t>(n));
  return from_u16(out);
}

// Python's str.isspace: bidirectional class WS, B or S, or category Zs.
bool is_space(char32_t c) {
  const auto u = static_cast<UChar32>(c);
  if (u_charType(u) == U_SPACE_SEPARATOR) return true;
  const auto dir = u_charDirection(u);
  return dir == U_WHITE_SPACE_NEUTRAL || dir == U_BLOCK_SEPARATOR || dir == U_SEGMENT_SEPARATOR;
}
bool is_letter(char32_t c) {
  return (U_GET_GC_MASK(static_cast<UChar32>(c)) & U_GC_L_MASK) != 0;
}
bool is_number(char32_t c) {
  return (U_GET_GC_MASK(static_cast<UChar32>(c)) & U_GC_N_MASK) != 0;
}

std::u32string strip(const std::u32string& s) {
  std::size_t b = 0, e = s.size();
  while (b < e && is_space(s[b]))
    ++b;
  while (e > b && is_space(s[e - 1]))
    --e;
  return s.substr(b, e - b);
}

// ---- ftfy.fix_text steps that apply to well-formed text (ftfy 6 defaults) ----
// Windows-1252 for bytes 0x80-0x9F (0 where undefined: kept as is, like ftfy's sloppy codec).
constexpr std::array<char32_t, 32> kCp1252 = {
    0x20AC, 0,      0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160,
    0x2039, 0x0152, 0,      0x017D, 0,      0,      0x2018, 0x2019, 0x201C, 0x201D, 0x2022,
    0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0,      0x017E, 0x0178};

std::u32string ftfy_fix(std::u32string t) {
  for (int pass = 0; pass < 4; ++pass) {
    std::u32string before = t;
    std::u32string out;
    for (std::size_t i = 0; i < t.size(); ++i) {
      char32_t c = t[i];
      // remove_terminal_escapes: ESC [ digits/semicolons letter
      if (c == 0x1B && i + 1 < t.size() && t[i + 1] == U'[') {
        std::size_t j = i + 2;
        while (j < t.size() && ((t[j] >= U'0' && t[j] <= U'9') || t[j] == U';'))
          ++j;
        if (j < t.size() && ((t[j] >= U'a' && t[j] <= U'z') || (t[j] >= U'A' && t[j] <= U'Z'))) {
          i = j;
          continue;
        }
      }
      // fix_c1_controls
      if (c >= 0x80 && c <= 0x9F && kCp1252[c - 0x80] != 0) c = kCp1252[c - 0x80];
      // fix_latin_ligatures
      static const std::pair<char32_t, const char32_t*> kLigatures[] = {
          {0x0132, U"IJ"},      {0x0133, U"ij"},      {0x0149, U"\u02BCn"}, {0x01C4, U"D\u017D"},
          {0x01C5, U"D\u017E"}, {0x01C6, U"d\u017E"}, {0x01C7, U"LJ"},      {0x01C8, U"Lj"},
          {0x01C9, U"lj"},      {0x01CA, U"NJ"},      {0x01CB, U"Nj"},      {0x01CC, U"nj"},
          {0x01F1, U"DZ"},      {0x01F2, U"Dz"},      {0x01F3, U"dz"},      {0xFB00, U"ff"},
          {0xFB01, U"fi"},      {0xFB02, U"fl"},      {0xFB03, U"ffi"},     {0xFB04, U"ffl"},
          {0xFB05, U"\u017Ft"}, {0xFB06, U"st"}};
      bool replaced = false;
      for (const auto& [from, to] : kLigatures) {
        if (c == from) {
          out += to;
          replaced = true;
          break;
        }
      }
      if (replaced) continue;
      // fix_character_width: NFKC of the ideographic space and the half/full-width forms
      if (c == 0x3000 || (c >= 0xFF01 && c <= 0xFFEF)) {
        out += icu_normalize(std::u32string(1, c), /*nfkc=*/true);
        continue;
      }
      // uncurl_quotes
      if (c == 0x02BC || (c >= 0x2018 && c <= 0x201B)) c = U'\'';
      if (c >= 0x201C && c <= 0x201F) c = U'"';
      // fix_line_breaks
      if (c == U'\r') {
        if (i + 1 < t.size() && t[i + 1] == U'\n') ++i;
        c = U'\n';
      }
      if (c == 0x2028 || c == 0x2029 || c == 0x0085) c = U'\n';
      // remove_control_chars
      if (c <= 0x08 || c == 0x0B || (c >= 0x0E && c <= 0x1F) || c == 0x7F ||
          (c >= 0x206A && c <= 0x206F) || c == 0xFEFF || (c >= 0xFFF9 && c <= 0xFFFC)) {
        continue;
      }
      out.push_back(c);
    }
    t = icu_normalize(out, /*nfkc=*/false);
    if (t == before) break;
  }
  return t;
}

// ---- byte-level BPE ----
// openai/CLIP bytes_to_unicode: printable bytes map to themselves, the rest to 256 + n.
std::array<std::string, 256> byte_encoder() {
  std::array<std::string, 256> table;
  std::array<bool, 256> printable{};
  for (int b = '!'; b <= '~'; ++b)
    printable[static_cast<std::size_t>(b)] = true;
  for (int b = 0xA1; b <= 0xAC; ++b)
    printable[static_cast<std::size_t>(b)] = true;
  for (int b = 0xAE; b <= 0xFF; ++b)
    printable[static_cast<std::size_t>(b)] = true;
  char32_t next = 256;
  for (int b = 0; b < 256; ++b) {
    std::string s;
    append_utf8(s, printable[static_cast<std::size_t>(b)] ? static_cast<char32_t>(b) : next++);
    table[static_cast<std::size_t>(b)] = s;
  }
  return table;
}

const std::array<std::string, 256>& bytes_table() {
  static const std::array<std::string, 256> kTable = byte_encoder();
  return kTable;
}

std::vector<std::string> utf8_chars(const std::string& s) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    std::size_t n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : 4;
    out.push_back(s.substr(i, n));
    i += n;
  }
  return out;
}

constexpr const char* kStart = "<|startoftext|>";
constexpr const char* kEnd = "<|endoftext|>";
constexpr std::size_t kMergeCount = 49152 - 256 - 2;  // as openai/CLIP reads the merges file

using Ranks = std::unordered_map<std::string, int>;
using Merges = std::vector<std::pair<std::string, std::string>>;

// The bytes of `token` as byte-level symbols (one UTF-8 character each).
std::vector<std::string> byte_symbols(const std::string& token) {
  std::vector<std::string> word;
  word.reserve(token.size());
  for (unsigned char b : token)
    word.push_back(bytes_table()[b]);
  return word;
}

// The BPE merge loop shared by CLIP and GPT-2 (openai/CLIP simple_tokenizer.py and openai/gpt-2
// encoder.py are the same loop): repeatedly merge every occurrence, left to right, of the
// adjacent pair with the lowest rank, until no adjacent pair has a rank.
std::vector<std::string> bpe_merge(std::vector<std::string> word, const Ranks& ranks) {
  while (word.size() > 1) {
    int best_rank = INT_MAX;
    std::size_t best = 0;
    for (std::size_t k = 0; k + 1 < word.size(); ++k) {
      auto it = ranks.find(word[k] + " " + word[k + 1]);
      if (it != ranks.end() && it->second < best_rank) {
        best_rank = it->second;
        best = k;
      }
    }
    if (best_rank == INT_MAX) break;
    const std::string first = word[best], second = word[best + 1];
    std::vector<std::string> merged;
    for (std::size_t k = 0; k < word.size();) {
      if (k + 1 < word.size() && word[k] == first && word[k + 1] == second) {
        merged.push_back(first + second);
        k += 2;
      } else {
        merged.push_back(word[k]);
        ++k;
      }
    }
    word = std::move(merged);
  }
  return word;
}

std::unordered_map<std::string, int> read_vocab_json(const fs::path& vocab_json) {
  nlohmann::json vocab;
  try {
    vocab = nlohmann::json::parse(read_file(vocab_json));
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range (1e400)
    throw InputError({vocab_json.string(), 0, ""}, std::string("malformed JSON: ") + e.what());
  }
  if (!vocab.is_object()) throw InputError({vocab_json.string(), 0, ""}, "expected a JSON object");
  std::unordered_map<std::string, int> out;
  for (auto it = vocab.begin(); it != vocab.end(); ++it) {
    if (!it.value().is_number_integer() || it.value().get<long long>() < 0 ||
        it.value().get<long long>() > INT_MAX) {
      throw InputError({vocab_json.string(), 0, it.key()}, "expected a non-negative integer id");
    }
    out.emplace(it.key(), it.value().get<int>());
  }
  return out;
}

// merges.txt / vocab.bpe: an optional "#version" first line, then "first second" per line.
Merges read_merges(const fs::path& merges_txt) {
  std::string text = read_file(merges_txt);
  Merges merges;
  auto lines = split_lines(text);
  for (std::size_t n = 0; n < lines.size(); ++n) {
    auto line = lines[n];
    if (line.empty() || (n == 0 && line.rfind("#version", 0) == 0)) continue;
    auto sp = line.find(' ');
    if (sp == std::string_view::npos || sp == 0 || sp + 1 == line.size() ||
        line.find(' ', sp + 1) != std::string_view::npos) {
      throw InputError({merges_txt.string(), n + 1, ""},
                       "expected two symbols separated by a space (is the file truncated?)");
    }
    merges.emplace_back(std::string(line.substr(0, sp)), std::string(line.substr(sp + 1)));
  }
  return merges;
}

// Refuses a vocabulary and merges that do not belong together or look truncated: every merge's
// result must be in the vocabulary, and the vocabulary must have `base` entries (byte symbols
// and special tokens) plus one per merge.
void check_consistent(const std::unordered_map<std::string, int>& vocab, const Merges& merges,
                      std::size_t base, const fs::path& vocab_file, const fs::path& merges_file) {
  for (std::size_t r = 0; r < merges.size(); ++r) {
    const std::string joined = merges[r].first + merges[r].second;
    if (vocab.find(joined) == vocab.end()) {
      throw InputError({merges_file.string(), 0, ""},
                       "merge " + std::to_string(r + 1) + " ('" + merges[r].first + " " +
                           merges[r].second + "') makes '" + joined + "', which " +
                           vocab_file.filename().string() +
                           " does not hold: the vocabulary looks truncated or belongs to another "
                           "tokenizer");
    }
  }
  if (vocab.size() != base + merges.size()) {
    const bool few_merges = vocab.size() > base + merges.size();
    throw InputError(
        {(few_merges ? merges_file : vocab_file).string(), 0, ""},
        std::to_string(merges.size()) + " merges for a " + std::to_string(vocab.size()) +
            "-entry vocabulary (expected " + std::to_string(base) +
            " byte and special entries plus one per merge): " +
            (few_merges ? merges_file.filename().string() : vocab_file.filename().string()) +
            " looks truncated");
  }
}

bool is_white_space(char32_t c) {  // Unicode White_Space, as the regex module's \s
  return u_isUWhiteSpace(static_cast<UChar32>(c)) != 0;
}

}  // namespace

std::string html_unescape(const std::string& text) {
  if (text.find('&') == std::string::npos) return text;
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] != '&') {
      out.push_back(text[i++]);
      continue;
    }
    std::size_t j = i + 1;
    if (j < text.size() && text[j] == '#') {
      // Numeric reference: &#123; or &#x7B; (';' optional).
      ++j;
      bool hex = j < text.size() && (text[j] == 'x' || text[j] == 'X');
      if (hex) ++j;
      std::size_t digits_start = j;
      while (j < text.size() && (hex ? std::isxdigit(static_cast<unsigned char>(text[j]))
                                     : std::isdigit(static_cast<unsigned char>(text[j])))) {
        ++j;
      }
      if (j == digits_start) {
        out.push_back(text[i++]);
        continue;
      }
      std::string digits = text.substr(digits_start, j - digits_start);
      if (j < text.size() && text[j] == ';') ++j;
      unsigned long long num =
          digits.size() > 8 ? ULLONG_MAX : std::stoull(digits, nullptr, hex ? 16 : 10);
      // Python's html._replace_charref.
      if (num == 0x00) {
        append_utf8(out, 0xFFFD);
      } else if (num == 0x0D) {
        out.push_back('\r');
      } else if (num >= 0x80 && num <= 0x9F && kCp1252[num - 0x80] != 0) {
        append_utf8(out, kCp1252[num - 0x80]);
      } else if ((num >= 0xD800 && num <= 0xDFFF) || num > 0x10FFFF) {
        append_utf8(out, 0xFFFD);
      } else if ((num >= 0x1 && num <= 0x8) || num == 0xB || (num >= 0xE && num <= 0x1F) ||
                 (num >= 0x7F && num <= 0x9F) || (num >= 0xFDD0 && num <= 0xFDEF) ||
                 (num & 0xFFFE) == 0xFFFE) {
        // invalid code points are dropped
      } else {
        append_utf8(out, static_cast<char32_t>(num));
      }
      i = j;
      continue;
    }
    // Named reference: up to 32 characters of [^\t\n\f <&#;], optional ';'.
    while (j < text.size() && j - i - 1 < 32 &&
           std::string_view("\t\n\f <&#;").find(text[j]) == std::string_view::npos) {
      ++j;
    }
    std::string name = text.substr(i + 1, j - i - 1);
    bool semicolon = j < text.size() && text[j] == ';';
    const detail::HtmlEntity* hit = nullptr;
    if (semicolon) {
      for (const auto& e : detail::kHtmlEntities) {
        if (name == e.name) hit = &e;
      }
    }
    if (hit != nullptr) {
      append_utf8(out, hit->code_point);
      i = j + 1;
      continue;
    }
    // Longest legacy prefix without ';' (e.g. "&ampx" -> "&x").
    std::size_t best = 0;
    for (const auto& e : detail::kHtmlEntities) {
      std::size_t len = std::char_traits<char>::length(e.name);
      if (e.legacy && len > best && name.compare(0, len, e.name) == 0) {
        best = len;
        hit = &e;
      }
    }
    if (hit != nullptr) {
      append_utf8(out, hit->code_point);
      i = i + 1 + best;
      continue;
    }
    out.push_back(text[i++]);
  }
  return out;
}

std::string ClipTokenizer::clean(const std::string& text) {
  if (!is_valid_utf8(text)) throw UsageError("caption is not valid UTF-8");
  // ftfy unescapes HTML itself unless the text holds a literal '<'.
  std::string t = text;
  if (t.find('<') == std::string::npos) t = html_unescape(t);
  std::u32string fixed = ftfy_fix(utf8_to_u32(t));
  std::string s = html_unescape(html_unescape(u32_to_utf8(fixed)));
  std::u32string u = strip(utf8_to_u32(s));
  // whitespace_clean: runs of white space become one space, then strip.
  std::u32string collapsed;
  bool in_space = false;
  for (char32_t c : u) {
    if (is_space(c)) {
      in_space = true;
      continue;
    }
    if (in_space && !collapsed.empty()) collapsed.push_back(U' ');
    in_space = false;
    collapsed.push_back(c);
  }
  return u32_to_utf8(icu_lower(collapsed));
}

std::vector<std::string> ClipTokenizer::pre_tokenize(const std::string& cleaned) {
  std::u32string t = utf8_to_u32(cleaned);
  std::vector<std::string> out;
  static const std::u32string kStartU = U"<|startoftext|>", kEndU = U"<|endoftext|>";
  static const std::u32string kContractions[] = {U"'s", U"'t",  U"'re", U"'ve",
                                                 U"'m", U"'ll", U"'d"};
  std::size_t i = 0;
  while (i < t.size()) {
    if (is_space(t[i])) {
      ++i;
      continue;
    }
    std::size_t len = 0;
    if (t.compare(i, kStartU.size(), kStartU) == 0) {
      len = kStartU.size();
    } else if (t.compare(i, kEndU.size(), kEndU) == 0) {
      len = kEndU.size();
    } else {
      for (const auto& c : kContractions) {
        if (t.compare(i, c.size(), c) == 0) {
          len = c.size();
          break;
        }
      }
    }
    if (len == 0) {
      if (is_letter(t[i])) {
        while (i + len < t.size() && is_letter(t[i + len]))
          ++len;
      } else if (is_number(t[i])) {
        len = 1;
      } else {
        while (i + len < t.size() && !is_space(t[i + len]) && !is_letter(t[i + len]) &&
               !is_number(t[i + len])) {
          ++len;
        }
      }
    }
    out.push_back(u32_to_utf8(t.substr(i, len)));
    i += len;
  }
  return out;
}

std::vector<std::string> ClipTokenizer::bpe(const std::string& token) const {
  if (token == kStart || token == kEnd) return {token};
  std::vector<std::string> word = byte_symbols(token);
  word.back() += "</w>";
  return bpe_merge(std::move(word), ranks_);
}

std::vector<int> ClipTokenizer::bpe_ids(const std::string& text) const {
  std::vector<int> ids;
  for (const auto& token : pre_tokenize(clean(text))) {
    for (const auto& piece : bpe(token)) {
      auto it = vocab_.find(piece);
      if (it == vocab_.end()) throw Error("tokenizer: '" + piece + "' is not in the vocabulary");
      ids.push_back(it->second);
    }
  }
  return ids;
}

std::vector<int> ClipTokenizer::encode(const std::string& text, int context_length) const {
  std::vector<int> ids = {start_id_};
  auto body = bpe_ids(text);
  ids.insert(ids.end(), body.begin(), body.end());
  ids.push_back(end_id_);
  if (static_cast<int>(ids.size()) > context_length) {
    ids.resize(static_cast<std::size_t>(context_length));
    ids.back() = end_id_;
  }
  return ids;
}

void ClipTokenizer::build_from_merges(
    const std::vector<std::pair<std::string, std::string>>& merges) {
  for (std::size_t r = 0; r < merges.size(); ++r) {
    ranks_.emplace(merges[r].first + " " + merges[r].second, static_cast<int>(r));
  }
}

ClipTokenizer ClipTokenizer::from_hf(const fs::path& vocab_json, const fs::path& merges_txt) {
  ClipTokenizer tok;
  tok.vocab_ = read_vocab_json(vocab_json);
  Merges merges = read_merges(merges_txt);
  // openai/CLIP and Hugging Face read at most 48,894 merges.
  if (merges.size() > kMergeCount) merges.resize(kMergeCount);
  auto start = tok.vocab_.find(kStart), end = tok.vocab_.find(kEnd);
  if (start == tok.vocab_.end() || end == tok.vocab_.end()) {
    throw InputError({vocab_json.string(), 0, ""}, "no <|startoftext|> / <|endoftext|> tokens");
  }
  // 256 byte symbols, the same with </w>, and the two special tokens.
  check_consistent(tok.vocab_, merges, 2 * 256 + 2, vocab_json, merges_txt);
  tok.build_from_merges(merges);
  tok.start_id_ = start->second;
  tok.end_id_ = end->second;
  return tok;
}

ClipTokenizer ClipTokenizer::from_openai(const fs::path& bpe_gz) {
  std::string compressed = read_file(bpe_gz);
  z_stream zs{};
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) throw Error("zlib: inflateInit2 failed");
  zs.next_in = reinterpret_cast<Bytef*>(compressed.data());
  zs.avail_in = static_cast<uInt>(compressed.size());
  std::string text;
  std::array<char, 1 << 16> buffer{};
  int rc = Z_OK;
  while (rc == Z_OK) {
    zs.next_out = reinterpret_cast<Bytef*>(buffer.data());
    zs.avail_out = static_cast<uInt>(buffer.size());
    rc = inflate(&zs, Z_NO_FLUSH);
    text.append(buffer.data(), buffer.size() - zs.avail_out);
  }
  inflateEnd(&zs);
  if (rc != Z_STREAM_END) throw InputError({bpe_gz.string(), 0, ""}, "corrupt gzip data");
  auto lines = split_lines(text);
  if (lines.size() < kMergeCount + 1) {
    throw InputError({bpe_gz.string(), 0, ""},
                     "expected at least " + std::to_string(kMergeCount + 1) + " lines");
  }
  std::vector<std::pair<std::string, std::string>> merges;
  for (std::size_t n = 1; n <= kMergeCount; ++n) {
    auto sp = lines[n].find(' ');
    if (sp == std::string_view::npos) throw InputError({bpe_gz.string(), n + 1, ""}, "bad merge");
    merges.emplace_back(std::string(lines[n].substr(0, sp)), std::string(lines[n].substr(sp + 1)));
  }
  ClipTokenizer tok;
  int id = 0;
  // openai/CLIP lists the byte symbols in the order of bytes_to_unicode's values: by the code
  // point each byte maps to.
  std::vector<std::string> symbols(bytes_table().begin(), bytes_table().end());
  std::sort(symbols.begin(), symbols.end(), [](const std::string& a, const std::string& b) {
    return utf8_to_u32(a) < utf8_to_u32(b);
  });
  for (const auto& b : symbols)
    tok.vocab_.emplace(b, id++);
  for (const auto& b : symbols)
    tok.vocab_.emplace(b + "</w>", id++);
  for (const auto& [a, b] : merges)
    tok.vocab_.emplace(a + b, id++);
  tok.start_id_ = id;
  tok.vocab_.emplace(kStart, id++);
  tok.end_id_ = id;
  tok.vocab_.emplace(kEnd, id++);
  tok.build_from_merges(merges);
  return tok;
}

std::string ClipTokenizer::token_text(int id) const {
  std::string symbol;
  for (const auto& [text, i] : vocab_) {
    if (i == id) {
      symbol = text;
      break;
    }
  }
  if (symbol.empty()) return "<" + std::to_string(id) + ">";
  if (symbol == kStart || symbol == kEnd) return symbol;
  const bool word_end = symbol.size() >= 4 && symbol.compare(symbol.size() - 4, 4, "</w>") == 0;
  if (word_end) symbol.resize(symbol.size() - 4);
  // Each symbol character stands for one byte (bytes_to_unicode): map back.
  std::string bytes;
  for (const auto& ch : utf8_chars(symbol)) {
    const auto& table = bytes_table();
    auto it = std::find(table.begin(), table.end(), ch);
    if (it != table.end()) bytes.push_back(static_cast<char>(it - table.begin()));
  }
  return bytes;
}

ClipTokenizer ClipTokenizer::byte_level() {
  constexpr int kStartId = 49406, kEndId = 49407;  // CLIP's special ids
  ClipTokenizer tok;
  std::vector<std::string> symbols(bytes_table().begin(), bytes_table().end());
  std::sort(symbols.begin(), symbols.end(), [](const std::string& a, const std::string& b) {
    return utf8_to_u32(a) < utf8_to_u32(b);
  });
  int id = 0;
  for (const auto& b : symbols)
    tok.vocab_.emplace(b, id++);
  for (const auto& b : symbols)
    tok.vocab_.emplace(b + "</w>", id++);
  tok.start_id_ = kStartId;
  tok.end_id_ = kEndId;
  tok.vocab_.emplace(kStart, kStartId);
  tok.vocab_.emplace(kEnd, kEndId);
  return tok;
}

ClipTokenizer ClipTokenizer::from_directory(const fs::path& dir) {
  if (fs::is_regular_file(dir / "vocab.json") && fs::is_regular_file(dir / "merges.txt")) {
    return from_hf(dir / "vocab.json", dir / "merges.txt");
  }
  if (fs::is_regular_file(dir / "bpe_simple_vocab_16e6.txt.gz")) {
    return from_openai(dir / "bpe_simple_vocab_16e6.txt.gz");
  }
  throw IoError(dir.string() +
                    ": no tokenizer (vocab.json + merges.txt or "
                    "bpe_simple_vocab_16e6.txt.gz)",
                "pass --tokenizer FILE_OR_DIR");
}

// ---- GPT-2 ----

std::vector<std::string> Gpt2Tokenizer::pre_tokenize(const std::string& text) {
  if (!is_valid_utf8(text)) throw UsageError("caption is not valid UTF-8");
  const std::u32string t = utf8_to_u32(text);
  const std::size_t n = t.size();
  static const std::u32string kContractions[] = {U"'s", U"'t",  U"'re", U"'ve",
                                                 U"'m", U"'ll", U"'d"};
  auto other = [](char32_t c) { return !is_white_space(c) && !is_letter(c) && !is_number(c); };
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < n) {
    std::size_t len = 0;
    // The alternatives in the pattern's order; the first that matches at i wins.
    for (const auto& c : kContractions) {
      if (t.compare(i, c.size(), c) == 0) {
        len = c.size();
        break;
      }
    }
    const std::size_t s = (t[i] == U' ' && i + 1 < n) ? 1 : 0;  // the optional leading space
    if (len == 0) {
      for (auto cls :
           {+[](char32_t c) { return is_letter(c); }, +[](char32_t c) { return is_number(c); }}) {
        if (cls(t[i])) {
          while (i + len < n && cls(t[i + len]))
            ++len;
        } else if (s == 1 && cls(t[i + 1])) {
          len = 1;
          while (i + len < n && cls(t[i + len]))
            ++len;
        }
        if (len != 0) break;
      }
    }
    if (len == 0) {
      if (other(t[i])) {
        len = 1;
      } else if (s == 1 && other(t[i + 1])) {
        len = 2;
      }
      if (len != 0) {
        while (i + len < n && other(t[i + len]))
          ++len;
      }
    }
    if (len == 0) {
      // t[i] is white space: \s+(?!\S) takes the run, leaving its last character when a
      // non-space follows (if that leaves anything); otherwise \s+ takes the whole run.
      std::size_t end = i;
      while (end < n && is_white_space(t[end]))
        ++end;
      len = end - i;
      if (end < n && len > 1) --len;
    }
    out.push_back(u32_to_utf8(t.substr(i, len)));
    i += len;
  }
  return out;
}

std::vector<int> Gpt2Tokenizer::encode(const std::string& text) const {
  std::vector<int> ids;
  for (const auto& token : pre_tokenize(text)) {
    for (const auto& piece : bpe_merge(byte_symbols(token), ranks_)) {
      auto it = vocab_.find(piece);
      if (it == vocab_.end()) throw Error("tokenizer: '" + piece + "' is not in the vocabulary");
      ids.push_back(it->second);
    }
  }
  return ids;
}

Gpt2Tokenizer Gpt2Tokenizer::from_files(const fs::path& vocab_json, const fs::path& merges_txt) {
  Gpt2Tokenizer tok;
  tok.vocab_ = read_vocab_json(vocab_json);
  const Merges merges = read_merges(merges_txt);
  auto eos = tok.vocab_.find(kEnd);
  if (eos == tok.vocab_.end()) {
    throw InputError({vocab_json.string(), 0, ""}, "no <|endoftext|> token");
  }
  for (const auto& symbol : bytes_table()) {
    if (tok.vocab_.find(symbol) == tok.vocab_.end()) {
      throw InputError({vocab_json.string(), 0, ""},
                       "byte symbol '" + symbol + "' missing: not a byte-level BPE vocabulary");
    }
  }
  // 256 byte symbols and <|endoftext|>.
  check_consistent(tok.vocab_, merges, 256 + 1, vocab_json, merges_txt);
  for (std::size_t r = 0; r < merges.size(); ++r)
    tok.ranks_.emplace(merges[r].first + " " + merges[r].second, static_cast<int>(r));
  tok.eos_id_ = eos->second;
  for (const auto& [text, id] : tok.vocab_)
    tok.max_id_ = std::max(tok.max_id_, id);
  return tok;
}

Gpt2Tokenizer Gpt2Tokenizer::from_directory(const fs::path& dir) {
  if (fs::is_regular_file(dir / "vocab.json") && fs::is_regular_file(dir / "merges.txt")) {
    return from_files(dir / "vocab.json", dir / "merges.txt");
  }
  if (fs::is_regular_file(dir / "encoder.json") && fs::is_regular_file(dir / "vocab.bpe")) {
    return from_files(dir / "encoder.json", dir / "vocab.bpe");
  }
  throw IoError(dir.string() +
                    ": no GPT-2 tokenizer (vocab.json + merges.txt, or encoder.json + "
                    "vocab.bpe)",
                "pass --tokenizer DIR");
}

}  // namespace winokit
