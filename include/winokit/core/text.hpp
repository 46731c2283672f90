// Small text helpers shared by the readers and writers.
//
//   auto parts = winokit::split_trimmed("Symbolic, Series", ',');   // {"Symbolic", "Series"}
//   auto v = winokit::parse_double("0.25");                          // std::optional<double>
//   int n = winokit::count_words("an old person kisses");            // 4
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(core);

namespace winokit {

std::string_view trim(std::string_view s);
std::string to_lower_ascii(std::string_view s);
// Splits on `sep` and trims each part; empty parts are dropped.
std::vector<std::string> split_trimmed(std::string_view s, char sep);
// Splits on runs of white space: ASCII space/tab/CR and U+00A0 (no-break space) in UTF-8.
std::vector<std::string> split_whitespace(std::string_view s);
// Number of white-space separated words.
std::size_t count_words(std::string_view s);
// A whole-string decimal number (leading/trailing blanks allowed); nullopt if not a number.
// Decimal syntax only: hex ("0x10"), "1,5" or "1e" are not numbers. "nan", "inf" and numbers
// beyond a double ("1e400") parse to non-finite values so callers can report them as such.
std::optional<double> parse_double(std::string_view s);
std::optional<long long> parse_int(std::string_view s);
// Splits text into lines (LF or CRLF); a final line without newline is kept.
std::vector<std::string_view> split_lines(std::string_view text);
// Whether `s` is valid UTF-8.
bool is_valid_utf8(std::string_view s);

}  // namespace winokit
