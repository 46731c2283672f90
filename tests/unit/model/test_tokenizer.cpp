// The CLIP tokenizer's text cleaning and byte-level BPE.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "winokit/core/error.hpp"
#include "winokit/model/tokenizer.hpp"

namespace winokit {
namespace fs = std::filesystem;
namespace {

TEST(Tokenizer, HtmlUnescapeLikePython) {
  EXPECT_EQ(html_unescape("&amp; &lt;b&gt; &quot;x&quot; &#39;y&#x27;"), "& <b> \"x\" 'y'");
  EXPECT_EQ(html_unescape("&amp"), "&");
  EXPECT_EQ(html_unescape("&ampx &notit;"), "&x \xC2\xACit;");
  EXPECT_EQ(html_unescape("&unknown; & alone"), "&unknown; & alone");
  EXPECT_EQ(html_unescape("&#0;"), "\xEF\xBF\xBD");
  EXPECT_EQ(html_unescape("&#128;"), "\xE2\x82\xAC");
  EXPECT_EQ(html_unescape("&eacute;l&egrave;ve"), "\xC3\xA9l\xC3\xA8ve");
}

TEST(Tokenizer, CleaningAndPreTokens) {
  EXPECT_EQ(ClipTokenizer::clean("  It\xE2\x80\x99s   A\tDog&amp;Cat\n"), "it's a dog&cat");
  EXPECT_EQ(ClipTokenizer::pre_tokenize("it's the kid's 2nd ball!!"),
            (std::vector<std::string>{"it", "'s", "the", "kid", "'s", "2", "nd", "ball", "!!"}));
  EXPECT_EQ(ClipTokenizer::pre_tokenize("<|endoftext|>x"),
            (std::vector<std::string>{"<|endoftext|>", "x"}));
  EXPECT_THROW(ClipTokenizer::clean("bad \xC3"), UsageError);
}

TEST(Tokenizer, ByteLevelNeedsNoFiles) {
  auto tok = ClipTokenizer::byte_level();
  auto ids = tok.encode("ab");
  // start, 'a' (a plain symbol), 'b</w>' (symbols then symbols with </w>), end.
  ASSERT_EQ(ids.size(), 4u);
  EXPECT_EQ(ids.front(), 49406);
  EXPECT_EQ(ids.back(), 49407);
  EXPECT_LT(ids[1], 256);
  EXPECT_GE(ids[2], 256);
  auto longest = tok.encode(std::string(200, 'x'));
  EXPECT_EQ(longest.size(), 77u);
  EXPECT_EQ(longest.back(), 49407);
}

}  // namespace
}  // namespace winokit
