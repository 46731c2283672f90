#include "winokit/eval/heatmap.hpp"

#include "winokit/core/error.hpp"

#include <algorithm>
#include <cmath>

#include "winokit/io/png_writer.hpp"

namespace winokit {

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

AlignmentMethod alignment_method(const VlModel& model) {
  require(model, Ability::Alignment, "heatmap");
  return model.alignment_method();
}

std::string render_alignment_png(const AlignmentMaps& maps, std::size_t token) {
  const int w = maps.width, h = maps.height;
  const std::vector<float>& map = maps.maps.at(token);
  const std::size_t plane = static_cast<std::size_t>(w) * static_cast<std::size_t>(h);
  std::vector<std::uint8_t> rgb(plane * 3);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const int gy = std::min(maps.grid_h - 1, y / maps.region);
      const int gx = std::min(maps.grid_w - 1, x / maps.region);
      const float heat = map[static_cast<std::size_t>(gy) * maps.grid_w + gx];
      const std::size_t at = static_cast<std::size_t>(y) * w + x;
      const auto px =
          heat_pixel({maps.rgb[at], maps.rgb[plane + at], maps.rgb[2 * plane + at]}, heat);
      for (std::size_t ch = 0; ch < 3; ++ch)
        rgb[at * 3 + ch] = px[ch];
    }
  }
  return encode_png_rgb8(rgb, w, h);
}

std::vector<AlignmentPanel> alignment_panels(const VlModel& model,
                                             const std::vector<ImageBytes>& images,
                                             const std::vector<std::string>& captions) {
  require(model, Ability::Alignment, "heatmap");
  std::vector<AlignmentPanel> out;
  for (std::size_t k = 0; k < images.size(); ++k) {
    const std::vector<AlignmentMaps> maps = model.align(images[k], captions);
    for (std::size_t q = 0; q < captions.size() && q < maps.size(); ++q) {
      AlignmentPanel& panel = out.emplace_back(AlignmentPanel{k, q, {}, maps[q].note});
      for (std::size_t t = 0; t < maps[q].tokens.size(); ++t)
        panel.maps.emplace_back(maps[q].tokens[t], render_alignment_png(maps[q], t));
    }
  }
  return out;
}

}  // namespace winokit
