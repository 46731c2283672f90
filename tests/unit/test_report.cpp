#include <gtest/gtest.h>

#include "test_util.hpp"
#include "winokit/report.hpp"
#include "winokit/text.hpp"

namespace winokit {
namespace {

struct Fixture {
  Dataset ds = test::dataset_of(400);
  std::vector<PairScores> scores;
  EvalResult result;
  ReportContext ctx;
  Fixture() {
    // 123 text right (30.75%), 42 image right (10.50%), 32 group right (8.00%): the paper's
    // CLIP ViT-B/32 row.
    // Order c0_i0, c0_i1, c1_i0, c1_i1: 32 both right, 91 text only, 10 image only, rest wrong.
    const PairScores both{{0.9, 0.1, 0.2, 0.8}}, text_only{{0.5, 0.6, 0.4, 0.9}},
        image_only{{0.5, 0.4, 0.6, 0.9}}, neither{{0.1, 0.9, 0.9, 0.1}};
    for (int i = 0; i < 400; ++i) {
      scores.push_back(i < 32 ? both : i < 123 ? text_only : i < 133 ? image_only : neither);
    }
    EvalOptions opt;
    opt.bootstrap_resamples = 1000;
    result = evaluate(ds, scores, {}, opt);
    ctx = make_context(ds, "CLIP (ViT-B/32)", {{"kind", "test"}}, {}, opt);
  }
};

TEST(Report, MarkdownShapedLikeThePaperWithTwoDecimals) {
  Fixture f;
  ASSERT_EQ(f.result.overall.metrics[kText].correct, 123u);
  std::string md = markdown_report(f.result, f.ctx);
  EXPECT_NE(md.find("| CLIP (ViT-B/32) | 30.75 | "), std::string::npos) << md;
  EXPECT_NE(md.find("| Random chance | 25.00 | 25.00 | 16.67 |"), std::string::npos);
  EXPECT_NE(md.find("Ties: 0 of 1600 comparisons"), std::string::npos);
  EXPECT_NE(md.find("t over 4 folds (paper)"), std::string::npos);
}

TEST(Report, JsonCarriesEveryFigureMethodAndHashes) {
  Fixture f;
  auto j = json_report(f.result, f.ctx);
  const auto& text = j["overall"]["metrics"]["text"];
  EXPECT_DOUBLE_EQ(text["percent"].get<double>(), 30.75);
  EXPECT_EQ(text["n"], 400);
  EXPECT_EQ(text["correct"], 123);
  EXPECT_TRUE(text["intervals"]["fold_t"]["method"].get<std::string>().find("Student") !=
              std::string::npos);
  EXPECT_EQ(j["provenance"]["options"]["seed"], 0);
  EXPECT_EQ(j["provenance"]["dataset"]["n"], 400);
  EXPECT_EQ(j["provenance"]["version"], "0.1.0");
  EXPECT_GE(j["overall"]["metrics"]["group"]["intervals"]["bootstrap_bca"]["high"].get<double>(),
            8.0);
}

TEST(Report, CsvHasOneRowPerGroupAndMetric) {
  Fixture f;
  std::string csv = csv_report(f.result, f.ctx);
  std::size_t groups = 1;
  for (const auto& b : f.result.breakdowns)
    groups += b.groups.size();
  EXPECT_EQ(split_lines(csv).size(), 1 + 3 * groups);
  EXPECT_NE(csv.find("overall,Overall,400,text,30.7500,123,"), std::string::npos);
}

TEST(Report, HtmlIsSelfContainedWithCharts) {
  Fixture f;
  std::string html = html_report(f.result, f.ctx);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("stroke-dasharray"), std::string::npos);  // chance lines
  EXPECT_EQ(html.find("<script src"), std::string::npos);
  EXPECT_EQ(html.find("http://cdn"), std::string::npos);
  EXPECT_NE(html.find("CLIP (ViT-B/32)"), std::string::npos);
}

TEST(Report, PerExampleJsonlOneLineEach) {
  Fixture f;
  std::string out = per_example_jsonl(f.ds, f.scores, f.result, {});
  auto lines = split_lines(out);
  ASSERT_EQ(lines.size(), 400u);
  auto first = nlohmann::json::parse(lines[0]);
  EXPECT_EQ(first["id"], 0);
  EXPECT_EQ(first["text"], true);
  EXPECT_EQ(first["scores"]["c0_i0"], 0.9);
}

TEST(Report, Base64Rfc4648Vectors) {
  EXPECT_EQ(base64(""), "");
  EXPECT_EQ(base64("f"), "Zg==");
  EXPECT_EQ(base64("fo"), "Zm8=");
  EXPECT_EQ(base64("foobar"), "Zm9vYmFy");
}

TEST(Report, HtmlEscapes) {
  EXPECT_EQ(html_escape("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
}

}  // namespace
}  // namespace winokit
