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

// Ties under both rules, against ranks worked out by hand; the official rule is metrics.py's
// (the first position in the sorted scores equal to the correct item's: 1 + items scored
// higher), and the median rank is its np.median(ind) + 1.
TEST(Retrieval, StrictAndOfficialTieRulesAndMedianRank) {
  ScoreMatrix m{6, 6, {0.9f, 0.9f, 0.1f, 0.2f, 0.3f, 0.0f,    // c0: ties with one distractor
                       0.5f, 0.4f, 0.6f, 0.4f, 0.0f, 0.0f,    // c1: two higher, one tie
                       0.1f, 0.1f, 0.3f, 0.2f, 0.3f, 0.3f,    // c2: ties with two
                       0.0f, 0.0f, 0.0f, 0.8f, 0.0f, 0.0f,    // c3: alone at the top
                       0.7f, 0.7f, 0.7f, 0.7f, 0.6f, 0.7f,    // c4: last
                       0.2f, 0.2f, 0.2f, 0.2f, 0.2f, 0.5f}};  // c5: first
  auto strict = retrieval_recall(m, {1, 2});
  EXPECT_EQ(strict.t2i_rank, (std::vector<int>{2, 4, 3, 1, 6, 1}));
  EXPECT_EQ(strict.text_to_image, (std::vector<double>{2.0 / 6, 3.0 / 6}));
  EXPECT_EQ(strict.t2i_median_rank, 2.5);  // (2 + 3) / 2
  EXPECT_EQ(strict.t2i_ties, 3u);
  auto official = retrieval_recall(m, {1, 2}, TieRule::Official);
  EXPECT_EQ(official.t2i_rank, (std::vector<int>{1, 3, 1, 1, 6, 1}));
  EXPECT_EQ(official.text_to_image, (std::vector<double>{4.0 / 6, 4.0 / 6}));
  EXPECT_EQ(official.t2i_median_rank, 1.0);
  EXPECT_EQ(official.t2i_ties, 3u);  // still counted, whatever the rule
  EXPECT_EQ(median_rank({5, 1, 3}), 3.0);
  EXPECT_EQ(median_rank({}), 0.0);
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
