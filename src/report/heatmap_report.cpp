#include "winokit/report/heatmap_report.hpp"

#include <cctype>
#include <sstream>

#include "winokit/eval/heatmap.hpp"
#include "winokit/report/format.hpp"
#include "winokit/report/html_report.hpp"

namespace winokit {

namespace {

std::string hex_colour(float heat) {
  const auto c = heat_colour(heat);
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", c[0], c[1], c[2]);
  return buf;
}

// The colour scale as a horizontal gradient with its two ends named.
std::string colour_scale(const HeatmapReport& r) {
  constexpr int kStops = 8;
  std::ostringstream s;
  s << "<figure class=\"heat-scale\"><svg role=\"img\" width=\"240\" height=\"16\" viewBox=\"0 0 "
       "240 16\" aria-label=\"colour scale from "
    << html_escape(r.scale_low) << " to " << html_escape(r.scale_high)
    << "\"><defs><linearGradient id=\"heat\">";
  for (int k = 0; k <= kStops; ++k) {
    const float t = static_cast<float>(k) / kStops;
    s << "<stop offset=\"" << fixed(t, 3) << "\" stop-color=\"" << hex_colour(t) << "\"/>";
  }
  s << "</linearGradient></defs><rect width=\"240\" height=\"16\" fill=\"url(#heat)\"/></svg>"
    << "<figcaption><span>" << html_escape(r.scale_low) << "</span><span>"
    << html_escape(r.scale_high) << "</span></figcaption></figure>";
  return s.str();
}

}  // namespace

std::string heatmap_file_name(const std::string& example, int image, int caption, std::size_t token,
                              const std::string& word) {
  std::string clean;
  for (char ch : word)
    if (std::isalnum(static_cast<unsigned char>(ch)) && !(ch & 0x80))
      clean += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return "ex" + example + "_i" + std::to_string(image) + "_c" + std::to_string(caption) + "_t" +
         std::to_string(token) + (clean.empty() ? "" : "_" + clean) + ".png";
}

std::string heatmap_html(const HeatmapReport& report) {
  std::ostringstream html;
  html << "<h1>" << html_escape(report.title) << ": " << html_escape(report.model) << "</h1><p>"
       << html_escape(report.method)
       << " The image is shown in grey under the colours, so the map reads the same on any "
          "image.</p>"
       << colour_scale(report);
  for (const auto& ex : report.examples) {
    html << "<h2>Example " << html_escape(ex.id) << "</h2>";
    for (const auto& panel : ex.panels) {
      html << "<h3>image " << panel.image << " with caption " << panel.caption << ": "
           << html_escape(panel.caption_text)
           << (panel.note.empty() ? "" : " (" + html_escape(panel.note) + ")")
           << "</h3><div class=\"maps\">";
      for (const auto& [token, png] : panel.maps) {
        html << "<figure><img alt=\"" << html_escape(token) << " over image " << panel.image
             << "\" src=\"data:image/png;base64," << base64(png) << "\"><figcaption>"
             << html_escape(token) << "</figcaption></figure>";
      }
      html << "</div>";
    }
  }
  html << provenance_html(report.model_description);
  return html_page(report.title + ": " + report.model, html.str());
}

}  // namespace winokit
