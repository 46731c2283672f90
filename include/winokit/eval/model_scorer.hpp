// Any model (winokit/model/vl_model.hpp) as a Winoground scorer: the four pairs of every
// example scored with model.score_pairs (a dual encoder embeds each image and caption once; a
// cross-encoder runs one joint forward pass per pair, each image encoded once), through the
// embedding and pair caches. Also the full caption x image matrix for retrieval.
//
//   std::unique_ptr<winokit::VlModel> m = winokit::open_model("clip-vit-base-patch32/", {});
//   auto scorer = winokit::make_model_scorer(*m, m->name());
//   auto scores = scorer->score(dataset);   // non-finite scores are an error naming the input
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "winokit/eval/retrieval.hpp"
#include "winokit/eval/scorer.hpp"
#include "winokit/io/image_store.hpp"
#include "winokit/model/vl_model.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(eval);

namespace winokit {

// Every image and caption of a dataset in dataset order (image / caption 2 * example + k);
// the requests read from `store`, which must outlive them.
struct DatasetItems {
  std::vector<ImageRequest> images;
  std::vector<std::string> captions;
};
DatasetItems dataset_items(const WinogroundDataset& dataset, const ImageStore& store);

// The model must outlive the scorer.
std::unique_ptr<Scorer> make_model_scorer(const VlModel& model, std::string name);

// Every caption with every image (2N x 2N, dataset order): a dual encoder's cosines (the
// ranking its score gives), a cross-encoder's scores. `stats` receives what was computed.
ScoreMatrix model_score_matrix(const VlModel& model, const WinogroundDataset& dataset,
                               EmbedStats* stats = nullptr);

// retrieval --rerank K: the candidates' top K images per caption and top K captions per image
// are re-scored by `model` and ranked first, in its order (ties kept); the rest keep the
// candidates' order below them. Two matrices, one per direction (a pair can be in one
// direction's top K and not in the other's).
struct RerankedRetrieval {
  ScoreMatrix text_to_image, image_to_text;
  std::size_t pairs_scored = 0;
};
RerankedRetrieval rerank_retrieval(const VlModel& model, const ScoreMatrix& candidates, int k,
                                   const WinogroundDataset& dataset, EmbedStats* stats = nullptr);

// The provenance block of a run's embeddings and pair scores (computed / cached counts).
nlohmann::json embed_stats_json(const EmbedStats& stats);

}  // namespace winokit
