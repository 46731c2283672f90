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
};

struct HeatmapExample {
  std::string id;
  std::vector<HeatmapPanel> panels;  // image 0 caption 0, image 0 caption 1, image 1 ...
};

struct HeatmapReport {
  std::string model;  // the name in the heading
  std::vector<HeatmapExample> examples;
  nlohmann::json model_description;  // the runtime's describe(), shown at the end
};

std::string heatmap_html(const HeatmapReport& report);

}  // namespace winokit
