// SugarCrepe (Hsieh et al., NeurIPS 2023 Datasets and Benchmarks): COCO val2017 images, each with
// a true caption and a hard negative made by replacing, swapping or adding an object, attribute
// or relation. The official release (RAIVNLab/sugar-crepe, folder data/) is one JSON file per
// subset, {"0": {"filename": "000000397133.jpg", "caption": "...", "negative_caption": "..."},
// ...}; the images are COCO's val2017 folder.
//
//   winokit::SugarCrepeDataset d = winokit::load_sugarcrepe("sugar-crepe/data");
//   for (const auto& item : d.items) use(item.subset, item.filename, item.caption);
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(data);

namespace winokit {

// The 7 subsets in the paper's order (main_eval.py's): add_obj, add_att, replace_obj,
// replace_att, replace_rel, swap_obj, swap_att.
const std::vector<std::string>& sugarcrepe_subsets();
// The paper's grouping of a subset: "Replace", "Swap" or "Add".
std::string sugarcrepe_category(const std::string& subset);

struct SugarCrepeItem {
  std::string subset;    // "swap_att"
  std::string key;       // the key in the subset's file ("17")
  std::string filename;  // the COCO image ("000000544519.jpg")
  std::string caption, negative_caption;
};

struct SugarCrepeDataset {
  std::filesystem::path root;                // the folder (or the one file) given
  std::vector<std::filesystem::path> files;  // the subset files read, in subset order
  std::string sha256;                        // over the files' names and SHA-256s
  std::vector<SugarCrepeItem> items;         // subset order, then the file's key order
};

// `path`: the release's data/ folder (all 7 subset files must be there: a missing one is a
// UsageError naming it; the older names add_ent/replace_ent/swap_ent are read as *_obj), or one
// subset's .json file (that subset alone). InputError naming the file and the key/field for
// malformed content.
SugarCrepeDataset load_sugarcrepe(const std::filesystem::path& path);

}  // namespace winokit
