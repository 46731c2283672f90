// Word-region heat maps (in the spirit of the Winoground paper's Figure 4) of any model that
// offers alignment (Ability::Alignment; the model computes the maps, VlModel::align), drawn over
// the image as the model saw it.
//
//   for (winokit::AlignmentPanel& p : winokit::alignment_panels(*model, images, captions))
//     for (auto& [token, png] : p.maps) write(token + ".png", png);
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "winokit/model/vl_model.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(eval);

namespace winokit {

// The colour map of every word-patch map: viridis (dark violet for the map's lowest value, blue,
// green, yellow for its highest), perceptually ordered and readable by most colour-blind readers.
// `heat` in [0, 1]; returns 8-bit RGB.
std::array<std::uint8_t, 3> heat_colour(float heat);

// One pixel of a map: the image in grey (so that a red or yellow image cannot hide the map),
// blended with heat_colour(heat). `rgb` in [0, 1].
std::array<std::uint8_t, 3> heat_pixel(const std::array<float, 3>& rgb, float heat);

// One token's map over the image as the model saw it (heat_pixel per pixel), as a PNG.
std::string render_alignment_png(const AlignmentMaps& maps, std::size_t token);

// ---- word-region alignment of any model that offers it (Ability::Alignment) ----
// One image with one caption: a PNG per caption token (the map over the image).
struct AlignmentPanel {
  std::size_t image = 0, caption = 0;
  std::vector<std::pair<std::string, std::string>> maps;  // (token, PNG)
  std::string note;                                       // "score 0.8123", or empty
};
// UsageError (require) when the model has no alignment.
AlignmentMethod alignment_method(const VlModel& model);
// Every image with every caption: images x captions panels, image-major.
std::vector<AlignmentPanel> alignment_panels(const VlModel& model,
                                             const std::vector<ImageBytes>& images,
                                             const std::vector<std::string>& captions);

}  // namespace winokit
