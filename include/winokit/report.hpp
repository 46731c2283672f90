// Report writers for evaluation and comparison results: markdown tables (shaped like the
// Winoground paper's Tables 3-5, percentages with two decimals), JSON with every figure, its N,
// interval, method, seed and the input hashes, long-format CSV, per-example JSONL, and a
// self-contained HTML report with inline SVG charts.
//
//   winokit::ReportContext ctx = winokit::make_context(dataset, "clip", scorer->describe(),
//                                                    inputs, options);
//   std::cout << winokit::markdown_report(result, ctx);
//   out.add("report.html", winokit::html_report(result, ctx));
#pragma once

#include <array>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "winokit/eval/compare.hpp"
#include "winokit/eval/evaluation.hpp"

namespace winokit {

struct ReportContext {
  std::string model;          // shown in tables
  nlohmann::json provenance;  // tool, version, dataset, scorer, tag sets, covariates, options
};

ReportContext make_context(const WinogroundDataset& dataset, const std::string& model,
                           const nlohmann::json& scorer, const EvalInputs& inputs,
                           const EvalOptions& options);

// "30.75" for 0.3075: percentage with two decimals.
std::string percent(double proportion, int decimals = 2);
// "[25.51, 36.02]" or "n/a".
std::string interval_text(const Interval& interval, int decimals = 2);
std::string html_escape(const std::string& text);
// Standard base64 (RFC 4648), for images embedded in self-contained HTML.
std::string base64(const std::string& bytes);
nlohmann::json options_json(const EvalOptions& options);
// {"examples": path, "sha256": ..., "n": ...}: how every result file names its dataset.
nlohmann::json dataset_json(const WinogroundDataset& dataset);

std::string markdown_report(const EvalResult& result, const ReportContext& ctx);
nlohmann::json json_report(const EvalResult& result, const ReportContext& ctx);
std::string csv_report(const EvalResult& result, const ReportContext& ctx);
std::string html_report(const EvalResult& result, const ReportContext& ctx);
struct ExampleBrowser;
// With a per-example section (the example browser) when `examples` is given.
std::string html_report(const EvalResult& result, const ReportContext& ctx,
                        const ExampleBrowser* examples);
std::string per_example_jsonl(const WinogroundDataset& dataset,
                              const std::vector<WinogroundScores>& scores, const EvalResult& result,
                              const std::vector<TagSet>& tag_sets);

std::string markdown_compare(const CompareResult& result);
nlohmann::json json_compare(const CompareResult& result, const nlohmann::json& provenance);
std::string csv_compare(const CompareResult& result);
std::string html_compare(const CompareResult& result, const nlohmann::json& provenance);
std::string html_compare(const CompareResult& result, const nlohmann::json& provenance,
                         const ExampleBrowser* examples);

// ---- The example browser of the HTML reports ----
//
//   ExampleBrowser eb{&dataset, {"clip"}, {scores}, tag_sets,
//                     example_images(dataset, HtmlImages::Embed, "reports")};
//   out.add("reports/r.html", html_report(result, ctx, &eb));

// How the browser shows images: JPEG thumbnails embedded as data: URIs (one self-contained
// file), links to the image files (relative to the report's folder), or none.
enum class HtmlImages { Embed, Link, None };
// "embed", "link" or "none"; anything else is a UsageError.
HtmlImages parse_html_images(const std::string& text);

struct ExampleBrowser {
  const WinogroundDataset* dataset = nullptr;
  std::vector<std::string> models;                    // one for eval, several for compare
  std::vector<std::vector<WinogroundScores>> scores;  // per model, aligned with dataset.examples
  std::vector<TagSet> tag_sets;
  std::vector<std::array<std::string, 2>> images;  // per example: img src, or empty
};

// The two image sources of every example. Embed: thumbnails at most `max_side` pixels on the
// longer side (PIL bicubic after a box pre-reduction), JPEG quality 70, as data: URIs. Link:
// paths relative to `report_dir` (images inside a zip cannot be linked: InputError). Throws
// IoError / InputError for a missing or broken image.
std::vector<std::array<std::string, 2>> example_images(const WinogroundDataset& dataset,
                                                       HtmlImages mode,
                                                       const std::filesystem::path& report_dir,
                                                       int max_side = 160);
// The per-example section: filters (tag, outcome, model disagreement), sort by margin.
std::string example_browser_html(const ExampleBrowser& browser);
// The two captions as HTML with the words outside their longest common word subsequence in
// <mark>: the words that moved or changed.
std::array<std::string, 2> caption_diff_html(const std::string& a, const std::string& b);

// ---- Shared pieces of every HTML report ----
// A whole self-contained page (the common style: scroll boxes, phone layout, resizing charts).
std::string html_page(const std::string& title, const std::string& body);
// The provenance record as a two-column table of dotted field names and values.
std::string provenance_html(const nlohmann::json& provenance);
// Wraps every <table>...</table> of `html` in a horizontal scroll box.
std::string html_scroll_tables(const std::string& html);

// A self-contained HTML page from the project's own markdown (headings, pipe tables,
// paragraphs), with the provenance JSON at the end: the HTML output of the analysis commands.
std::string markdown_html(const std::string& title, const std::string& markdown,
                          const nlohmann::json& provenance);

// One SVG chart: per-group bars for text, image and group scores with interval whiskers
// (bootstrap percentile) and dashed chance lines.
std::string svg_group_chart(const std::vector<GroupStats>& groups, const std::string& title);

}  // namespace winokit
