// SugarCrepe's official JSON files (data/sugarcrepe.hpp).
#include "winokit/data/sugarcrepe.hpp"

#include <nlohmann/json.hpp>

#include "winokit/core/error.hpp"
#include "winokit/data/subset_files.hpp"
#include "winokit/io/files.hpp"

namespace winokit {

namespace fs = std::filesystem;

const std::vector<std::string>& sugarcrepe_subsets() {
  static const std::vector<std::string> names = {
      "add_obj", "add_att", "replace_obj", "replace_att", "replace_rel", "swap_obj", "swap_att"};
  return names;
}

std::string sugarcrepe_category(const std::string& subset) {
  if (subset.rfind("replace_", 0) == 0) return "Replace";
  if (subset.rfind("swap_", 0) == 0) return "Swap";
  return "Add";
}

namespace {

// An older release names the object subsets *_ent.
std::string older_name(const std::string& subset) {
  const std::size_t at = subset.rfind("_obj");
  return at == std::string::npos ? "" : subset.substr(0, at) + "_ent";
}

void read_subset(const fs::path& file, const std::string& subset, SugarCrepeDataset& d) {
  const std::string text = read_text_file(file, {TextLimits::kMiB * 256, 0});
  nlohmann::ordered_json j;
  try {
    j = nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw InputError({file.string(), 0, ""}, std::string("malformed JSON: ") + e.what());
  }
  if (!j.is_object() || j.empty()) {
    throw InputError({file.string(), 0, ""},
                     "expected a JSON object of items ({\"0\": {\"filename\", \"caption\", "
                     "\"negative_caption\"}, ...})");
  }
  for (const auto& [key, value] : j.items()) {
    if (!value.is_object()) {
      throw InputError({file.string(), 0, key},
                       "expected an object with filename, caption and "
                       "negative_caption");
    }
    SugarCrepeItem item;
    item.subset = subset;
    item.key = key;
    for (auto [field, out] : {std::pair<const char*, std::string*>{"filename", &item.filename},
                              {"caption", &item.caption},
                              {"negative_caption", &item.negative_caption}}) {
      const auto it = value.find(field);
      if (it == value.end() || !it->is_string() || it->get<std::string>().empty()) {
        throw InputError({file.string(), 0, key + "." + field}, "expected a non-empty string");
      }
      *out = it->get<std::string>();
    }
    d.items.push_back(std::move(item));
  }
  d.files.push_back(file);
}

}  // namespace

SugarCrepeDataset load_sugarcrepe(const fs::path& path) {
  SubsetLayout layout{
      "SugarCrepe subset file",
      {},
      "the release's data/ folder has all 7; to run one subset, pass its file",
      "the release's files are add_obj.json, add_att.json, replace_obj.json, replace_att.json, "
      "replace_rel.json, swap_obj.json and swap_att.json",
      "no SugarCrepe subset file (add_obj.json, ..., swap_att.json)",
      "pass the data/ folder of RAIVNLab/sugar-crepe, or one subset's file"};
  for (const std::string& s : sugarcrepe_subsets()) {
    std::vector<std::string> names = {s + ".json"};
    if (!older_name(s).empty()) names.push_back(older_name(s) + ".json");
    layout.subsets.emplace_back(s, names);
  }
  SugarCrepeDataset d;
  d.root = path;
  for (const SubsetFile& f : find_subset_files(path, layout))
    read_subset(f.file, f.subset, d);
  d.sha256 = sha256_of_files(d.files);
  return d;
}

}  // namespace winokit
