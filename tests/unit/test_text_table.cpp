#include <gtest/gtest.h>

#include <cmath>

#include "winokit/error.hpp"
#include "winokit/table.hpp"
#include "winokit/text.hpp"

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

TEST(Table, CsvWithQuotedFieldsSpanningLines) {
  Table t = read_table("id,name,c0_i0\n1,\"a, \"\"quoted\"\"\nvalue\",0.5\n2,plain,1\n", "t.csv");
  EXPECT_EQ(t.format, TableFormat::Csv);
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0].cells[1], "a, \"quoted\"\nvalue");
  EXPECT_EQ(t.rows[1].line, 4u);
  EXPECT_EQ(*t.find_column({"C0I0"}), 2u);
}

TEST(Table, WhitespaceSeparatedWithNbsp) {
  Table t = read_table("id\xC2\xA0\x43\x30I0  C0I1\n0\xC2\xA0\x31  2\n", "t.txt");
  EXPECT_EQ(t.format, TableFormat::Whitespace);
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.rows[0].cells, (std::vector<std::string>{"0", "1", "2"}));
}

TEST(Table, RaggedRowNamesTheLine) {
  try {
    read_table("id,a\n1,2\n3\n", "r.csv");
    FAIL() << "expected an error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.location().line, 3u);
    EXPECT_NE(std::string(e.what()).find("r.csv:3"), std::string::npos);
  }
  EXPECT_THROW(read_table("id,a\n1,\"open\n", "q.csv"), InputError);
}

TEST(Table, CsvEscape) {
  EXPECT_EQ(csv_escape("plain"), "plain");
  EXPECT_EQ(csv_escape("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_escape("say \"hi\""), "\"say \"\"hi\"\"\"");
}

}  // namespace
}  // namespace winokit
