#include <gtest/gtest.h>

#include "winokit/eval/retrieval.hpp"

namespace winokit {
namespace {

ScoreMatrix matrix(int n, float diagonal, float pair_other, float rest) {
  ScoreMatrix m{n, n, std::vector<float>(static_cast<std::size_t>(n) * n, rest)};
  for (int c = 0; c < n; ++c) {
    m.scores[static_cast<std::size_t>(c) * n + c] = diagonal;
    m.scores[static_cast<std::size_t>(c) * n + (c ^ 1)] =
        pair_other;  // the minimal pair's other item
  }
  return m;
}

TEST(Retrieval, OracleGetsEverythingAtRankOne) {
  auto r = retrieval_recall(matrix(8, 1.0f, 0.5f, 0.0f), {1, 2, 5});
  EXPECT_EQ(r.text_to_image, (std::vector<double>{1, 1, 1}));
  EXPECT_EQ(r.image_to_text, (std::vector<double>{1, 1, 1}));
  EXPECT_EQ(r.t2i_ties, 0u);
}

TEST(Retrieval, OrderBlindScorerTiesWithItsPairAndTiesCountAgainst) {
  // Both captions of a pair score the same on both images: the correct item ties with the
  // pair's other item, which ranks ahead. R@1 = 0, R@2 = 100.
  auto r = retrieval_recall(matrix(10, 1.0f, 1.0f, 0.0f), {1, 2});
  EXPECT_EQ(r.text_to_image, (std::vector<double>{0, 1}));
  EXPECT_EQ(r.image_to_text, (std::vector<double>{0, 1}));
  EXPECT_EQ(r.t2i_ties, 10u);
  EXPECT_EQ(r.t2i_rank[0], 2);
}

TEST(Retrieval, EmbeddingMatrixIsCosine) {
  std::vector<float> t = {1, 0, 0, 2}, im = {3, 0, 0, -1};
  auto m = matrix_from_embeddings(t, im, 2, 2, 2);
  EXPECT_FLOAT_EQ(m.at(0, 0), 1.0f);
  EXPECT_FLOAT_EQ(m.at(1, 1), -1.0f);
  EXPECT_FLOAT_EQ(m.at(0, 1), 0.0f);
}

}  // namespace
}  // namespace winokit
