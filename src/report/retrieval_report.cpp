#include "winokit/report/retrieval_report.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "winokit/report/format.hpp"
#include "winokit/report/html_report.hpp"

namespace winokit {

namespace {

// A median rank: an integer, or a half for an even number of queries.
std::string rank_text(double v) {
  char b[32];
  std::snprintf(b, sizeof b, v == std::floor(v) ? "%.0f" : "%.1f", v);
  return b;
}

}  // namespace

std::string retrieval_markdown(const RetrievalReport& report) {
  const RecallResult& r = report.recall;
  std::ostringstream md;
  md << "## Retrieval: " << report.model << " (" << report.captions << " captions x "
     << report.images << " images)\n\n"
     << "| Direction |";
  for (int k : r.ks)
    md << " R@" << k << " |";
  md << " Median rank |\n|---|";
  for (std::size_t i = 0; i < r.ks.size(); ++i)
    md << "---:|";
  md << "---:|\n| text -> image |";
  for (double v : r.text_to_image)
    md << " " << percent(v) << " |";
  md << " " << rank_text(r.t2i_median_rank) << " |\n| image -> text |";
  for (double v : r.image_to_text)
    md << " " << percent(v) << " |";
  md << " " << rank_text(r.i2t_median_rank) << " |";
  md << "\n\nThe correct image of caption_j of example i is image_j of example i. Ties ("
     << to_string(r.ties) << "): " << tie_rule_text(r.ties) << "; " << r.t2i_ties
     << " caption queries and " << r.i2t_ties
     << " image queries had a distractor scored equal to the correct item. Median rank: "
        "numpy.median of the 1-based ranks. R@1 needs the minimal pair resolved; R@2 does not "
        "(the pair's other item may rank first).\n";
  return md.str();
}

nlohmann::json retrieval_json(const RetrievalReport& report) {
  const RecallResult& r = report.recall;
  nlohmann::json j = {
      {"model", report.model},
      {"provenance", report.provenance},
      {"ks", r.ks},
      {"text_to_image_percent", nlohmann::json::array()},
      {"image_to_text_percent", nlohmann::json::array()},
      {"median_rank", {{"text_to_image", r.t2i_median_rank}, {"image_to_text", r.i2t_median_rank}}},
      {"ties",
       {{"rule", to_string(r.ties)},
        {"text_to_image_queries", r.t2i_ties},
        {"image_to_text_queries", r.i2t_ties}}},
      {"method", tie_rule_text(r.ties)}};
  for (double v : r.text_to_image)
    j["text_to_image_percent"].push_back(v * 100);
  for (double v : r.image_to_text)
    j["image_to_text_percent"].push_back(v * 100);
  return j;
}

std::string retrieval_html(const RetrievalReport& report) {
  return markdown_html("Retrieval: " + report.model, retrieval_markdown(report), report.provenance);
}

}  // namespace winokit
