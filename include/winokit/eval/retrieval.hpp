// Retrieval over a whole Winoground-layout dataset ("Why is Winoground Hard?", Diwan et al.
// 2022): every caption scored against every image (2N x 2N), text-to-image and image-to-text
// Recall@k, where the correct image of caption_j of example i is image_j of example i (and
// conversely). By default ties count against the model (strict): a distractor scored equal to
// the correct item ranks ahead of it. The official code of "Why is Winoground Hard?"
// (metrics.py, compute_metrics) ranks the correct item first among ties instead
// (TieRule::Official). Recall@1 needs the minimal pair resolved; Recall@2 does not (the pair's
// other item may rank first). The median rank is numpy.median of the 1-based ranks (the mean of
// the two middle ranks for an even count), as metrics.py's "MR".
//
//   winokit::ScoreMatrix m = winokit::matrix_from_embeddings(text, images, n_texts, dim);
//   auto r = winokit::retrieval_recall(m, {1, 2, 5, 10});
#pragma once

#include <string>
#include <vector>

#include "winokit/data/winoground.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(eval);

namespace winokit {

// scores[c * images + i]: caption c (index 2 * example + j) with image i (2 * example + k).
struct ScoreMatrix {
  int captions = 0, images = 0;
  std::vector<float> scores;
  float at(int c, int i) const { return scores[static_cast<std::size_t>(c) * images + i]; }
};

// Cosine similarities of unit-normalised embeddings (the ranking CLIP's logits give).
ScoreMatrix matrix_from_embeddings(const std::vector<float>& text, const std::vector<float>& images,
                                   int captions, int image_count, int dim);
// Reads a safetensors file holding "scores" [2N, 2N] in dataset order.
ScoreMatrix load_score_matrix(const std::string& file, const WinogroundDataset& dataset);

enum class TieRule {
  Strict,   // rank = 1 + items scored higher + other items scored equal (winokit's default)
  Official  // rank = 1 + items scored higher: the correct item first among ties (metrics.py)
};
const char* to_string(TieRule rule);
// The rank definition as the reports state it.
std::string tie_rule_text(TieRule rule);

struct RecallResult {
  TieRule ties = TieRule::Strict;
  std::vector<int> ks;
  std::vector<double> text_to_image;  // per k, proportion
  std::vector<double> image_to_text;
  std::vector<int> t2i_rank, i2t_rank;     // 1-based rank of the correct item, ties against
  std::size_t t2i_ties = 0, i2t_ties = 0;  // queries whose correct item tied with a distractor
  double t2i_median_rank = 0, i2t_median_rank = 0;  // numpy.median of the ranks
};

RecallResult retrieval_recall(const ScoreMatrix& m, const std::vector<int>& ks,
                              TieRule ties = TieRule::Strict);
// numpy.median of ranks (0 for none).
double median_rank(std::vector<int> ranks);
// Recomputes the recall and median rank of one direction from its ranks.
void set_image_to_text(RecallResult& r, std::vector<int> ranks, std::size_t ties);

}  // namespace winokit
