// ARO (Yuksekgonul et al., ICLR 2023, "When and why vision-language models behave like bags of
// words"): Visual Genome Relation and Visual Genome Attribution. The official release
// (mertyg/vision-language-models-are-bows, dataset_zoo/aro_datasets.py) is one folder:
//   visual_genome_relation.json     [{"image_path", "bbox_x", "bbox_y", "bbox_w", "bbox_h",
//                                     "relation_name", "true_caption", "false_caption"}, ...]
//   visual_genome_attribution.json  [{... "attributes": [a, b], "true_caption", ...}, ...]
//   images/                         vgr_vga_images.zip unzipped (the items' image_path)
// Each item's image is cropped to its box before scoring, as the official __getitem__ does.
//
//   winokit::AroDataset d = winokit::load_aro("aro");
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(data);

namespace winokit {

// vg_relation, vg_attribution; and each one's annotation file name.
const std::vector<std::string>& aro_subsets();
std::string aro_file(const std::string& subset);
// The relations the official notebook ("Replicate ARO! VG-Relation, VG-Attribution") drops
// before taking VG-Relation's macro accuracy (its `symmetric` list, in its order).
const std::vector<std::string>& aro_symmetric_relations();
// Attribute pairs with fewer items are dropped from VG-Attribution's macro accuracy
// (VG_Attribution.evaluate_scores: `if attr_mask.sum() < 25: continue`).
constexpr std::size_t kAroMinAttributeCount = 25;

struct AroItem {
  std::string subset;      // "vg_relation"
  std::size_t index = 0;   // position in its file
  std::string image_path;  // as the file gives it
  std::filesystem::path image;
  double bbox_x = 0, bbox_y = 0, bbox_w = 0, bbox_h = 0;
  std::string true_caption, false_caption;
  // What the official evaluation groups by: relation_name (VG-R), or the item's two attributes
  // joined by '_' (VG-A, f"{attributes[0]}_{attributes[1]}").
  std::string group;
};

struct AroDataset {
  std::filesystem::path root;
  std::filesystem::path images;  // where image_path is resolved: root/images unless given
  std::vector<std::filesystem::path> files;
  std::string sha256;  // of the one file, or over the files' names and SHA-256s
  std::vector<AroItem> items;
};

// `path`: the release's folder (both annotation files must be there: a missing one is a
// UsageError naming it), or one annotation file (that subset alone). `images`: the folder the
// image_path fields are relative to (default: images/ beside the annotation files). InputError
// naming the file, the item and the field for malformed content (a box of zero or negative
// width or height included).
AroDataset load_aro(const std::filesystem::path& path, const std::filesystem::path& images = {});

}  // namespace winokit
