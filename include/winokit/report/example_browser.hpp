// The example browser of the HTML reports (src/report/example_browser.cpp): every example with its
// two images and captions, its scores per model, filters and sorting.
//
//   ExampleBrowser eb{&dataset, {"clip"}, {scores}, tag_sets,
//                     example_images(dataset, HtmlImages::Embed, "reports")};
//   out.add("reports/r.html", html_report(result, ctx, &eb));
#pragma once

#include <array>
#include <filesystem>
#include <string>
#include <vector>

#include "winokit/eval/evaluation.hpp"
#include "winokit/io/image_store.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(report);

namespace winokit {

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
// One image as a JPEG thumbnail data: URI, at most `max_side` pixels on the longer side (PIL
// bicubic after a box pre-reduction; a JPEG decoded at 1/2, 1/4 or 1/8 scale first), quality 70.
// InputError for an image that does not decode.
std::string thumbnail_data_uri(const ImageBytes& image, int max_side = 160);
// The per-example section: per run, the two comparisons of the text score and of the image score
// with their numbers (a failed one marked); search by caption word or id; filters (tag, outcome
// of any run, one run right and another wrong) with a message saying what to change when none
// matches; sort by margin; a click on an image enlarges it (a thumbnail up to 3x; with
// --html-images link, the image file itself).
std::string example_browser_html(const ExampleBrowser& browser);
// The two captions as HTML with the words outside their longest common word subsequence in
// <mark>: the words that moved or changed (of several longest, the one whose words keep their
// relative place best).
std::array<std::string, 2> caption_diff_html(const std::string& a, const std::string& b);
// Every score, difference and margin of the browsers in one format: fixed, 4 decimals, never
// "-0.0000"; a signed difference too small to show at 4 decimals is "+<0.0001", not 0 (HTML).
std::string browser_number(double v);
std::string browser_signed_number(double v);

}  // namespace winokit
