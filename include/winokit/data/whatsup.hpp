// What'sUp (Kamath et al., EMNLP 2023): spatial relations, one image and captions that differ
// only in the preposition. The official release (amitakamath/whatsup_vlms) is one data folder:
//   controlled_images_dataset.json + controlled_images/   subset A: 4 captions (on, under,
//                                                          left of, right of), the true one first
//   controlled_clevr_dataset.json + controlled_clevr/     subset B: 4 captions (in front of,
//                                                          behind, left of, right of)
//   coco_qa_one_obj.json, coco_qa_two_obj.json + val2017/ COCO-spatial: [image id, true, false]
//   vg_qa_one_obj.json, vg_qa_two_obj.json + vg_images/   GQA-spatial: [image id, true, false]
//
//   winokit::WhatsUpDataset d = winokit::load_whatsup("whatsup/data");
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(data);

namespace winokit {

// The six subsets, in the paper's order: controlled_a, controlled_b, coco_one, coco_two,
// gqa_one, gqa_two; and each one's annotation file name.
const std::vector<std::string>& whatsup_subsets();
std::string whatsup_file(const std::string& subset);

struct WhatsUpItem {
  std::string subset;                 // "controlled_a"
  std::size_t index = 0;              // position in its file
  std::filesystem::path image;        // resolved as the official loaders do
  std::vector<std::string> captions;  // the true caption first
  std::string preposition;            // as the official evaluate_scores groups them
  std::string pair_key, slot;         // controlled sets: (object pair) and the preposition slot
};

struct WhatsUpDataset {
  std::filesystem::path root;
  std::vector<std::filesystem::path> files;
  std::string sha256;  // of the one file, or over the files' names and SHA-256s
  std::vector<WhatsUpItem> items;
};

// `path`: the release's data folder (all six annotation files must be there: a missing one is a
// UsageError naming it), or one annotation file (that subset alone, images under its folder).
// InputError naming the file, the item and the field for malformed content.
WhatsUpDataset load_whatsup(const std::filesystem::path& path);

}  // namespace winokit
