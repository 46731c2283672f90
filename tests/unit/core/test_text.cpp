// Text helpers: splitting, strict numbers, UTF-8.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "winokit/core/error.hpp"
#include "winokit/core/text.hpp"

namespace winokit {
namespace {

TEST(Text, SplitsSecondaryTagsAndWhitespaceIncludingNbsp) {
  EXPECT_EQ(split_trimmed("Symbolic, Series", ','),
            (std::vector<std::string>{"Symbolic", "Series"}));
  EXPECT_TRUE(split_trimmed("", ',').empty());
  EXPECT_EQ(split_whitespace("a\xC2\xA0 b\tc"), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(count_words("an old person kisses a young person"), 7u);
}

TEST(Text, ParsesNumbersStrictly) {
  EXPECT_DOUBLE_EQ(*parse_double(" 0.25 "), 0.25);
  EXPECT_FALSE(parse_double("0.25x"));
  EXPECT_FALSE(parse_double(""));
  EXPECT_TRUE(std::isnan(*parse_double("nan")));
  EXPECT_EQ(*parse_int("17"), 17);
  EXPECT_FALSE(parse_int("1.5"));
}

TEST(Text, Utf8Validation) {
  EXPECT_TRUE(is_valid_utf8("caf\xC3\xA9 \xF0\x9F\x98\x80"));
  EXPECT_FALSE(is_valid_utf8("bad \xC3"));
  EXPECT_FALSE(is_valid_utf8("overlong \xC0\xAF"));
  EXPECT_FALSE(is_valid_utf8("surrogate \xED\xA0\x80"));
}

}  // namespace
}  // namespace winokit
