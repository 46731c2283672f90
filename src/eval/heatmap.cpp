#include "winokit/eval/heatmap.hpp"

#include "winokit/core/error.hpp"
#include "winokit/eval/vilt_alignment.hpp"
#include "winokit/model/clip_family.hpp"

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

std::array<std::uint8_t, 3> heat_colour(float heat) {
  // viridis (matplotlib) at 0, 1/8, ..., 1; linear between the stops.
  static constexpr std::array<std::array<float, 3>, 9> kStops = {{{68, 1, 84},
                                                                  {71, 44, 122},
                                                                  {59, 81, 139},
                                                                  {44, 113, 142},
                                                                  {33, 144, 141},
                                                                  {39, 173, 129},
                                                                  {92, 200, 99},
                                                                  {170, 220, 50},
                                                                  {253, 231, 37}}};
  const float t = std::clamp(std::isfinite(heat) ? heat : 0.0f, 0.0f, 1.0f) * 8.0f;
  const auto i = std::min<std::size_t>(7, static_cast<std::size_t>(t));
  const float f = t - static_cast<float>(i);
  std::array<std::uint8_t, 3> out{};
  for (std::size_t c = 0; c < 3; ++c)
    out[c] = static_cast<std::uint8_t>(
        std::lround(kStops[i][c] + (kStops[i + 1][c] - kStops[i][c]) * f));
  return out;
}

std::array<std::uint8_t, 3> heat_pixel(const std::array<float, 3>& rgb, float heat) {
  // The image as dimmed grey (Rec. 601 luma) under a mostly opaque colour: the map reads the
  // same on any image, and the grey keeps the scene's shapes visible.
  constexpr float kOverlay = 0.62f, kGrey = 0.85f;
  const float luma = 0.299f * std::clamp(rgb[0], 0.0f, 1.0f) +
                     0.587f * std::clamp(rgb[1], 0.0f, 1.0f) +
                     0.114f * std::clamp(rgb[2], 0.0f, 1.0f);
  const auto colour = heat_colour(heat);
  std::array<std::uint8_t, 3> out{};
  for (std::size_t c = 0; c < 3; ++c) {
    const float v = (1.0f - kOverlay) * luma * kGrey * 255.0f + kOverlay * colour[c];
    out[c] = static_cast<std::uint8_t>(std::clamp(std::lround(v), 0L, 255L));
  }
  return out;
}

std::string render_heatmap_png(const std::vector<float>& pixels, const PreprocessConfig& cfg,
                               const std::vector<float>& map, int grid, int side) {
  const auto [lo, hi] = std::minmax_element(map.begin(), map.end());
  const float range = *hi - *lo > 0 ? *hi - *lo : 1.0f;
  std::vector<std::uint8_t> rgb(static_cast<std::size_t>(side) * side * 3);
  for (int y = 0; y < side; ++y) {
    for (int x = 0; x < side; ++x) {
      const int p = (y * grid / side) * grid + (x * grid / side);
      const float heat = (map[static_cast<std::size_t>(p)] - *lo) / range;
      std::array<float, 3> v{};
      for (std::size_t ch = 0; ch < 3; ++ch)
        v[ch] = pixels[(ch * static_cast<std::size_t>(side) + static_cast<std::size_t>(y)) *
                           static_cast<std::size_t>(side) +
                       static_cast<std::size_t>(x)] *
                    cfg.std[ch] +
                cfg.mean[ch];
      const auto px = heat_pixel(v, heat);
      for (std::size_t ch = 0; ch < 3; ++ch)
        rgb[(static_cast<std::size_t>(y) * side + x) * 3 + ch] = px[ch];
    }
  }
  return encode_png_rgb8(rgb, side, side);
}

AlignmentMethod alignment_method(const VlModel& model) {
  require(model, Ability::Alignment, "heatmap");
  if (vilt_runtime_of(model)) {
    return {"ViLT word-patch alignment",
            "Each map: the optimal-transport plan (IPOT, beta 0.1, 1000 iterations, as ViLT's "
            "demo) between the caption's tokens and the image patches, on cosine distances of the "
            "final states; scaled as the demo does (standardised, clipped to [1, 3], scaled to "
            "[0, 1]).",
            "not aligned", "most aligned"};
  }
  return {"Word-patch similarity",
          "Each map: cosine similarity between a caption token's final state and each image "
          "patch's final state (both through the final LayerNorm and projection), min-max "
          "scaled per map.",
          "lowest similarity in the map", "highest"};
}

std::vector<AlignmentPanel> alignment_panels(const VlModel& model,
                                             const std::vector<ImageBytes>& images,
                                             const std::vector<std::string>& captions) {
  require(model, Ability::Alignment, "heatmap");
  std::vector<AlignmentPanel> out;
  // The families that offer alignment, each with its own method (model/<family>_family.hpp).
  if (const ViltRuntime* rt = vilt_runtime_of(model)) {
    for (std::size_t k = 0; k < images.size(); ++k) {
      for (std::size_t q = 0; q < captions.size(); ++q) {
        const ViltAlignment a = vilt_word_patch_alignment(*rt, images[k], captions[q]);
        AlignmentPanel& panel =
            out.emplace_back(AlignmentPanel{k, q, {}, "score " + [&] {
                                              char buf[32];
                                              std::snprintf(buf, sizeof buf, "%.4f", a.score);
                                              return std::string(buf);
                                            }()});
        for (std::size_t t = 0; t < a.tokens.size(); ++t) {
          panel.maps.emplace_back(
              a.tokens[t],
              render_vilt_heatmap_png(a.image, rt->model->config(),
                                      vilt_display_map(a.transport[t]), a.grid_h, a.grid_w));
        }
      }
    }
    return out;
  }
  if (const ClipRuntime* rt = clip_runtime_of(model)) {
    const ClipConfig& c = rt->model->config();
    const PreprocessConfig pp = rt->preprocess();
    for (std::size_t k = 0; k < images.size(); ++k) {
      WordPatchMaps maps = word_patch_maps(*rt, images[k], captions);
      for (std::size_t q = 0; q < captions.size(); ++q) {
        AlignmentPanel& panel = out.emplace_back(AlignmentPanel{k, q, {}, {}});
        for (std::size_t t = 0; t < maps.tokens[q].size(); ++t) {
          panel.maps.emplace_back(
              maps.tokens[q][t],
              render_heatmap_png(maps.pixels, pp, maps.similarity[q][t], maps.grid, c.image_size));
        }
      }
    }
    return out;
  }
  throw UsageError(model.name() +
                   " lists alignment maps, but winokit has no alignment method "
                   "for the " +
                   model.family() + " family yet");
}

}  // namespace winokit
