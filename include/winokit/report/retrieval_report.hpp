// Reports of text-to-image and image-to-text Recall@k (src/report/retrieval_report.cpp).
//
//   RetrievalReport r{"clip", m.captions, m.images, retrieval_recall(m, {1, 2, 5}), provenance};
//   std::cout << winokit::retrieval_markdown(r);
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "winokit/eval/retrieval.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(report);

namespace winokit {

struct RetrievalReport {
  std::string model;  // the name in the report
  std::size_t captions = 0, images = 0;
  RecallResult recall;
  nlohmann::json provenance;  // report/provenance.hpp
};

std::string retrieval_markdown(const RetrievalReport& report);
nlohmann::json retrieval_json(const RetrievalReport& report);
std::string retrieval_html(const RetrievalReport& report);

}  // namespace winokit
