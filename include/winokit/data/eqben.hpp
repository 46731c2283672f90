// EqBen (Wang et al., ICCV 2023, "Equivariant Similarity for Vision-Language Foundation
// Models"): pairs of images with a visual-minimal change and their two captions. The released
// evaluation subset (Wangt-CN/EqBen README, "Sub-Test Set": eqben_subset_10percent_final.json
// and subset_image.tar.gz) is Winoground-style: a JSON list of {"image0", "caption0", "image1",
// "caption1"}, image paths relative to the image folder, their first component the source
// (eqbenag, eqbenyoucook2, eqbengebc, eqbenkubric_*, eqbensd); YouCook2 frames are .npy arrays
// (uint8, height x width x 3, BGR), the others image files.
//
//   winokit::EqBenDataset d = winokit::load_eqben("eqben_subset_10percent_final.json");
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(data);

namespace winokit {

struct EqBenItem {
  std::size_t index = 0;
  std::string image0, image1;  // as the file gives them
  std::string caption0, caption1;
  std::string source;  // image0's first path component ("eqbenag"), or "" when it has none
};

struct EqBenDataset {
  std::filesystem::path file, images;
  std::string sha256;
  std::vector<EqBenItem> items;
};

// `path`: the annotation JSON. `images`: the image folder (default: image_subset/ beside it, the
// folder subset_image.tar.gz unpacks). InputError naming the file, the item and the field for
// malformed content.
EqBenDataset load_eqben(const std::filesystem::path& path,
                        const std::filesystem::path& images = {});

}  // namespace winokit
