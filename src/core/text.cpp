#include "winokit/core/text.hpp"

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>

namespace winokit {

namespace {
bool is_ascii_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}
// U+00A0 NO-BREAK SPACE is encoded as C2 A0 in UTF-8.
constexpr unsigned char kNbspLead = 0xC2;
constexpr unsigned char kNbspTrail = 0xA0;
bool nbsp_at(std::string_view s, std::size_t i) {
  return i + 1 < s.size() && static_cast<unsigned char>(s[i]) == kNbspLead &&
         static_cast<unsigned char>(s[i + 1]) == kNbspTrail;
}
}  // namespace

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_ascii_blank(s.front()))
    s.remove_prefix(1);
  while (!s.empty() && is_ascii_blank(s.back()))
    s.remove_suffix(1);
  return s;
}

std::string to_lower_ascii(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::vector<std::string> split_trimmed(std::string_view s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    std::size_t end = s.find(sep, start);
    if (end == std::string_view::npos) end = s.size();
    auto part = trim(s.substr(start, end - start));
    if (!part.empty()) out.emplace_back(part);
    start = end + 1;
  }
  return out;
}

std::vector<std::string> split_whitespace(std::string_view s) {
  std::vector<std::string> out;
  std::string current;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (is_ascii_blank(s[i]) || nbsp_at(s, i)) {
      if (nbsp_at(s, i)) ++i;
      if (!current.empty()) out.push_back(std::move(current));
      current.clear();
    } else {
      current.push_back(s[i]);
    }
  }
  if (!current.empty()) out.push_back(std::move(current));
  return out;
}

std::size_t count_words(std::string_view s) {
  return split_whitespace(s).size();
}

namespace {
// Decimal syntax only: [+-] digits [. digits] [e [+-] digits] (".5" and "5." too), or nan / inf /
// infinity in any case. strtod alone would also take hex ("0x10" = 16) and "nan(...)".
bool is_decimal_syntax(std::string_view s) {
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  std::string word;
  for (std::size_t k = i; k < s.size(); ++k)
    word.push_back(static_cast<char>(s[k] >= 'A' && s[k] <= 'Z' ? s[k] - 'A' + 'a' : s[k]));
  if (word == "nan" || word == "inf" || word == "infinity") return true;
  auto digits = [&] {
    std::size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9')
      ++i;
    return i - start;
  };
  std::size_t mantissa = digits();
  if (i < s.size() && s[i] == '.') {
    ++i;
    mantissa += digits();
  }
  if (mantissa == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == s.size();
}
}  // namespace

std::optional<double> parse_double(std::string_view s) {
  s = trim(s);
  if (s.empty() || !is_decimal_syntax(s)) return std::nullopt;
  std::string buffer(s);
  errno = 0;
  char* end = nullptr;
  double value = std::strtod(buffer.c_str(), &end);
  if (end != buffer.c_str() + buffer.size()) return std::nullopt;
  // Overflow to infinity is reported as a non-finite value by the caller; underflow is fine.
  return value;
}

std::optional<long long> parse_int(std::string_view s) {
  s = trim(s);
  if (s.empty()) return std::nullopt;
  std::string buffer(s);
  errno = 0;
  char* end = nullptr;
  long long value = std::strtoll(buffer.c_str(), &end, 10);
  if (errno != 0 || end != buffer.c_str() + buffer.size()) return std::nullopt;
  return value;
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    start = end + 1;
  }
  return lines;
}

bool is_valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    std::size_t extra = 0;
    std::uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      extra = 1;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      extra = 2;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      extra = 3;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + extra >= s.size()) return false;
    for (std::size_t k = 1; k <= extra; ++k) {
      auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    // Reject overlong forms, surrogates and values beyond U+10FFFF.
    if ((extra == 1 && cp < 0x80) || (extra == 2 && cp < 0x800) || (extra == 3 && cp < 0x10000) ||
        (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) {
      return false;
    }
    i += extra + 1;
  }
  return true;
}

}  // namespace winokit
