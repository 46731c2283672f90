// ViLT as a pair scorer, and its word-patch alignment (IPOT) maps.
#include "winokit/eval/vilt_scorer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <numeric>

#include "winokit/core/error.hpp"
#include "winokit/eval/heatmap.hpp"
#include "winokit/io/files.hpp"
#include "winokit/io/png_writer.hpp"
#include "winokit/model/clip_model.hpp"
#include "winokit/model/compute.hpp"

namespace winokit {

namespace fs = std::filesystem;

namespace {

class ViltScorer final : public Scorer {
 public:
  ViltScorer(ViltRuntime rt, std::string name) : rt_(std::move(rt)), name_(std::move(name)) {}
  std::string name() const override { return name_; }
  nlohmann::json describe() const override {
    nlohmann::json d = rt_.describe();
    d["embeddings"] = {{"images_computed", images_},     {"images_cached", 0},
                       {"captions_computed", captions_}, {"captions_cached", 0},
                       {"pairs_scored", pairs_},         {"seconds", seconds_}};
    return d;
  }
  std::vector<WinogroundScores> score(const WinogroundDataset& dataset) override {
    const auto start = std::chrono::steady_clock::now();
    ImageStore store = ImageStore::open(dataset.root, dataset.images);
    std::vector<std::string> image_names, captions;
    std::map<std::string, std::size_t> image_index, caption_index;
    for (const auto& ex : dataset.examples) {
      for (int k = 0; k < 2; ++k) {
        const auto& n = ex.images[static_cast<std::size_t>(k)];
        if (image_index.emplace(n, image_names.size()).second) image_names.push_back(n);
        const auto& c = ex.captions[static_cast<std::size_t>(k)];
        if (caption_index.emplace(c, captions.size()).second) captions.push_back(c);
      }
    }
    std::vector<std::function<ImageBytes()>> images;
    for (const auto& n : image_names)
      images.emplace_back([&store, n] { return store.read(n); });
    // The four pairs of each example; a pair shared by two examples is scored once.
    std::map<std::pair<std::size_t, std::size_t>, std::size_t> pair_slot;
    std::vector<std::pair<std::size_t, std::size_t>> pairs;
    for (const auto& ex : dataset.examples) {
      for (int c = 0; c < 2; ++c) {
        for (int i = 0; i < 2; ++i) {
          const std::pair<std::size_t, std::size_t> key = {
              caption_index[ex.captions[static_cast<std::size_t>(c)]],
              image_index[ex.images[static_cast<std::size_t>(i)]]};
          if (pair_slot.emplace(key, pairs.size()).second) pairs.push_back(key);
        }
      }
    }
    const std::vector<double> s = vilt_score_pairs(rt_, images, captions, pairs);
    std::vector<WinogroundScores> out(dataset.examples.size());
    for (std::size_t e = 0; e < dataset.examples.size(); ++e) {
      const auto& ex = dataset.examples[e];
      for (int c = 0; c < 2; ++c) {
        for (int i = 0; i < 2; ++i) {
          const std::size_t p = pair_slot[{caption_index[ex.captions[static_cast<std::size_t>(c)]],
                                           image_index[ex.images[static_cast<std::size_t>(i)]]}];
          out[e].s[pair_index(c, i)] = s[p];
        }
      }
    }
    images_ = image_names.size();
    captions_ = captions.size();
    pairs_ = pairs.size();
    seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out;
  }

 private:
  ViltRuntime rt_;
  std::string name_;
  std::size_t images_ = 0, captions_ = 0, pairs_ = 0;
  double seconds_ = 0;
};

}  // namespace

std::unique_ptr<Scorer> make_vilt_scorer(const ViltRuntime& runtime, std::string name) {
  return std::make_unique<ViltScorer>(runtime, std::move(name));
}

SolveResult vilt_solve_with_images(const ViltRuntime& rt, const AssociationDataset& ds,
                                   const std::map<std::string, fs::path>& images,
                                   const AssociationSolveOptions& options) {
  std::vector<std::function<ImageBytes()>> readers;
  std::map<std::string, std::size_t> image_index;
  for (const auto& [name, path] : images) {
    image_index[name] = readers.size();
    readers.emplace_back([name = name, path = path] {
      ImageBytes b;
      b.name = name;
      b.source = path.string();
      b.bytes = read_file(path);
      return b;
    });
  }
  std::vector<std::string> prompts;
  std::vector<std::pair<std::size_t, std::size_t>> pairs;
  for (std::size_t q = 0; q < ds.instances.size(); ++q) {
    const auto& inst = ds.instances[q];
    prompts.push_back(cue_prompt(inst.cue, options.prompt_template));
    for (const auto& c : inst.candidates) {
      auto it = image_index.find(c);
      if (it == image_index.end()) throw UsageError("candidate '" + c + "' has no image");
      pairs.emplace_back(q, it->second);
    }
  }
  const auto start = std::chrono::steady_clock::now();
  const std::vector<double> s = vilt_score_pairs(rt, readers, prompts, pairs);
  SolveResult r;
  std::size_t p = 0;
  for (const auto& inst : ds.instances) {
    std::vector<double> scores(s.begin() + static_cast<std::ptrdiff_t>(p),
                               s.begin() + static_cast<std::ptrdiff_t>(p + inst.candidates.size()));
    p += inst.candidates.size();
    r.predictions.push_back(select_top_k(inst.candidates, scores, inst.k()));
    r.scores.push_back(std::move(scores));
  }
  r.stats.images_computed = images.size();
  r.stats.texts_computed = prompts.size();
  r.stats.image_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

ScoreMatrix vilt_score_matrix(const ViltRuntime& rt, const WinogroundDataset& dataset) {
  ImageStore store = ImageStore::open(dataset.root, dataset.images);
  std::vector<std::function<ImageBytes()>> images;
  std::vector<std::string> captions;
  for (const auto& ex : dataset.examples) {
    for (std::size_t k = 0; k < 2; ++k) {
      const std::string n = ex.images[k];
      images.emplace_back([&store, n] { return store.read(n); });
      captions.push_back(ex.captions[k]);
    }
  }
  std::vector<std::pair<std::size_t, std::size_t>> pairs;
  for (std::size_t c = 0; c < captions.size(); ++c)
    for (std::size_t i = 0; i < images.size(); ++i)
      pairs.emplace_back(c, i);
  const std::vector<double> s = vilt_score_pairs(rt, images, captions, pairs);
  ScoreMatrix m;
  m.captions = static_cast<int>(captions.size());
  m.images = static_cast<int>(images.size());
  m.scores.assign(s.begin(), s.end());
  return m;
}

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

std::string render_vilt_heatmap_png(const ViltImage& image, const ViltConfig& c,
                                    const std::vector<float>& map, int grid_h, int grid_w) {
  const int w = image.width, h = image.height;
  std::vector<std::uint8_t> rgb(static_cast<std::size_t>(w) * h * 3);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const int gy = std::min(grid_h - 1, y / c.patch), gx = std::min(grid_w - 1, x / c.patch);
      const float heat = map[static_cast<std::size_t>(gy) * grid_w + gx];
      std::array<float, 3> v{};
      for (std::size_t ch = 0; ch < 3; ++ch)
        v[ch] = image.pixels[(ch * static_cast<std::size_t>(h) + static_cast<std::size_t>(y)) *
                                 static_cast<std::size_t>(w) +
                             static_cast<std::size_t>(x)] *
                    c.std[ch] +
                c.mean[ch];
      const auto px = heat_pixel(v, heat);
      for (std::size_t ch = 0; ch < 3; ++ch)
        rgb[(static_cast<std::size_t>(y) * w + x) * 3 + ch] = px[ch];
    }
  }
  return encode_png_rgb8(rgb, w, h);
}

}  // namespace winokit
