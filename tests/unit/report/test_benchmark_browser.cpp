// The HTML report of any registered benchmark (report/benchmark_browser.hpp) from a benchmark of
// the test's own, so nothing here depends on a real benchmark's loader.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <memory>

#include "winokit/core/error.hpp"
#include "winokit/eval/benchmark.hpp"
#include "winokit/io/png_writer.hpp"
#include "winokit/report/benchmark_browser.hpp"

namespace winokit {
namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1))
    ++n;
  return n;
}

// Two items: one image with a caption and a foil (a tie: wrong), and a 2 x 2 item (right).
class ToyBenchmark final : public Benchmark {
 public:
  std::string name() const override { return "toy"; }
  std::string title() const override { return "Toy <benchmark>"; }
  std::string description() const override { return "a test benchmark"; }
  BenchmarkData load(const BenchmarkLoadOptions&) const override {
    BenchmarkData d;
    d.benchmark = "toy";
    d.file = "toy.json";
    d.sha256 = std::string(64, 'a');
    d.items.push_back(
        {"one", {"a dog on a <b>mat</b>", "a mat on a dog"}, {unread_image("x.jpg")}});
    d.items.push_back({"two",
                       {"the door is open", "the door is closed"},
                       {unread_image("a.jpg"), unread_image("b.jpg")}});
    return d;
  }
  BenchmarkSummary evaluate(const BenchmarkData&, const std::vector<ItemScores>& s,
                            const BenchmarkOptions&) const override {
    BenchmarkSummary out;
    out.metrics.push_back({"accuracy", 50, 2, 10.0, 90.0, "seeded bootstrap percentile"});
    out.sections.push_back({"Per subset", "a note", {"Subset", "N"}, {{"first", "1"}}});
    out.items.push_back({"first",
                         {1, 0},
                         {true_text_check("caption over foil", s[0], {1, 0}, 2, 1)},
                         "an official note",
                         s[0]});
    out.items.push_back({"second", {1, 0, 0, 1}, winoground_style_checks(s[1]), {}, s[1]});
    return out;
  }
};

struct Fixture {
  ToyBenchmark b;
  BenchmarkData data = b.load({});
  std::vector<ItemScores> scores = {{0.5, 0.5}, {0.9, 0.1, 0.2, 0.8}};
  BenchmarkSummary summary = b.evaluate(data, scores, {});
};

TEST(BenchmarkBrowser, EveryItemWithItsTruthChecksAndFailedComparisons) {
  Fixture f;
  const BenchmarkImages none = benchmark_images(f.data, HtmlImages::Embed, ".", false);
  const std::string h = benchmark_browser_html(f.data, f.summary, none);
  EXPECT_EQ(count(h, "<li class=\"ex\""), 2u);
  EXPECT_NE(
      h.find("data-id=\"one\" data-text=\"a dog on a &lt;b&gt;mat&lt;/b&gt; / a mat on a dog / \" "
             "data-subset=\"first\" data-o=\"0\" data-ties=\"1\" data-margin=\"0.0000\""),
      std::string::npos)
      << "the tie item: wrong, with a tie, margin 0";
  EXPECT_NE(h.find("data-id=\"two\""), std::string::npos);
  EXPECT_NE(h.find("data-o=\"111\" data-ties=\"0\" data-margin=\"0.6000\""), std::string::npos);
  // Texts: escaped, the true one marked, the words that moved highlighted.
  EXPECT_EQ(h.find("<b>mat</b>"), std::string::npos) << "caption text is escaped";
  EXPECT_EQ(count(h, "<li class=\"true\">"), 3u);
  EXPECT_EQ(count(h, "<li class=\"foil\">"), 1u);
  EXPECT_NE(h.find("<span class=\"badge\">true of i1</span>"), std::string::npos);
  EXPECT_NE(h.find("the door is <mark>open</mark>"), std::string::npos);
  // The failed comparison of the tie, and every check of the 2 x 2 item.
  EXPECT_EQ(count(h, "<tr class=\"fail\">"), 1u);
  EXPECT_NE(h.find("s(t0, i0) 0.5000</td><td class=\"op\">=</td><td>s(t1, i0) 0.5000</td><td "
                   "class=\"d\">tie</td>"),
            std::string::npos);
  EXPECT_NE(h.find("<p class=\"check\"><b>image score</b>: <span class=\"ok\">"),
            std::string::npos);
  EXPECT_EQ(count(h, "<td class=\"truth\">"), 3u) << "the true pairs of the matrices";
  // Filters: the subsets with their counts, each check's outcome, ties.
  EXPECT_NE(h.find("<option value=\"first\">first (1)</option>"), std::string::npos);
  EXPECT_NE(h.find("<option value=\"1:0\">text score wrong</option>"), std::string::npos);
  EXPECT_NE(h.find("an official note"), std::string::npos);
  EXPECT_NE(h.find("No images shown: this run read its scores from a file"), std::string::npos);
  EXPECT_EQ(h.find("<img"), std::string::npos);
}

TEST(BenchmarkBrowser, WholePageHasMetricsSectionsBrowserAndProvenance) {
  Fixture f;
  const std::string h = summary_html(f.b, f.data, f.summary, "m<1>", {{"tool", "winokit"}},
                                     benchmark_images(f.data, HtmlImages::None, ".", true));
  EXPECT_EQ(h.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(h.find("<h1>Toy &lt;benchmark&gt;: m&lt;1&gt;</h1>"), std::string::npos);
  EXPECT_NE(h.find("<td>accuracy</td><td>50.00</td><td>2</td><td>[10.00, 90.00] seeded bootstrap "
                   "percentile</td>"),
            std::string::npos);
  EXPECT_NE(h.find("<h2>Per subset</h2>"), std::string::npos);
  EXPECT_NE(h.find("<section id=\"items\">"), std::string::npos);
  EXPECT_NE(h.find("No images shown: --html-images none."), std::string::npos);
  EXPECT_NE(h.find("<h2>Provenance</h2>"), std::string::npos);
  EXPECT_NE(h.find("</html>"), std::string::npos);
}

TEST(BenchmarkBrowser, ThumbnailsReadEachImageOnceAndABadImageIsAnError) {
  Fixture f;
  std::vector<std::uint8_t> rgb(8 * 6 * 3, 200);
  const std::string png = encode_png_rgb8(rgb, 8, 6);
  auto reads = std::make_shared<std::atomic<int>>(0);
  const auto request = [&](const std::string& name) {
    return ImageRequest{name,
                        [png, name, reads] {
                          ++*reads;
                          return ImageBytes{name, name, ImageFormat::Png, png};
                        },
                        {}};
  };
  // The same image in both items: read once, shown twice.
  f.data.items[0].images = {request("same.png")};
  f.data.items[1].images = {request("same.png"), request("other.png")};
  const BenchmarkImages im = benchmark_images(f.data, HtmlImages::Embed, ".", true);
  EXPECT_EQ(reads->load(), 2);
  ASSERT_EQ(im.src.size(), 2u);
  EXPECT_EQ(im.src[0][0].rfind("data:image/jpeg;base64,", 0), 0u);
  EXPECT_EQ(im.src[0][0], im.src[1][0]);
  const std::string h = benchmark_browser_html(f.data, f.summary, im);
  EXPECT_EQ(count(h, "<img src=\"data:image/jpeg;base64,"), 3u);
  EXPECT_NE(h.find("<dialog id=\"zoom\""), std::string::npos);
  // A broken image: an InputError naming it, before any text is made.
  f.data.items[1].images[1] = {
      "broken.png",
      [] {
        return ImageBytes{"broken.png", "broken.png", ImageFormat::Png, "not a png"};
      },
      {}};
  try {
    benchmark_images(f.data, HtmlImages::Embed, ".", true);
    FAIL() << "a broken image must be an error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("broken.png"), std::string::npos) << e.what();
  }
}

TEST(BenchmarkBrowser, ASeededSampleOfTheItems) {
  EXPECT_TRUE(browser_sample(10, 0, 1).empty()) << "0: every item";
  EXPECT_TRUE(browser_sample(10, 10, 1).empty());
  const auto a = browser_sample(1000, 25, 7);
  ASSERT_EQ(a.size(), 25u);
  EXPECT_TRUE(std::is_sorted(a.begin(), a.end()));
  EXPECT_EQ(std::adjacent_find(a.begin(), a.end()), a.end()) << "no item twice";
  EXPECT_LT(a.back(), 1000u);
  EXPECT_EQ(a, browser_sample(1000, 25, 7)) << "the same seed, the same sample";
  EXPECT_NE(a, browser_sample(1000, 25, 8));
  Fixture f;
  const BenchmarkImages im = benchmark_images(f.data, HtmlImages::Embed, ".", false, {1});
  const std::string h = benchmark_browser_html(f.data, f.summary, im);
  EXPECT_EQ(count(h, "<li class=\"ex\""), 1u);
  EXPECT_NE(h.find("data-id=\"two\""), std::string::npos);
  EXPECT_NE(h.find("a seeded random sample of 1 of the 2 items"), std::string::npos);
  EXPECT_EQ(h.find("<option value=\"first\">"), std::string::npos) << "subsets of the sample";
  EXPECT_THROW(benchmark_images(f.data, HtmlImages::None, ".", true, {5}), UsageError);
}

TEST(BenchmarkBrowser, RefusesOutcomesThatDoNotMatchTheItems) {
  Fixture f;
  f.summary.items.pop_back();
  EXPECT_THROW(benchmark_browser_html(f.data, f.summary, {}), UsageError);
  Fixture g;
  g.summary.items[1].scores.pop_back();
  EXPECT_THROW(benchmark_browser_html(g.data, g.summary, {}), UsageError);
}

}  // namespace
}  // namespace winokit
