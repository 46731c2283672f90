// ViLT's word-patch alignment (IPOT) maps.
#include "model/families/vilt/vilt_alignment.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <numeric>

#include "model/families/clip/clip_model.hpp"
#include "winokit/core/error.hpp"
#include "winokit/io/files.hpp"
#include "winokit/io/image_decode.hpp"
#include "winokit/model/compute.hpp"

namespace winokit {

namespace fs = std::filesystem;

// ---- word-patch alignment ----
namespace {

constexpr double kIpotBeta = 0.1;
constexpr int kIpotIterations = 1000;
constexpr double kNormalizeEps = 1e-5;  // F.normalize's eps in cost_matrix_cosine

std::vector<double> unit(const float* v, int dim) {
  double s = 0;
  for (int k = 0; k < dim; ++k)
    s += static_cast<double>(v[k]) * v[k];
  const double inv = 1.0 / std::max(std::sqrt(s), kNormalizeEps);
  std::vector<double> out(static_cast<std::size_t>(dim));
  for (int k = 0; k < dim; ++k)
    out[static_cast<std::size_t>(k)] = v[k] * inv;
  return out;
}

}  // namespace

ViltAlignment vilt_word_patch_alignment(const ViltRuntime& rt, const ImageBytes& image,
                                        const std::string& caption) {
  const ViltConfig& c = rt.model->config();
  ViltAlignment a;
  a.image = vilt_preprocess(decode_image(image), c);
  const ViltImageEmbeds e = rt.model->embed_image(a.image);
  a.grid_h = e.grid_h;
  a.grid_w = e.grid_w;
  const std::vector<int> ids = rt.encode(caption);
  const ViltOutput o = rt.model->score({ids}, {&e}, /*keep_states=*/true);
  a.score = o.scores[0];
  const int H = c.hidden;
  const std::size_t lt = ids.size();
  const std::size_t m = lt >= 2 ? lt - 2 : 0;  // text tokens without [CLS] and the last [SEP]
  const std::size_t n = static_cast<std::size_t>(e.grid_h) * e.grid_w;  // patches
  for (std::size_t t = 1; t + 1 < lt; ++t)
    a.tokens.push_back(rt.tokenizer->token_text(ids[t]));
  if (m == 0) return a;
  const std::vector<float>& st = o.states[0];
  std::vector<std::vector<double>> tu, iu;
  for (std::size_t t = 0; t < m; ++t)
    tu.push_back(unit(&st[(1 + t) * H], H));
  for (std::size_t p = 0; p < n; ++p)
    iu.push_back(unit(&st[(lt + 1 + p) * H], H));
  // IPOT (objectives.ipot with k = 1) on the valid block: A = exp(-C / beta), C = 1 - cos.
  std::vector<double> A(n * m), T(n * m, 1.0), Q(n * m), sigma(m, 1.0 / static_cast<double>(m)),
      delta(n);
  for (std::size_t j = 0; j < n; ++j) {
    for (std::size_t i = 0; i < m; ++i) {
      double cos = 0;
      for (int k = 0; k < H; ++k)
        cos += tu[i][static_cast<std::size_t>(k)] * iu[j][static_cast<std::size_t>(k)];
      A[j * m + i] = std::exp(-(1.0 - cos) / kIpotBeta);
    }
  }
  const double x_len = static_cast<double>(m), y_len = static_cast<double>(n);
  for (int it = 0; it < kIpotIterations; ++it) {
    for (std::size_t q = 0; q < n * m; ++q)
      Q[q] = A[q] * T[q];
    for (std::size_t j = 0; j < n; ++j) {
      double s = 0;
      for (std::size_t i = 0; i < m; ++i)
        s += Q[j * m + i] * sigma[i];
      delta[j] = 1.0 / (y_len * s);
    }
    for (std::size_t i = 0; i < m; ++i) {
      double s = 0;
      for (std::size_t j = 0; j < n; ++j)
        s += delta[j] * Q[j * m + i];
      sigma[i] = 1.0 / (x_len * s);
    }
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t i = 0; i < m; ++i)
        T[j * m + i] = delta[j] * Q[j * m + i] * sigma[i];
  }
  a.transport.assign(m, std::vector<float>(n));
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j)
      a.transport[i][j] = static_cast<float>(T[j * m + i]);
  return a;
}

std::vector<float> vilt_display_map(const std::vector<float>& transport) {
  const std::size_t n = transport.size();
  std::vector<float> out(n, 0.0f);
  if (n < 2) return out;
  double mean = 0;
  for (float v : transport)
    mean += v;
  mean /= static_cast<double>(n);
  double var = 0;
  for (float v : transport)
    var += (v - mean) * (v - mean);
  const double sd = std::sqrt(var / static_cast<double>(n - 1));  // torch.std: unbiased
  if (!(sd > 0)) return out;
  std::vector<double> z(n);
  for (std::size_t k = 0; k < n; ++k)
    z[k] = std::clamp((transport[k] - mean) / sd, 1.0, 3.0);
  const auto [lo, hi] = std::minmax_element(z.begin(), z.end());
  if (!(*hi > *lo)) return out;
  for (std::size_t k = 0; k < n; ++k)
    out[k] = static_cast<float>((z[k] - *lo) / (*hi - *lo));
  return out;
}

}  // namespace winokit
