#include "winokit/report/heatmap_report.hpp"

#include <sstream>

#include "winokit/report/format.hpp"

namespace winokit {

std::string heatmap_html(const HeatmapReport& report) {
  std::ostringstream html;
  html << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Word-patch "
          "maps</title>"
          "<style>body{font-family:system-ui,sans-serif;margin:2rem}figure{display:inline-block;"
          "margin:.3rem;"
          "text-align:center}img{width:160px;height:160px;image-rendering:pixelated}</style></"
          "head><body>"
       << "<h1>Word-patch similarity: " << html_escape(report.model)
       << "</h1><p>Each map: cosine "
          "similarity between a caption token's final state and each image patch's final state "
          "(both through "
          "the final LayerNorm and projection), scaled from its minimum (no colour) to its maximum "
          "(red).</p>";
  for (const auto& ex : report.examples) {
    html << "<h2>Example " << html_escape(ex.id) << "</h2>";
    for (const auto& panel : ex.panels) {
      html << "<h3>image " << panel.image << " with caption " << panel.caption << ": "
           << html_escape(panel.caption_text) << "</h3>";
      for (const auto& [token, png] : panel.maps) {
        html << "<figure><img alt=\"" << html_escape(token) << "\" src=\"data:image/png;base64,"
             << base64(png) << "\"><figcaption>" << html_escape(token) << "</figcaption></figure>";
      }
    }
  }
  html << "<h2>Provenance</h2><pre>" << html_escape(report.model_description.dump(2))
       << "</pre></body></html>\n";
  return html.str();
}

}  // namespace winokit
