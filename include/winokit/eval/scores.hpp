// Per-pair scores: s(caption j, image k) for the four pairs of every example, and the score
// files that carry them.
//
// Formats read (detected from the content):
//  - official JSONL: {"label": "<id>_c<j>_i<k>", "score": <float>}, four lines per example;
//  - per-example JSONL written by `winokit eval --per-example` ({"id", "scores": {...}});
//  - a table (CSV or white-space separated, no-break spaces included) whose header names an id
//    column and the columns c0_i0, c0_i1, c1_i0, c1_i1 (or C0I0 ...); other columns ignored.
//    The published white-space tables (header `ID tag secondary_tag num_main_preds
//    collapsed_tag C0I0 C0I1 C1I0 C1I1`, tags with spaces, empty cells) are read by position:
//    the id is a row's first field and the scores its last four, whatever lies between; a
//    white-space table laid out otherwise must have as many fields per row as its header.
// A missing, duplicate or non-finite score, an unknown id or a malformed line is an InputError
// naming the file and line.
//
//   auto scores = winokit::load_scores("clip.jsonl", dataset);   // aligned with examples
//   std::string out = winokit::official_scores_jsonl(dataset, scores);
#pragma once

#include <array>
#include <string>
#include <vector>

#include "winokit/data/winoground.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(eval);

namespace winokit {

// Index of s(caption j, image k) in WinogroundScores::s.
constexpr std::size_t pair_index(int caption, int image) {
  return static_cast<std::size_t>(caption * 2 + image);
}

struct WinogroundScores {
  // s[pair_index(j, k)]: c0_i0, c0_i1, c1_i0, c1_i1.
  std::array<double, 4> s{};
  double at(int caption, int image) const { return s[pair_index(caption, image)]; }
};

// "c0_i0", "c0_i1", "c1_i0", "c1_i1".
const char* pair_label(std::size_t index);

enum class ScoresFormat { OfficialJsonl, PerExampleJsonl, Table };
const char* to_string(ScoresFormat format);

struct LoadedScores {
  std::string file;
  std::string sha256;
  ScoresFormat format = ScoresFormat::OfficialJsonl;
  std::vector<WinogroundScores> scores;  // aligned with dataset.examples
};

LoadedScores load_scores(const std::string& file, const WinogroundDataset& dataset);
// Same, from text already in memory (`file` names it in errors).
LoadedScores parse_scores(const std::string& text, const std::string& file,
                          const WinogroundDataset& dataset);

// The official format: four lines per example, in dataset order, shortest round-trip numbers.
std::string official_scores_jsonl(const WinogroundDataset& dataset,
                                  const std::vector<WinogroundScores>& scores);

}  // namespace winokit
