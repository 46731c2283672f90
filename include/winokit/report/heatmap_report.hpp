// The HTML report of word-patch similarity maps (src/report/heatmap_report.cpp): per example,
// per image and caption, one PNG per caption token, embedded as data: URIs.
//
//   HeatmapReport r{model_name, {{"0", {{0, 0, caption, {{"red", png}, ...}}, ...}}},
//                   runtime.describe()};
//   out.add("maps.html", winokit::heatmap_html(r));
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(report);

namespace winokit {

// The maps of one image with one caption: (token, PNG bytes) in caption order.
struct HeatmapPanel {
  int image = 0, caption = 0;
  std::string caption_text;
  std::vector<std::pair<std::string, std::string>> maps;
  std::string note;  // shown after the caption ("score 0.8123"); may be empty
};

struct HeatmapExample {
  std::string id;
  std::vector<HeatmapPanel> panels;  // image 0 caption 0, image 0 caption 1, image 1 ...
};

struct HeatmapReport {
  std::string model;  // the name in the heading
  std::vector<HeatmapExample> examples;
  nlohmann::json model_description;  // the runtime's describe(): the provenance table at the end
  std::string title = "Word-patch similarity";
  // What a map shows; the default is the dual encoders' cosine similarity.
  std::string method =
      "Each map: cosine similarity between a caption token's final state and each image "
      "patch's final state (both through the final LayerNorm and projection), min-max scaled per "
      "map.";
  std::string scale_low = "lowest similarity in the map", scale_high = "highest";
};

// The self-contained page: a viewport for phones, the colour scale (eval/heatmap.hpp's
// heat_colour) with what its ends mean, one figure per token, and the provenance.
std::string heatmap_html(const HeatmapReport& report);

// The file name of one map in --out-dir: ex<id>_i<image>_c<caption>_t<token index>_<word>.png,
// the word lowercased with everything but ASCII letters and digits dropped (a token with none
// keeps the name without it): "ex3_i0_c1_t2_dog.png".
std::string heatmap_file_name(const std::string& example, int image, int caption, std::size_t token,
                              const std::string& word);

}  // namespace winokit
