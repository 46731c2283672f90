#include "winokit/eval/retrieval.hpp"

#include <cmath>

#include "winokit/core/error.hpp"
#include "winokit/io/safetensors.hpp"

namespace winokit {

ScoreMatrix matrix_from_embeddings(const std::vector<float>& text, const std::vector<float>& images,
                                   int captions, int image_count, int dim) {
  auto normalised = [dim](const std::vector<float>& v, int rows) {
    std::vector<float> out(v.size());
    for (int r = 0; r < rows; ++r) {
      double s = 0;
      for (int k = 0; k < dim; ++k)
        s += static_cast<double>(v[static_cast<std::size_t>(r) * dim + k]) *
             v[static_cast<std::size_t>(r) * dim + k];
      const double inv = s > 0 ? 1.0 / std::sqrt(s) : 0.0;
      for (int k = 0; k < dim; ++k) {
        out[static_cast<std::size_t>(r) * dim + k] =
            static_cast<float>(v[static_cast<std::size_t>(r) * dim + k] * inv);
      }
    }
    return out;
  };
  const auto t = normalised(text, captions), im = normalised(images, image_count);
  ScoreMatrix m{captions, image_count,
                std::vector<float>(static_cast<std::size_t>(captions) * image_count)};
#pragma omp parallel for schedule(static)
  for (int c = 0; c < captions; ++c) {
    const float* tc = &t[static_cast<std::size_t>(c) * dim];
    for (int i = 0; i < image_count; ++i) {
      const float* ii = &im[static_cast<std::size_t>(i) * dim];
      double s = 0;
      for (int k = 0; k < dim; ++k)
        s += static_cast<double>(tc[k]) * ii[k];
      m.scores[static_cast<std::size_t>(c) * image_count + i] = static_cast<float>(s);
    }
  }
  return m;
}

ScoreMatrix load_score_matrix(const std::string& file, const WinogroundDataset& dataset) {
  SafeTensors st = SafeTensors::open(file);
  const auto n = static_cast<std::int64_t>(dataset.examples.size()) * 2;
  ScoreMatrix m;
  m.captions = m.images = static_cast<int>(n);
  m.scores = st.to_float("scores", {n, n});
  for (float v : m.scores) {
    if (!std::isfinite(v)) throw InputError({file, 0, "scores"}, "non-finite score");
  }
  return m;
}

RecallResult retrieval_recall(const ScoreMatrix& m, const std::vector<int>& ks) {
  if (m.captions != m.images || m.captions % 2 != 0) {
    throw UsageError("retrieval: the score matrix must be 2N x 2N");
  }
  RecallResult r;
  r.ks = ks;
  const int n = m.captions;
  // Rank of the correct item among all: 1 + (items scored higher) + (other items tied).
  // score(q, x): query q against candidate x; the correct candidate of q is x = q.
  auto rank = [n](auto score, std::vector<int>& ranks, std::size_t& ties) {
    for (int q = 0; q < n; ++q) {
      const float s = score(q, q);
      int higher = 0, tied = 0;
      for (int x = 0; x < n; ++x) {
        if (x == q) continue;
        const float v = score(q, x);
        higher += v > s;
        tied += v == s;
      }
      ranks.push_back(1 + higher + tied);
      ties += tied > 0;
    }
  };
  rank([&](int c, int i) { return m.at(c, i); }, r.t2i_rank, r.t2i_ties);  // caption -> images
  rank([&](int i, int c) { return m.at(c, i); }, r.i2t_rank, r.i2t_ties);  // image -> captions
  for (int k : ks) {
    std::size_t t = 0, im = 0;
    for (int x : r.t2i_rank)
      t += x <= k;
    for (int x : r.i2t_rank)
      im += x <= k;
    r.text_to_image.push_back(static_cast<double>(t) / n);
    r.image_to_text.push_back(static_cast<double>(im) / n);
  }
  return r;
}

}  // namespace winokit
