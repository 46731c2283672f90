// Self-contained HTML reports with inline SVG charts (src/report/html_report.cpp): evaluation and
// comparison reports, and the shared pieces of every HTML report (the page, the provenance table,
// the markdown-to-HTML page of the analysis commands).
//
//   out.add("report.html", winokit::html_report(result, ctx, &browser));
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "winokit/eval/compare.hpp"
#include "winokit/eval/evaluation.hpp"
#include "winokit/report/format.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(report);

namespace winokit {

struct ExampleBrowser;  // report/example_browser.hpp

std::string html_report(const EvalResult& result, const ReportContext& ctx);
// With a per-example section (the example browser) when `examples` is given.
std::string html_report(const EvalResult& result, const ReportContext& ctx,
                        const ExampleBrowser* examples);
std::string html_compare(const CompareResult& result, const nlohmann::json& provenance);
std::string html_compare(const CompareResult& result, const nlohmann::json& provenance,
                         const ExampleBrowser* examples);

// ---- Shared pieces of every HTML report ----
// A whole self-contained page (the common style: scroll boxes, phone layout, resizing charts).
std::string html_page(const std::string& title, const std::string& body);
// The provenance record as a two-column table of dotted field names and values.
std::string provenance_html(const nlohmann::json& provenance);
// Wraps every <table>...</table> of `html` in a horizontal scroll box.
std::string html_scroll_tables(const std::string& html);

// A self-contained HTML page from the project's own markdown (headings, pipe tables,
// paragraphs), with the provenance JSON at the end: the HTML output of the analysis commands.
// `extra_body` (HTML, e.g. charts) goes after the text, before the provenance table.
std::string markdown_html(const std::string& title, const std::string& markdown,
                          const nlohmann::json& provenance);
std::string markdown_html(const std::string& title, const std::string& markdown,
                          const nlohmann::json& provenance, const std::string& extra_body);

// One SVG chart: per-group bars for text, image and group scores with interval whiskers
// (bootstrap percentile) and dashed chance lines.
std::string svg_group_chart(const std::vector<GroupStats>& groups, const std::string& title);

}  // namespace winokit
