#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>

#include "test_util.hpp"
#include "winokit/core/error.hpp"
#include "winokit/core/text.hpp"
#include "winokit/data/winoground.hpp"
#include "winokit/io/image_decode.hpp"
#include "winokit/model/preprocess.hpp"
#include "winokit/report/csv_report.hpp"
#include "winokit/report/example_browser.hpp"
#include "winokit/report/format.hpp"
#include "winokit/report/heatmap_report.hpp"
#include "winokit/report/html_report.hpp"
#include "winokit/report/json_report.hpp"
#include "winokit/report/markdown.hpp"
#include "winokit/report/probe_report.hpp"
#include "winokit/report/provenance.hpp"
#include "winokit/report/retrieval_report.hpp"
#include "winokit/report/variants_report.hpp"
#include "winokit/report/winogavil_report.hpp"

namespace winokit {
namespace {

struct Fixture {
  WinogroundDataset ds = test::dataset_of(400);
  std::vector<WinogroundScores> scores;
  EvalResult result;
  ReportContext ctx;
  Fixture() {
    // 123 text right (30.75%), 42 image right (10.50%), 32 group right (8.00%): the paper's
    // CLIP ViT-B/32 row.
    // Order c0_i0, c0_i1, c1_i0, c1_i1: 32 both right, 91 text only, 10 image only, rest wrong.
    const WinogroundScores both{{0.9, 0.1, 0.2, 0.8}}, text_only{{0.5, 0.6, 0.4, 0.9}},
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

TEST(Report, HtmlHeadlineScrollBoxesAndProvenanceTable) {
  Fixture f;
  std::string html = html_report(f.result, f.ctx);
  EXPECT_NE(html.find("class=\"headline\""), std::string::npos);
  EXPECT_NE(html.find("<b>30.75</b>"), std::string::npos);  // the text score in the headline
  EXPECT_NE(html.find("<div class=\"scroll\"><table>"), std::string::npos);
  EXPECT_NE(html.find("<table class=\"prov\">"), std::string::npos);
  EXPECT_EQ(html.find("<pre>"), std::string::npos);  // no raw JSON dump
  EXPECT_NE(html.find("<td>options.seed</td><td>0</td>"), std::string::npos);
  EXPECT_EQ(html.find("Random weights."), std::string::npos);
  EXPECT_EQ(html.find("id=\"examples\""), std::string::npos);  // no browser unless asked
}

TEST(Report, RandomWeightsAreSaidInTheHeader) {
  Fixture f;
  f.ctx.provenance["scorer"] = {{"kind", "clip"}, {"model", "random weights (seed 1)"}};
  std::string html = html_report(f.result, f.ctx);
  const auto warn = html.find("Random weights.");
  ASSERT_NE(warn, std::string::npos);
  EXPECT_LT(warn, html.find("class=\"headline\""));
}

TEST(Report, CompareNamesItsModelColumn) {
  Fixture f;
  std::vector<WinogroundScores> flipped = f.scores;
  std::reverse(flipped.begin(), flipped.end());
  EvalOptions opt;
  opt.bootstrap_resamples = 200;
  CompareResult c = compare_runs(f.ds, {{"a", f.scores, {}}, {"b", flipped, {}}}, opt);
  std::string html = html_compare(c, {{"dataset", {{"examples", "x"}}}});
  EXPECT_NE(html.find("<tr><th>Model</th><th>N</th>"), std::string::npos);
  EXPECT_EQ(html.find("<tr><th>Group</th><th>N</th>"), std::string::npos);
}

TEST(Report, CaptionDifferencesAreMarked) {
  auto d = caption_diff_html("a mug in some grass", "some grass in a mug");
  // One longest common subsequence is "some grass" (or "a mug"); the rest moved.
  EXPECT_EQ(d[0], "<mark>a</mark> <mark>mug</mark> <mark>in</mark> some grass");
  EXPECT_EQ(d[1], "some grass <mark>in</mark> <mark>a</mark> <mark>mug</mark>");
  auto same = caption_diff_html("The cat, sat", "the cat sat");
  EXPECT_EQ(same[0], "The cat, sat");  // case and punctuation do not count as a difference
  auto esc = caption_diff_html("<b> x", "x <b>");
  EXPECT_NE(esc[0].find("&lt;b&gt;"), std::string::npos);
}

TEST(Report, CaptionDiffMarksTheWordsThatMovedNotTheOnesInPlace) {
  // Two longest common subsequences ("holding up" and "a person"): the one that keeps its place
  // wins, so the swapped ends are marked and the shared middle is not.
  auto d = caption_diff_html("a person holding up books", "books holding up a person");
  EXPECT_EQ(d[0], "<mark>a</mark> <mark>person</mark> holding up <mark>books</mark>");
  EXPECT_EQ(d[1], "<mark>books</mark> holding up <mark>a</mark> <mark>person</mark>");
  auto moved = caption_diff_html("books holding up", "holding up books");
  EXPECT_EQ(moved[0], "<mark>books</mark> holding up");
  EXPECT_EQ(moved[1], "holding up <mark>books</mark>");
}

TEST(Report, ExampleBrowserHasEveryExampleFiltersAndMargins) {
  Fixture f;
  ExampleBrowser eb{&f.ds, {"m1", "m2"}, {f.scores, f.scores}, {}, {}};
  eb.images.assign(f.ds.examples.size(), {"data:image/jpeg;base64,AAAA", ""});
  std::string html = example_browser_html(eb);
  std::size_t items = 0;
  for (std::size_t p = html.find("<li class=\"ex\""); p != std::string::npos;
       p = html.find("<li class=\"ex\"", p + 1))
    ++items;
  EXPECT_EQ(items, 400u);
  EXPECT_NE(html.find("id=\"f-outcome\""), std::string::npos);
  EXPECT_NE(html.find("id=\"f-model\""), std::string::npos);  // two models: disagreement filter
  EXPECT_NE(html.find("value=\"0:1:4\">m1 group right, m2 wrong"), std::string::npos);
  EXPECT_NE(html.find("id=\"f-sort\""), std::string::npos);
  // WinogroundExample 0 is right on all three (both) with margin min(0.7, 0.7, 0.8, 0.6) = 0.6.
  EXPECT_NE(html.find("data-o=\"7,7\" data-ties=\"0,0\" data-margin=\"0.6000,0.6000\""),
            std::string::npos);
  EXPECT_NE(html.find("<img src=\"data:image/jpeg;base64,AAAA\""), std::string::npos);
  EXPECT_NE(html.find("<button type=\"button\" class=\"zoom\""), std::string::npos);
  EXPECT_NE(html.find("<dialog id=\"zoom\""), std::string::npos);
  EXPECT_NE(html.find("id=\"f-search\""), std::string::npos);
  EXPECT_NE(html.find("id=\"f-run\""), std::string::npos);  // the outcome of either run
  EXPECT_NE(html.find("value=\"1:0:1\">m2 text right, m1 wrong"), std::string::npos);
  EXPECT_NE(html.find("id=\"ex-empty\""), std::string::npos);
  EXPECT_NE(html.find("data-id=\"0\" data-text=\""), std::string::npos);
  // Example 0 (scores 0.9, 0.1, 0.2, 0.8): every comparison holds, with both numbers.
  EXPECT_NE(html.find("<tr class=\"pass\"><td class=\"m\"><span class=\"ok\" "
                      "aria-label=\"holds\">&#10003;</span></td><th scope=\"row\">i0</th><td>s(c0, "
                      "i0) 0.9000</td><td class=\"op\">&gt;</td><td>s(c1, i0) 0.2000</td><td "
                      "class=\"d\">+0.7000</td></tr>"),
            std::string::npos);
  // Example 40 is text right, image wrong (0.5, 0.6, 0.4, 0.9): caption 0 prefers image 1.
  const auto ex40 = html.find("id=\"ex-40\"");
  ASSERT_NE(ex40, std::string::npos);
  const std::string item = html.substr(ex40, html.find("</li>", ex40) - ex40);
  EXPECT_NE(item.find("Text score <span class=\"ok\">&#10003; right</span>"), std::string::npos);
  EXPECT_NE(item.find("Image score <span class=\"bad\">&#10007; wrong</span>"), std::string::npos);
  EXPECT_NE(item.find("<tr class=\"fail\"><td class=\"m\"><span class=\"bad\" "
                      "aria-label=\"fails\">&#10007;</span></td><th scope=\"row\">c0</th><td>s(c0, "
                      "i0) 0.5000</td><td class=\"op\">&lt;</td><td>s(c0, i1) 0.6000</td><td "
                      "class=\"d\">&minus;0.1000</td></tr>"),
            std::string::npos)
      << item;
  EXPECT_EQ(html.find("src=\"http"), std::string::npos);
  EXPECT_EQ(parse_html_images("link"), HtmlImages::Link);
  EXPECT_THROW(parse_html_images("inline"), UsageError);
}

TEST(Report, MarkdownPagesShareTheStyle) {
  const std::string md =
      "## Probes: m (N = 4)\n\n| Probe | Accuracy |\n|---|---:|\n| pair | 1.00 |\n";
  nlohmann::json prov = {{"scorer", {{"model", "random weights (seed 2)"}}}, {"n", 4}};
  std::string html = markdown_html("Probes: m", md, prov);
  EXPECT_EQ(html.find("<h1>"), std::string::npos);  // the markdown's heading is the title
  const auto heading = html.find("<h2>Probes: m (N = 4)</h2>");
  ASSERT_NE(heading, std::string::npos);
  const auto warn = html.find("Random weights.");
  EXPECT_GT(warn, heading);
  EXPECT_LT(warn, html.find("<table>"));
  EXPECT_NE(html.find("<div class=\"scroll\"><table><tr><th>Probe</th>"), std::string::npos);
  EXPECT_NE(html.find("<td>scorer.model</td><td>random weights (seed 2)</td>"), std::string::npos);
  std::string plain = markdown_html("Other", "| a |\n|---|\n| 1 |\n", {{"n", 1}});
  EXPECT_NE(plain.find("<h1>Other</h1>"), std::string::npos);
  EXPECT_EQ(plain.find("Random weights."), std::string::npos);
}

// Decodes standard base64 (the test's check of the embedded thumbnails).
std::string unbase64(const std::string& text) {
  const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  unsigned buffer = 0;
  int bits = 0;
  for (char c : text) {
    const auto v = alphabet.find(c);
    if (v == std::string::npos) break;
    buffer = (buffer << 6) | static_cast<unsigned>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buffer >> bits) & 0xff);
    }
  }
  return out;
}

TEST(Report, ThumbnailsOfPhotosPngsAndGrayJpegs) {
  const std::filesystem::path images =
      std::filesystem::path(WINOKIT_SHARED_DIR) / "golden/clip/images";
  if (!std::filesystem::exists(images / "coffee_1920x1281.jpg")) GTEST_SKIP() << "no images";
  test::TempDir dir;
  dir.write("examples.jsonl", test::example_line(0) + test::example_line(1));
  std::filesystem::create_directories(dir.path() / "images");
  const std::array<std::pair<const char*, const char*>, 4> files = {
      {{"coffee_1920x1281.jpg", "ex_0_img_0.jpg"},  // large photo: the scaled JPEG path
       {"rocket_gray.jpg", "ex_0_img_1.jpg"},       // grayscale JPEG
       {"coffee_rgba.png", "ex_1_img_0.png"},       // PNG with alpha
       {"tiny_upscale.png", "ex_1_img_1.png"}}};    // smaller than a thumbnail: kept
  for (const auto& [from, to] : files)
    std::filesystem::copy_file(images / from, dir.path() / "images" / to);
  WinogroundDataset ds = load_dataset(dir.path());
  auto uris = example_images(ds, HtmlImages::Embed, dir.path());
  ASSERT_EQ(uris.size(), 2u);
  for (const auto& pair : uris) {
    for (const auto& uri : pair) {
      const std::string prefix = "data:image/jpeg;base64,";
      ASSERT_EQ(uri.rfind(prefix, 0), 0u);
      DecodedImage im = decode_image(unbase64(uri.substr(prefix.size())), "thumbnail");
      EXPECT_LE(std::max(im.width, im.height), 160);
      EXPECT_GT(std::min(im.width, im.height), 0);
    }
  }
  DecodedImage big = decode_image(unbase64(uris[0][0].substr(23)), "t");
  EXPECT_EQ(big.width, 160);  // 1920x1281 -> 160x107, the aspect ratio kept
  EXPECT_EQ(big.height, 107);
  EXPECT_EQ(big.mode, PixelMode::RGB);
  auto links = example_images(ds, HtmlImages::Link, dir.path());
  EXPECT_EQ(links[0][0], "images/ex_0_img_0.jpg");
  auto none = example_images(ds, HtmlImages::None, dir.path());
  EXPECT_TRUE(none[0][0].empty());
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

TEST(Provenance, RecordsToolVersionInputsModelAndOptions) {
  WinogroundDataset ds = test::dataset_of(3);
  ds.examples_path = "examples.jsonl";
  ds.examples_sha256 = "abc";
  EvalOptions options;
  options.seed = 7;
  Provenance p;
  p.dataset(ds)
      .model("scorer", {{"kind", "clip"}, {"weights_sha256", "w"}})
      .inputs("tag_sets")
      .inputs("covariates")
      .list_input("covariates", {"ppl", "ppl.csv", "c1", std::nullopt})
      .list_input("runs", {std::nullopt, "a.jsonl", "h", "official"})
      .input("run_info", "info.csv", "i")
      .input("data", "wg.csv", "d", 5)
      .source("scores", "score-matrix", "file", "m.safetensors")
      .detail("scorer", "prompt_template", "{A} {cue}")
      .field("variant_rows", 4)
      .options(options);
  const nlohmann::json& j = p.json();
  EXPECT_EQ(j["tool"], "winokit");
  EXPECT_FALSE(j["version"].get<std::string>().empty());
  EXPECT_EQ(j["dataset"],
            nlohmann::json({{"examples", "examples.jsonl"}, {"sha256", "abc"}, {"n", 3}}));
  EXPECT_EQ(j["scorer"]["weights_sha256"], "w");
  EXPECT_EQ(j["scorer"]["prompt_template"], "{A} {cue}");
  EXPECT_EQ(j["tag_sets"], nlohmann::json::array());  // recorded even when empty
  EXPECT_EQ(j["covariates"][0],
            nlohmann::json({{"name", "ppl"}, {"file", "ppl.csv"}, {"sha256", "c1"}}));
  EXPECT_EQ(j["runs"][0],
            nlohmann::json({{"file", "a.jsonl"}, {"sha256", "h"}, {"format", "official"}}));
  EXPECT_EQ(j["run_info"], nlohmann::json({{"file", "info.csv"}, {"sha256", "i"}}));
  EXPECT_EQ(j["data"], nlohmann::json({{"file", "wg.csv"}, {"sha256", "d"}, {"n", 5}}));
  EXPECT_EQ(j["scores"], nlohmann::json({{"kind", "score-matrix"}, {"file", "m.safetensors"}}));
  EXPECT_EQ(j["variant_rows"], 4);
  EXPECT_EQ(j["options"]["seed"], 7);
  EXPECT_EQ(j["options"]["secondary_grouping"], "membership");
  Provenance q;
  q.option("seed", 3).option("confidence", 0.9);
  EXPECT_EQ(q.json()["options"], nlohmann::json({{"seed", 3}, {"confidence", 0.9}}));
}

TEST(Provenance, TheEvaluationContextKeepsItsKeysInOrder) {
  Fixture f;
  // The serialised record: keys sorted, the same bytes whatever order they were added in.
  const std::string text = f.ctx.provenance.dump();
  const char* keys[] = {"\"covariates\"", "\"dataset\"", "\"options\"", "\"scorer\"",
                        "\"tag_sets\"",   "\"tool\"",    "\"version\""};
  std::size_t at = 0;
  for (const char* k : keys) {
    const std::size_t found = text.find(std::string(k) + ":", at);
    ASSERT_NE(found, std::string::npos) << k << " in " << text;
    at = found;
  }
  EXPECT_EQ(f.ctx.provenance["scorer"], nlohmann::json({{"kind", "test"}}));
}

ProbeReport small_probe_report() {
  ProbeReport r;
  r.model = "tiny";
  r.options.seeds = {0, 1};
  ProbeResult p;
  p.task = to_string(ProbeTask::PairText);
  p.layer = "final";
  p.train_rows = 30;
  p.test_rows = 10;
  p.target_min = 0.6;
  p.target_max = 0.75;
  p.control_min = 0.4;
  p.control_max = 0.55;
  p.runs = {{0, 0.6, 0.4, 0.9, 0.8}, {1, 0.75, 0.55, 0.95, 0.85}};
  r.results = {p};
  r.svm = {{"final", 5, 0.8, 0.2, 0.125, std::nan("")}};
  r.seconds = 1.5;
  r.provenance = Provenance().field("embeddings", {{"kind", "embeddings"}}).json();
  return r;
}

TEST(ProbeReport, TablesJsonAndPlots) {
  const ProbeReport r = small_probe_report();
  const std::string md = probe_markdown(r);
  EXPECT_NE(md.find("## Probes: tiny"), std::string::npos);
  EXPECT_NE(md.find("2 seeds (0..1)"), std::string::npos) << md;
  EXPECT_NE(md.find("| final | 30 / 10 | 60.00 | 75.00 | 40.00 | 55.00 |"), std::string::npos)
      << md;
  EXPECT_NE(md.find("| final | 5 | 80.00 | 20.00 | 0.1250 | n/a |"), std::string::npos) << md;
  EXPECT_EQ(md.find("Pair probe, image score"), std::string::npos);  // no rows, no table
  const nlohmann::json j = probe_json(r);
  EXPECT_EQ(j["mlp_probes"][0]["runs"].size(), 2u);
  EXPECT_DOUBLE_EQ(j["mlp_probes"][0]["target_max_percent"].get<double>(), 75.0);
  EXPECT_TRUE(j["svm"][0]["control_margin"].is_null());
  EXPECT_EQ(j["pooling"], "cls");
  EXPECT_EQ(j["provenance"]["tool"], "winokit");
  const std::string html = probe_html(r);
  EXPECT_NE(html.find("<h2>Per-layer plots</h2><div class=\"chart\"><svg"), std::string::npos);
  EXPECT_NE(html.find("SVM separability: share of items separated by layer"), std::string::npos);
  EXPECT_LT(html.find("Per-layer plots"), html.find("<h2>Provenance</h2>"));  // plots first
}

TEST(RetrievalReport, RecallTableAndJson) {
  RetrievalReport r;
  r.model = "m";
  r.captions = r.images = 8;
  r.recall.ks = {1, 2};
  r.recall.text_to_image = {0.5, 0.875};
  r.recall.image_to_text = {0.25, 1.0};
  r.recall.t2i_ties = 1;
  r.recall.t2i_median_rank = 1.5;
  r.recall.i2t_median_rank = 2;
  r.provenance = Provenance().json();
  const std::string md = retrieval_markdown(r);
  EXPECT_NE(md.find("## Retrieval: m (8 captions x 8 images)"), std::string::npos);
  EXPECT_NE(md.find("| Direction | R@1 | R@2 | Median rank |\n|---|---:|---:|---:|\n| text -> "
                    "image | 50.00 | 87.50 | 1.5 |\n| image -> text | 25.00 | 100.00 | 2 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("Ties (strict): rank = 1 + items scored higher + other items scored equal"),
            std::string::npos);
  EXPECT_NE(md.find("1 caption queries and 0 image queries"), std::string::npos);
  const nlohmann::json j = retrieval_json(r);
  EXPECT_EQ(j["text_to_image_percent"], nlohmann::json({50.0, 87.5}));
  EXPECT_EQ(j["ties"]["text_to_image_queries"], 1);
  EXPECT_EQ(j["ties"]["rule"], "strict");
  EXPECT_EQ(j["median_rank"]["text_to_image"], 1.5);
  r.recall.ties = TieRule::Official;
  EXPECT_NE(retrieval_markdown(r).find("Ties (official): rank = 1 + items scored higher: the "
                                       "correct item ranks first"),
            std::string::npos);
  EXPECT_NE(retrieval_html(r).find("<h2>Retrieval: m (8 captions x 8 images)</h2>"),
            std::string::npos);
}

TEST(VariantsReport, GroupsPerAugmentationFamilyAndAll) {
  const WinogroundDataset ds = test::dataset_of(2);
  // WinogroundExample 0 right on both captions, example 1 wrong on caption 0's text score.
  const std::vector<WinogroundScores> original = {WinogroundScores{{0.9, 0.1, 0.2, 0.8}},
                                                  WinogroundScores{{0.1, 0.9, 0.2, 0.8}}};
  const std::vector<CaptionVariant> variants = {{1, 0, "synonym", "v1", "paraphrasing"},
                                                {1, 1, "hypernym", "v2", "rulebased"}};
  // The synonym variant of example 1's caption 0 prefers image 0: it repairs the text score.
  const std::vector<std::array<double, 2>> scores = {{{2.0, 0.0}}, {{0.2, 0.8}}};
  const VariantsReport r = variants_report(ds, original, variants, scores, {0, 1}, true);
  ASSERT_EQ(r.groups.size(), 5u);  // hypernym, synonym, family:paraphrasing, family:rulebased, all
  EXPECT_EQ(r.groups[0].name, "hypernym");
  EXPECT_EQ(r.groups[2].name, "family:paraphrasing");
  EXPECT_EQ(r.groups[4].name, "all");
  EXPECT_EQ(r.groups[4].variants, 2u);
  EXPECT_EQ(r.groups[4].captions, 2u);
  ASSERT_EQ(r.groups[1].settings.size(), 4u);                // mean and max, two lambdas each
  EXPECT_DOUBLE_EQ(r.groups[1].settings[0].scores[0], 0.5);  // lambda 0: the original
  const std::string md = variants_markdown(r);
  EXPECT_NE(md.find("(N = 2, 2 variants)"), std::string::npos) << md;
  EXPECT_NE(md.find("### synonym (1 variants of 1 captions)"), std::string::npos);
  EXPECT_NE(md.find("the original caption T (the identity variant"), std::string::npos);
  EXPECT_NE(augmented_score_definition(false).find("--exclude-original"), std::string::npos);
  const nlohmann::json j = variants_json(r);
  EXPECT_EQ(j["augmentations"].size(), 5u);
  EXPECT_TRUE(j["include_original"].get<bool>());
  EXPECT_EQ(j["augmentations"][1]["settings"].size(), 4u);
}

TEST(WinogavilReport, SupervisedSectionAndJson) {
  SupervisedResult sup;
  sup.protocol = "train on one group";
  SupervisedGroup g;
  g.name = "5&6";
  SupervisedRun run;
  run.seed = 3;
  run.train_pairs = 10;
  run.validation = 2;
  run.test = 4;
  run.epoch = 1;
  run.test_jaccard = 0.5;
  run.zero_shot_jaccard = 0.25;
  run.by_candidates = {{5, {0.5, 4}}};
  g.runs = {run};
  g.mean = 0.5;
  sup.groups = {g};
  const std::string md = markdown_supervised(sup, 5);
  EXPECT_NE(md.find("### Supervised baseline (5 runs per group)"), std::string::npos);
  EXPECT_NE(md.find("| 3 | 10 | 2 | 4 | 1 | 50.0 | 25.0 | 5: 50.0 (N 4) |"), std::string::npos)
      << md;
  const nlohmann::json j = json_supervised(sup);
  EXPECT_EQ(j["protocol"], "train on one group");
  EXPECT_EQ(j["groups"][0]["runs"][0]["by_candidates"]["5"]["n"], 4);
}

TEST(HeatmapReport, FiguresPerTokenAndTheModel) {
  HeatmapReport r{"tiny<1>", {{"7", {{1, 0, "a & b", {{"a", "PNG"}}}}}}, {{"kind", "clip"}}};
  const std::string html = heatmap_html(r);
  EXPECT_NE(html.find("<h1>Word-patch similarity: tiny&lt;1&gt;</h1>"), std::string::npos);
  EXPECT_NE(html.find("<h2>Example 7</h2><h3>image 1 with caption 0: a &amp; b</h3>"),
            std::string::npos);
  EXPECT_NE(html.find("src=\"data:image/png;base64," + base64("PNG") + "\""), std::string::npos);
  EXPECT_NE(html.find("<td>kind</td><td>clip</td>"), std::string::npos);  // provenance table
  EXPECT_NE(html.find("name=\"viewport\""), std::string::npos);
  EXPECT_NE(html.find("class=\"heat-scale\""), std::string::npos);
  EXPECT_NE(html.find("<span>lowest similarity in the map</span><span>highest</span>"),
            std::string::npos);
  EXPECT_NE(html.find("stop-color=\"#440154\""), std::string::npos);  // viridis' dark end
  EXPECT_NE(html.find("stop-color=\"#fde725\""), std::string::npos);  // and its yellow end
}

TEST(HeatmapReport, FilesAreNamedByWord) {
  EXPECT_EQ(heatmap_file_name("3", 0, 1, 2, "Dog"), "ex3_i0_c1_t2_dog.png");
  EXPECT_EQ(heatmap_file_name("12", 1, 0, 0, "##ing"), "ex12_i1_c0_t0_ing.png");
  EXPECT_EQ(heatmap_file_name("0", 0, 0, 4, "."), "ex0_i0_c0_t4.png");
  EXPECT_EQ(heatmap_file_name("0", 0, 0, 5, "caf\xc3\xa9/../x"), "ex0_i0_c0_t5_cafx.png");
}

TEST(Report, NegativeTIntervalBoundIsClippedAndExplained) {
  // Split in id order, the fixture's group score is 32 / 100 in the first fold and 0 in the
  // other three: mean 8, and mean - t(3) x SE reaches below 0.
  Fixture f;
  EvalOptions opt;
  opt.bootstrap_resamples = 1000;
  opt.fold_split = FoldSplit::IdOrder;
  f.result = evaluate(f.ds, f.scores, {}, opt);
  f.ctx = make_context(f.ds, "CLIP (ViT-B/32)", {{"kind", "test"}}, {}, opt);
  const auto& t = f.result.overall.metrics[kGroup].fold_t;
  ASSERT_TRUE(t);
  ASSERT_LT(t->ci.low, 0);
  const std::string html = html_report(f.result, f.ctx);
  EXPECT_NE(html.find("[0.00, " + percent(t->ci.high) + "]<sup>&dagger;</sup>"), std::string::npos);
  EXPECT_NE(html.find("Clipped to the possible range 0-100"), std::string::npos);
  EXPECT_NE(html.find(std::string(kMetricNames[kGroup]) + ": lower bound " + percent(t->ci.low)),
            std::string::npos);
}

TEST(Report, GroupChartLeavesRoomForItsLabels) {
  // A long first label: the left margin grows so that the rotated label starts inside the chart.
  GroupStats g;
  g.name = "Adjective-Color";
  g.n = 12;
  const std::string svg = svg_group_chart({g, g}, "t");
  const auto x = svg.find("text-anchor=\"end\" transform=\"rotate(-35 ");
  ASSERT_NE(x, std::string::npos);
  const double anchor = std::stod(svg.substr(x + 40));
  // "Adjective-Color (12)" is 20 characters at up to 7 px, times cos 35.
  EXPECT_GE(anchor, 20 * 7.0 * 0.82);
}

}  // namespace
}  // namespace winokit
