// What'sUp's official annotation files (data/whatsup.hpp), read as the official loaders
// (dataset_zoo/aro_datasets.py: Controlled_Images, COCO_QA, VG_QA) read them.
#include "winokit/data/whatsup.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "winokit/core/error.hpp"
#include "winokit/data/subset_files.hpp"
#include "winokit/io/files.hpp"

namespace winokit {

namespace fs = std::filesystem;

const std::vector<std::string>& whatsup_subsets() {
  static const std::vector<std::string> names = {"controlled_a", "controlled_b", "coco_one",
                                                 "coco_two",     "gqa_one",      "gqa_two"};
  return names;
}

std::string whatsup_file(const std::string& subset) {
  if (subset == "controlled_a") return "controlled_images_dataset.json";
  if (subset == "controlled_b") return "controlled_clevr_dataset.json";
  if (subset == "coco_one") return "coco_qa_one_obj.json";
  if (subset == "coco_two") return "coco_qa_two_obj.json";
  if (subset == "gqa_one") return "vg_qa_one_obj.json";
  if (subset == "gqa_two") return "vg_qa_two_obj.json";
  throw UsageError("unknown What'sUp subset '" + subset + "'");
}

namespace {

std::vector<std::string> split(const std::string& s, char by) {
  std::vector<std::string> out(1);
  for (char c : s) {
    if (c == by) {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

bool contains(const std::string& s, const char* what) {
  return s.find(what) != std::string::npos;
}

// Controlled_Images: {"image_path": "data/controlled_images/dog_left_of_table.jpeg",
// "caption_options": [4 captions, the true one first]}. The preposition comes from the file
// name; a pair of images shares (first word, last word) of the file name.
void read_controlled(const nlohmann::json& j, const fs::path& file, const std::string& subset,
                     WhatsUpDataset& d) {
  const bool a = subset == "controlled_a";
  const fs::path dir = file.parent_path() / (a ? "controlled_images" : "controlled_clevr");
  for (std::size_t i = 0; i < j.size(); ++i) {
    const auto& v = j[i];
    const std::string where = std::to_string(i);
    if (!v.is_object()) throw InputError({file.string(), 0, where}, "expected an object");
    const auto path = v.find("image_path");
    if (path == v.end() || !path->is_string() || path->get<std::string>().empty()) {
      throw InputError({file.string(), 0, where + ".image_path"}, "expected a non-empty string");
    }
    const auto caps = v.find("caption_options");
    if (caps == v.end() || !caps->is_array() || caps->size() != 4) {
      throw InputError({file.string(), 0, where + ".caption_options"},
                       "expected 4 captions (the true one first)");
    }
    WhatsUpItem item;
    item.subset = subset;
    item.index = i;
    for (const auto& c : *caps) {
      if (!c.is_string()) {
        throw InputError({file.string(), 0, where + ".caption_options"}, "expected strings");
      }
      item.captions.push_back(c.get<std::string>());
    }
    const std::string p = path->get<std::string>();
    const std::string name = fs::path(p).filename().string();
    // The official loader opens image_path as it is (relative to the repository); here it is
    // found under the data folder, as given or by its file name in the subset's image folder.
    item.image = fs::exists(file.parent_path() / p) ? file.parent_path() / p : dir / name;
    if (contains(p, "left_of")) {
      item.preposition = "left_of";
    } else if (contains(p, "right_of")) {
      item.preposition = "right_of";
    } else if (a) {
      item.preposition = contains(p, "_on_") ? "on" : "under";
    } else {
      item.preposition = contains(p, "_in-front_of_") ? "in-front_of" : "behind";
    }
    const std::vector<std::string> parts = split(name, '_');
    const std::string last = parts.back();
    if (parts.size() < 3 || last.size() < 5) {
      throw InputError(
          {file.string(), 0, where + ".image_path"},
          "expected a file name OBJECT_PREPOSITION_..._OBJECT.jpeg, got '" + name + "'");
    }
    item.pair_key = parts.front() + "|" + last.substr(0, last.size() - 5);  // ".jpeg" dropped
    item.slot = parts[1];
    d.items.push_back(std::move(item));
  }
}

// COCO_QA / VG_QA: [image id, true caption, false caption].
void read_qa(const nlohmann::json& j, const fs::path& file, const std::string& subset,
             WhatsUpDataset& d) {
  const bool coco = subset.rfind("coco_", 0) == 0,
             one = subset.size() > 4 && subset.compare(subset.size() - 3, 3, "one") == 0;
  for (std::size_t i = 0; i < j.size(); ++i) {
    const auto& v = j[i];
    const std::string where = std::to_string(i);
    if (!v.is_array() || v.size() != 3 || !v[1].is_string() || !v[2].is_string() ||
        !(v[0].is_number_integer() || v[0].is_string())) {
      throw InputError({file.string(), 0, where},
                       "expected [image id, true caption, false caption]");
    }
    WhatsUpItem item;
    item.subset = subset;
    item.index = i;
    item.captions = {v[1].get<std::string>(), v[2].get<std::string>()};
    const std::string id = v[0].is_string() ? v[0].get<std::string>() : v[0].dump();
    if (coco) {
      // 'val2017/{}.jpg'.format(str(id).zfill(12))
      const std::string padded = id.size() < 12 ? std::string(12 - id.size(), '0') + id : id;
      item.image = file.parent_path() / "val2017" / (padded + ".jpg");
    } else {
      item.image = file.parent_path() / "vg_images" / (id + ".jpg");
    }
    const std::string& t = item.captions[0];
    if (one) {
      // d[1].split()[-1]: the last white-space separated word
      std::istringstream words(t);
      std::string w;
      while (words >> w)
        item.preposition = w;
    } else if (contains(t, "left of")) {
      item.preposition = "left";
    } else if (contains(t, "right of")) {
      item.preposition = "right";
    } else if (coco) {
      item.preposition = contains(t, "above") ? "above" : "below";
    } else if (contains(t, "front of")) {
      item.preposition = "front";
    } else {
      item.preposition = contains(t, "behind") ? "behind" : "top";
    }
    d.items.push_back(std::move(item));
  }
}

void read_file_of(const fs::path& file, const std::string& subset, WhatsUpDataset& d) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_text_file(file, {TextLimits::kMiB * 256, 0}));
  } catch (const nlohmann::json::exception& e) {
    throw InputError({file.string(), 0, ""}, std::string("malformed JSON: ") + e.what());
  }
  if (!j.is_array() || j.empty()) {
    throw InputError({file.string(), 0, ""}, "expected a JSON list of items");
  }
  if (subset.rfind("controlled_", 0) == 0) {
    read_controlled(j, file, subset, d);
  } else {
    read_qa(j, file, subset, d);
  }
  d.files.push_back(file);
}

}  // namespace

WhatsUpDataset load_whatsup(const fs::path& path) {
  SubsetLayout layout{
      "What'sUp annotation file",
      {},
      "the release's data folder has all six; to run one subset, pass its file",
      "the release's files are controlled_images_dataset.json, controlled_clevr_dataset.json, "
      "coco_qa_one_obj.json, coco_qa_two_obj.json, vg_qa_one_obj.json and vg_qa_two_obj.json",
      {},
      {}};
  for (const std::string& s : whatsup_subsets())
    layout.subsets.emplace_back(s, std::vector<std::string>{whatsup_file(s)});
  WhatsUpDataset d;
  d.root = path;
  for (const SubsetFile& f : find_subset_files(path, layout))
    read_file_of(f.file, f.subset, d);
  d.sha256 = sha256_of_files(d.files);
  return d;
}

}  // namespace winokit
