// Generating WinoGAViL-style association instances from a word-association graph in the Small
// World of Words layout, as the WinoGAViL paper's SWOW baseline set was made.
//
//   auto graph = winokit::load_swow("swow.csv");    // cue,R1,R2,R3  or  cue,response,strength
//   auto names = winokit::image_names("images/");   // candidate names that have an image
//   std::string csv = winokit::generate_swow_instances(graph, names, {});
//
// Each instance: a cue, 2 to 4 of its associations (the strongest responses that have an
// image), and random distractors that are associated with the cue in neither direction, for 5
// or 6 candidates in a random order. Seeded and deterministic; written in the WinoGAViL CSV
// layout (the solver and fool-the-AI columns left empty).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(data);

namespace winokit {

struct SwowGraph {
  // cue -> response -> strength (response counts, or the given strength); lower-case words.
  std::map<std::string, std::map<std::string, double>> forward;
  bool associated(const std::string& a, const std::string& b) const;
};

SwowGraph load_swow(const std::string& file);
// Stems of the image files in `dir` (.png, .jpg, .jpeg, .webp).
std::set<std::string> image_names(const std::filesystem::path& dir);

struct SwowOptions {
  std::uint64_t seed = 0;
  std::size_t max_instances = 1000;
  int min_associations = 2, max_associations = 4;
  std::vector<int> candidate_counts = {5, 6};
};

std::string generate_swow_instances(const SwowGraph& graph, const std::set<std::string>& names,
                                    const SwowOptions& options, std::size_t* generated = nullptr);

}  // namespace winokit
