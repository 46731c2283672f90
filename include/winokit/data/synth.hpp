// Synthetic Winoground-layout datasets with known ground truth: simple scenes (shapes, colours,
// sizes, counts, left/above/inside) rendered as PNG images, and caption pairs with the same
// words in a different order. Seeded and deterministic: the same options give the same bytes.
//
//   winokit::SynthOptions opt;  opt.count = 100;  opt.seed = 7;
//   winokit::SynthDataset s = winokit::generate_synthetic(opt);
//   winokit::write_synthetic(s, "synthetic/", /*zip=*/false, /*force=*/false);
//   double truth = winokit::scene_truth("a red circle and a blue square", scene);  // in [0, 1]
//
// Templates, with the tags they carry (tags follow Winoground's conventions: swaps of noun
// phrases are "Object", swaps of attributes, counts or predicates are "Relation"; "Both" marks
// swaps that move whole noun phrases together with their attributes):
//   color_swap      a red circle and a blue square / a blue circle and a red square
//                   Adjective-Color, Relation, 1 main predicate
//   size_swap       a big circle and a small square / a small circle and a big square
//                   Adjective-Size, Relation, 1
//   spatial_swap    a circle is left of a square / a square is left of a circle (or "above")
//                   Noun, Object, 1
//   inside_swap     a circle is inside a square / a square is inside a circle
//                   Noun, Object, 1
//   count_swap      two circles and three squares / three circles and two squares
//                   Numeral, Relation, 1
//   predicate_swap  the circle is red and the square is blue / the circle is blue and ...
//                   Adjective-Color, Relation, 2 main predicates
//   phrase_swap     a red circle is above a blue square / a blue square is above a red circle
//                   Noun Phrase, Both, 1
// The secondary tag "Series" marks pairs whose two images share one background colour.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "winokit/core/error.hpp"
#include "winokit/data/winoground.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(data);

namespace winokit {

struct SceneObject {
  std::string shape;           // circle, square, triangle
  std::string color;           // red, green, blue, yellow, purple, pink
  std::string size;            // big, small
  double x = 0, y = 0, r = 0;  // centre and radius in pixels
};

struct Scene {
  int width = 0, height = 0;
  std::array<std::uint8_t, 3> background{};
  std::vector<SceneObject> objects;
};

nlohmann::json scene_to_json(const Scene& scene);
// Throws InputError naming `where` when the description is malformed.
Scene scene_from_json(const nlohmann::json& j, const Location& where);

// The fraction of a caption's claims (noun phrases, counts, relations, predicates) that hold in
// the scene; 1 for the caption the image was drawn for. Captions outside the synthetic grammar
// throw UsageError.
double scene_truth(const std::string& caption, const Scene& scene);
// The words a scene makes true, without order: shapes (singular and plural), colours, sizes,
// count words, relation words that hold for some pair, and function words.
std::vector<std::string> scene_words(const Scene& scene);

struct SynthOptions {
  std::size_t count = 200;
  std::uint64_t seed = 1;
  int image_size = 256;
};

struct SynthDataset {
  WinogroundDataset dataset;                           // examples with extra["scenes"]
  std::vector<std::array<std::string, 2>> images_png;  // encoded PNGs per example
  std::string examples_jsonl;
};

SynthDataset generate_synthetic(const SynthOptions& options);

// Writes examples.jsonl and images/ex_<id>_img_<k>.png (or images.zip). Refuses to replace an
// existing examples.jsonl unless `force`.
void write_synthetic(const SynthDataset& synth, const std::filesystem::path& dir, bool zip,
                     bool force);

}  // namespace winokit
