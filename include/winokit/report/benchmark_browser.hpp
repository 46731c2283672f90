// The HTML report of any registered benchmark (winokit/eval/benchmark.hpp), with its example
// browser: every item with its image(s), its texts (the true one marked against the foils, the
// words that differ highlighted), its score matrix and each of its checks with the comparisons
// behind it (a failed one marked). Built from BenchmarkSummary::items alone, so a new benchmark
// gets it without a line here.
//
//   BenchmarkImages thumbs = benchmark_images(data, HtmlImages::Embed, "reports");
//   std::string html = summary_html(benchmark, data, summary, "clip-b32", provenance, thumbs);
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "winokit/eval/benchmark.hpp"
#include "winokit/report/example_browser.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(report);

namespace winokit {

// The items the browser lists and their images. Per item, per image: an img src (a data: URI or
// a relative path), or empty (no image shown).
struct BenchmarkImages {
  std::vector<std::vector<std::string>> src;
  std::string missing_note;  // why no image is shown, when none is ("" when some are)
  // The items listed, in the benchmark's order; empty: every item.
  std::vector<std::size_t> shown;
};

// Which items a browser of at most `max_items` lists: every one (an empty list) when max_items is
// 0 or not below `items`, else a uniform random sample of max_items (Rng seeded with
// derive_seed(seed, "html-items")), in the benchmark's order.
std::vector<std::size_t> browser_sample(std::size_t items, std::size_t max_items,
                                        std::uint64_t seed);

// The images of the items in `shown` (empty: every item), each distinct image (by name) read
// once; the result lists `shown`. Embed: JPEG thumbnails of
// at most `max_side` pixels on the longer side as data: URIs (what the model saw: an ARO crop,
// an EqBen .npy frame). Link: paths relative to `report_dir` for images that are files; an image
// that is not a file as such (a crop, a frame) is embedded. None: no images. A missing or
// unreadable image is an IoError / InputError naming it (the report is then not written). A run
// from a scores file names its images without reading them: pass `readable` false and the
// report shows none, with a note saying how to get them.
BenchmarkImages benchmark_images(const BenchmarkData& data, HtmlImages mode,
                                 const std::filesystem::path& report_dir, bool readable = true,
                                 std::vector<std::size_t> shown = {}, int max_side = 160);

// The example browser section alone (an empty string when `summary.items` is empty).
std::string benchmark_browser_html(const BenchmarkData& data, const BenchmarkSummary& summary,
                                   const BenchmarkImages& images);

// The whole self-contained page: title, headline metrics with N and interval, the report
// sections as tables, the example browser, the provenance.
std::string summary_html(const Benchmark& benchmark, const BenchmarkData& data,
                         const BenchmarkSummary& summary, const std::string& model,
                         const nlohmann::json& provenance, const BenchmarkImages& images);

}  // namespace winokit
