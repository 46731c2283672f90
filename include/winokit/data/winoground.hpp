// The Winoground dataset layout, as published: `examples.jsonl` (one example per line) and the
// images in `images/` or `images.zip`. A clone of the published repository keeps both under
// `data/`; either that folder or its parent is accepted. Images are not read here.
//
//   winokit::WinogroundDataset ds = winokit::load_dataset("winoground");
//   for (const auto& ex : ds.examples) std::cout << ex.id << " " << ex.captions[0] << "\n";
//   winokit::ImageStore images = winokit::ImageStore::open(ds.root);
#pragma once

#include <array>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(data);

namespace winokit {

struct WinogroundExample {
  std::string id;        // the JSON id as text ("0", "17", or a string id)
  std::size_t line = 0;  // line in examples.jsonl
  std::array<std::string, 2> captions;
  std::array<std::string, 2> images;  // image names without extension
  std::string tag;                    // fine-grained linguistic tag; one label even with commas
  std::string secondary_tag_raw;      // as written, e.g. "Symbolic, Series"
  std::vector<std::string> secondary_tags;  // split on commas, trimmed
  std::optional<int> num_main_preds;
  std::string collapsed_tag;  // Object, Relation or Both
  nlohmann::json extra;       // every other field (e.g. "scenes" of synthetic data)
};

struct WinogroundDataset {
  std::filesystem::path root;  // the folder holding examples.jsonl
  std::filesystem::path examples_path;
  std::string examples_sha256;
  std::vector<WinogroundExample> examples;  // file order
  std::unordered_map<std::string, std::size_t> index_by_id;
  bool numeric_ids = true;  // every id is an integer
  // Where the images are when not images/ or images.zip beside examples.jsonl (--images): a
  // folder or a zip. Open with ImageStore::open(root, images).
  std::filesystem::path images;

  // Indices of the examples sorted by id (numerically when all ids are integers).
  std::vector<std::size_t> id_order() const;
  std::optional<std::size_t> find(const std::string& id) const;
};

// `path` may be the dataset folder, its parent (a clone with data/), or examples.jsonl itself.
// Throws IoError when no examples.jsonl is found and InputError for any bad line.
WinogroundDataset load_dataset(const std::filesystem::path& path);

// Parses the text of an examples.jsonl file (`file` names it in errors).
WinogroundDataset parse_examples(const std::string& text, const std::string& file);

// Canonical text of a JSON id: integers without decoration, strings as they are.
std::optional<std::string> id_text(const nlohmann::json& value);

}  // namespace winokit
