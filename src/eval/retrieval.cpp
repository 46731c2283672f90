#include "winokit/eval/retrieval.hpp"

#include <algorithm>
#include <cmath>

#include "model/kernels/parallel.hpp"
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
  detail::parallel_for(captions, [&](int c) {
    const float* tc = &t[static_cast<std::size_t>(c) * dim];
    for (int i = 0; i < image_count; ++i) {
      const float* ii = &im[static_cast<std::size_t>(i) * dim];
      double s = 0;
      for (int k = 0; k < dim; ++k)
        s += static_cast<double>(tc[k]) * ii[k];
      m.scores[static_cast<std::size_t>(c) * image_count + i] = static_cast<float>(s);
    }
  });
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

const char* to_string(TieRule rule) {
  return rule == TieRule::Official ? "official" : "strict";
}

std::string tie_rule_text(TieRule rule) {
  return rule == TieRule::Official
             ? "rank = 1 + items scored higher: the correct item ranks first among items scored "
               "equal (the official metrics.py of \"Why is Winoground Hard?\")"
             : "rank = 1 + items scored higher + other items scored equal: ties count against "
               "the model";
}

double median_rank(std::vector<int> ranks) {
  if (ranks.empty()) return 0;
  std::sort(ranks.begin(), ranks.end());
  const std::size_t h = ranks.size() / 2;
  if (ranks.size() % 2 == 1) return ranks[h];
  return (static_cast<double>(ranks[h - 1]) + static_cast<double>(ranks[h])) / 2.0;
}

namespace {

std::vector<double> recall_at(const std::vector<int>& ranks, const std::vector<int>& ks) {
  std::vector<double> out;
  for (int k : ks) {
    std::size_t hits = 0;
    for (int x : ranks)
      hits += x <= k;
    out.push_back(ranks.empty() ? 0.0
                                : static_cast<double>(hits) / static_cast<double>(ranks.size()));
  }
  return out;
}

}  // namespace

void set_image_to_text(RecallResult& r, std::vector<int> ranks, std::size_t ties) {
  r.image_to_text = recall_at(ranks, r.ks);
  r.i2t_median_rank = median_rank(ranks);
  r.i2t_rank = std::move(ranks);
  r.i2t_ties = ties;
}

RecallResult retrieval_recall(const ScoreMatrix& m, const std::vector<int>& ks, TieRule ties) {
  if (m.captions != m.images || m.captions % 2 != 0) {
    throw UsageError("retrieval: the score matrix must be 2N x 2N");
  }
  RecallResult r;
  r.ties = ties;
  r.ks = ks;
  const int n = m.captions;
  const bool strict = ties == TieRule::Strict;
  // Rank of the correct item among all: 1 + (items scored higher) [+ (other items tied) when
  // strict]. score(q, x): query q against candidate x; the correct candidate of q is x = q.
  auto rank = [n, strict](auto score, std::vector<int>& ranks, std::size_t& tie_count) {
    for (int q = 0; q < n; ++q) {
      const float s = score(q, q);
      int higher = 0, tied = 0;
      for (int x = 0; x < n; ++x) {
        if (x == q) continue;
        const float v = score(q, x);
        higher += v > s;
        tied += v == s;
      }
      ranks.push_back(1 + higher + (strict ? tied : 0));
      tie_count += tied > 0;
    }
  };
  rank([&](int c, int i) { return m.at(c, i); }, r.t2i_rank, r.t2i_ties);  // caption -> images
  std::vector<int> i2t;
  std::size_t i2t_ties = 0;
  rank([&](int i, int c) { return m.at(c, i); }, i2t, i2t_ties);  // image -> captions
  r.text_to_image = recall_at(r.t2i_rank, ks);
  r.t2i_median_rank = median_rank(r.t2i_rank);
  set_image_to_text(r, std::move(i2t), i2t_ties);
  return r;
}

}  // namespace winokit
