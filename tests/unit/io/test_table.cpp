// The CSV / whitespace table reader.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "winokit/core/error.hpp"
#include "winokit/io/table.hpp"

namespace winokit {
namespace {

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
