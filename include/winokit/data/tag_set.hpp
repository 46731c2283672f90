// Extra tag sets in the format published with "Why is Winoground Hard?" (Diwan et al. 2022):
// a JSON object mapping example id to a list of tags, e.g.
//   {"0": [], "3": ["Ambiguously Correct"], "31": ["Unusual Image", "Visually Difficult"]}
// An empty list puts the example in the set's "No Tag" group; an example the file does not
// mention is in no group of that set. A file for a larger set than the dataset (the official
// 400-id file on a subset) is read when it covers every example of the dataset: its other ids
// are ignored and counted in `ignored_ids`; ids not in the dataset while examples of the
// dataset are missing mean another dataset, an InputError.
//
//   winokit::TagSet t = winokit::load_tag_set("why_winoground_hard.json", "", dataset);
//   t.tags[i];   // std::optional<std::vector<std::string>> for example i of the dataset
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "winokit/data/winoground.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(data);

namespace winokit {

inline constexpr const char* kNoTagGroup = "No Tag";

struct TagSet {
  std::string name;  // shown in reports; defaults to the file's stem
  std::string file;
  std::string sha256;
  std::vector<std::optional<std::vector<std::string>>> tags;  // aligned with dataset.examples
  std::size_t ignored_ids = 0;  // ids of the file not in the dataset (a subset run)
};

// `spec` is "FILE" or "NAME=FILE". Unknown ids, non-list values and non-string tags are
// InputErrors naming the file and line.
TagSet load_tag_set(const std::string& spec, const WinogroundDataset& dataset);

}  // namespace winokit
