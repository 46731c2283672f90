// MMVP-VLM (Tong et al., CVPR 2024, "Eyes Wide Shut?"): 9 visual patterns x 15 pairs of images,
// each image with a statement only it fits. The official release (huggingface.co/datasets/
// MMVP/MMVP_VLM, evaluated by tsb0601/MMVP scripts/evaluate_vlm.py) is one folder:
//   Questions.csv        header, then rows "question id, type, statement", two rows a pair
//   MLLM_VLM Images/     TYPE/ID.jpg (both images of a pair under the first row's type)
//
//   winokit::MmvpDataset d = winokit::load_mmvp_vlm("MMVP_VLM");
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(data);

namespace winokit {

// The 9 patterns in evaluate_vlm.py's order; a pair's pattern is its position (pairs 0-14 the
// first, 15-29 the second, ...: `categories[num_pairs // 15]`), as there.
const std::vector<std::string>& mmvp_categories();
constexpr std::size_t kMmvpPairsPerCategory = 15;

struct MmvpPair {
  std::size_t index = 0;  // the pair's position
  long long qid1 = 0, qid2 = 0;
  std::string type;  // the first row's type (the image folder)
  std::string statement1, statement2;
  std::filesystem::path image1, image2;  // IMAGES/type/qid1.jpg, IMAGES/type/qid2.jpg
  std::string category;                  // mmvp_categories()[index / 15]
  std::size_t line1 = 0, line2 = 0;
};

struct MmvpDataset {
  std::filesystem::path root, csv, images;
  std::string sha256;  // of Questions.csv
  std::vector<MmvpPair> pairs;
};

// `path`: the release's folder (Questions.csv in it) or the CSV itself. `images`: the image
// folder (default: "MLLM_VLM Images" beside the CSV, as evaluate_vlm.py, or "MMVP_VLM_Images",
// the README's name, when only that one exists). The file must hold the release's 135 pairs (9
// patterns x 15): another count is an InputError, never a smaller N. InputError naming the file,
// the line and the field for a malformed row (an id that is not an integer, an odd number of
// rows).
MmvpDataset load_mmvp_vlm(const std::filesystem::path& path,
                          const std::filesystem::path& images = {});

}  // namespace winokit
