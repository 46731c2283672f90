#include "winokit/eval/heatmap.hpp"

#include <algorithm>
#include <cmath>

#include "winokit/io/image_decode.hpp"
#include "winokit/io/png_writer.hpp"
#include "winokit/model/preprocess.hpp"

namespace winokit {

namespace {
std::vector<float> unit(const float* v, int dim) {
  double s = 0;
  for (int k = 0; k < dim; ++k)
    s += static_cast<double>(v[k]) * v[k];
  const double inv = s > 0 ? 1.0 / std::sqrt(s) : 0.0;
  std::vector<float> out(static_cast<std::size_t>(dim));
  for (int k = 0; k < dim; ++k)
    out[static_cast<std::size_t>(k)] = static_cast<float>(v[k] * inv);
  return out;
}
}  // namespace

WordPatchMaps word_patch_maps(const ClipRuntime& rt, const ImageBytes& image,
                              const std::vector<std::string>& captions) {
  const ClipConfig& c = rt.model->config();
  WordPatchMaps out;
  out.grid = c.image_size / c.patch;
  out.pixels = preprocess(decode_image(image), rt.preprocess());
  EncodeOptions o;
  o.token_states = true;
  const TowerOutput img = rt.model->encode_images(out.pixels.data(), 1, o);
  std::vector<std::vector<int>> ids;
  for (const auto& cap : captions)
    ids.push_back(rt.tokenizer->encode(cap, c.context_length));
  const TowerOutput txt = rt.model->encode_texts(ids, o);
  const int e = c.embed_dim, patches = out.grid * out.grid;
  for (std::size_t q = 0; q < captions.size(); ++q) {
    std::vector<std::string> toks;
    std::vector<std::vector<float>> sims;
    // Positions 1 .. end-of-text - 1: the caption's own tokens.
    for (std::size_t t = 1; t + 1 < ids[q].size(); ++t) {
      toks.push_back(rt.tokenizer->token_text(ids[q][t]));
      const auto tv = unit(&txt.tokens[(q * static_cast<std::size_t>(txt.token_count) + t) * e], e);
      std::vector<float> row(static_cast<std::size_t>(patches));
      for (int p = 0; p < patches; ++p) {
        const auto pv = unit(&img.tokens[static_cast<std::size_t>(1 + p) * e],
                             e);  // token 0 is the class token
        double d = 0;
        for (int k = 0; k < e; ++k)
          d += static_cast<double>(tv[static_cast<std::size_t>(k)]) *
               pv[static_cast<std::size_t>(k)];
        row[static_cast<std::size_t>(p)] = static_cast<float>(d);
      }
      sims.push_back(std::move(row));
    }
    out.tokens.push_back(std::move(toks));
    out.similarity.push_back(std::move(sims));
  }
  return out;
}

std::string render_heatmap_png(const std::vector<float>& pixels, const PreprocessConfig& cfg,
                               const std::vector<float>& map, int grid, int side) {
  const auto [lo, hi] = std::minmax_element(map.begin(), map.end());
  const float range = *hi - *lo > 0 ? *hi - *lo : 1.0f;
  constexpr float kOverlay = 0.6f;  // weight of the heat colour at the hottest patch
  std::vector<std::uint8_t> rgb(static_cast<std::size_t>(side) * side * 3);
  for (int y = 0; y < side; ++y) {
    for (int x = 0; x < side; ++x) {
      const int p = (y * grid / side) * grid + (x * grid / side);
      const float heat = (map[static_cast<std::size_t>(p)] - *lo) / range;
      for (int ch = 0; ch < 3; ++ch) {
        const float v = pixels[(static_cast<std::size_t>(ch) * side + y) * side + x] *
                            cfg.std[static_cast<std::size_t>(ch)] +
                        cfg.mean[static_cast<std::size_t>(ch)];
        const float base = std::clamp(v, 0.0f, 1.0f) * 255.0f * (1.0f - kOverlay * heat);
        const float colour = ch == 0 ? 255.0f * kOverlay * heat : 0.0f;
        rgb[(static_cast<std::size_t>(y) * side + x) * 3 + static_cast<std::size_t>(ch)] =
            static_cast<std::uint8_t>(std::clamp(base + colour, 0.0f, 255.0f));
      }
    }
  }
  return encode_png_rgb8(rgb, side, side);
}

}  // namespace winokit
