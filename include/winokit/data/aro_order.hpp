// ARO's COCO-Order and Flickr30k-Order (Yuksekgonul et al., ICLR 2023): a caption against 4
// reorderings of its words. The official COCO_Order / Flickr30k_Order (mertyg/vision-language-
// models-are-bows, dataset_zoo/aro_datasets.py) draw the reorderings when the dataset is built
// (spaCy part-of-speech tags and NumPy's random generator), so there is no file of them to
// download: winokit reads the test cases the official dataset object holds, written out as JSON
// (`json.dump(COCO_Order(...).test_cases, f)`): [{"image": "val2014/COCO_val2014_....jpg",
// "caption_options": [caption, 4 reorderings]}, ...], the images under the dataset's root_dir.
//
//   winokit::AroOrderDataset d = winokit::load_aro_order("coco_order.json", "coco/");
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(data);

namespace winokit {

struct AroOrderItem {
  std::size_t index = 0;
  std::string image;                  // as the file gives it
  std::vector<std::string> captions;  // the true caption first, then its reorderings
};

struct AroOrderDataset {
  std::filesystem::path file, images;
  std::string subset;  // the file's stem ("coco_order")
  std::string sha256;
  std::vector<AroOrderItem> items;
};

// `images`: the root the image paths are relative to (default: the file's folder). InputError
// naming the file, the item and the field for malformed content (fewer than 2 captions).
AroOrderDataset load_aro_order(const std::filesystem::path& path,
                               const std::filesystem::path& images = {});

}  // namespace winokit
