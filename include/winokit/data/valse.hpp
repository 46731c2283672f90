// VALSE (Parcalabescu et al., ACL 2022): 11 pieces of captions and foils that differ in one
// linguistic phenomenon. The official release (Heidelberg-NLP/VALSE, folder data/) is one JSON
// object per piece, {"ID": {"dataset", "image_file", "caption", "foil", "mturk": {"caption",
// "foil", "other"}, ...}, ...}; the images come from each piece's source dataset, in the folders
// the official config.py names (relative to the data folder): visual7w/images/ (existence,
// counting), plurals/test_images/, relations/test_images/, actions/images_512/ (SWiG: actions),
// coref/release_too_many_is_this_in_color/images/, coref/release_v18/test_images/, and COCO's
// val2014/ (foil-it; config.py points at a local copy).
//
//   winokit::ValseDataset d = winokit::load_valse("VALSE/data");
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(data);

namespace winokit {

// The 11 pieces (file stems) in the paper's order, and each one's image folder.
const std::vector<std::string>& valse_pieces();
std::string valse_image_folder(const std::string& piece);
// The paper's instrument of a piece ("counting" for counting-hard, ...).
std::string valse_instrument(const std::string& piece);

struct ValseItem {
  std::string piece;  // "counting-hard"
  std::string key;    // the key in the piece's file
  std::filesystem::path image;
  std::string image_file;
  std::string caption, foil;
  int mturk_caption = 0;  // annotators who chose the caption but not the foil
  bool valid = false;     // mturk.caption >= 2: the official valid set
};

struct ValseDataset {
  std::filesystem::path root, images;
  std::vector<std::filesystem::path> files;
  std::string sha256;
  std::vector<ValseItem> items;  // every item of the files, valid or not
};

// `path`: the release's data/ folder (all 11 piece files must be there: a missing one is a
// UsageError naming it), or one piece's file. `images`: the root of the image folders (default:
// the data folder). InputError naming the file, the key and the field for malformed content.
ValseDataset load_valse(const std::filesystem::path& path,
                        const std::filesystem::path& images = {});

}  // namespace winokit
