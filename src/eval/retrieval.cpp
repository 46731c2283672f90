#include "winokit/retrieval.hpp"

#include <cmath>

#include "winokit/error.hpp"
#include "winokit/safetensors.hpp"

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

ScoreMatrix load_score_matrix(const std::string& file, const Dataset& dataset) {
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
  for (int c = 0; c < n; ++c) {
    const float s = m.at(c, c);  // caption 2e+j goes with image 2e+j
    int higher = 0, tied = 0;
    for (int i = 0; i < n; ++i) {
      if (i == c) continue;
      const float v = m.at(c, i);
      higher += v > s;
      tied += v == s;
    }
    r.t2i_rank.push_back(1 + higher + tied);
    r.t2i_ties += tied > 0;
  }
  for (int i = 0; i < n; ++i) {
    const float s = m.at(i, i);
    int higher = 0, tied = 0;
    for (int c = 0; c < n; ++c) {
      if (c == i) continue;
      const float v = m.at(c, i);
      higher += v > s;
      tied += v == s;
    }
    r.i2t_rank.push_back(1 + higher + tied);
    r.i2t_ties += tied > 0;
  }
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
