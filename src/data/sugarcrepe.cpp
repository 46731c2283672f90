// SugarCrepe's official JSON files (data/sugarcrepe.hpp).
#include "winokit/data/sugarcrepe.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "winokit/core/error.hpp"
#include "winokit/core/hash.hpp"
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

std::string subset_of_file(const fs::path& file) {
  const std::string stem = file.stem().string();
  for (const std::string& s : sugarcrepe_subsets())
    if (stem == s || stem == older_name(s)) return s;
  throw UsageError(file.string() + ": not a SugarCrepe subset file",
                   "the release's files are add_obj.json, add_att.json, replace_obj.json, "
                   "replace_att.json, replace_rel.json, swap_obj.json and swap_att.json");
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
  SugarCrepeDataset d;
  d.root = path;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    for (const std::string& s : sugarcrepe_subsets()) {
      for (const std::string& name : {s, older_name(s)}) {
        if (name.empty()) continue;
        const fs::path file = path / (name + ".json");
        if (fs::is_regular_file(file, ec)) {
          read_subset(file, s, d);
          break;
        }
      }
    }
    if (d.files.empty()) {
      throw UsageError(path.string() +
                           ": no SugarCrepe subset file (add_obj.json, ..., "
                           "swap_att.json)",
                       "pass the data/ folder of RAIVNLab/sugar-crepe, or one subset's file");
    }
    // A folder is the whole benchmark: a missing subset would silently shrink N.
    std::string missing;
    for (const std::string& s : sugarcrepe_subsets()) {
      const bool found = std::any_of(d.items.begin(), d.items.end(),
                                     [&](const SugarCrepeItem& i) { return i.subset == s; });
      if (!found) missing += (missing.empty() ? "" : ", ") + s + ".json";
    }
    if (!missing.empty()) {
      throw UsageError(path.string() + ": SugarCrepe subset file(s) missing: " + missing,
                       "the release's data/ folder has all 7; to run one subset, pass its file");
    }
  } else {
    if (!fs::exists(path, ec)) throw IoError(path.string() + ": not found");
    read_subset(path, subset_of_file(path), d);
  }
  // Each file hashed once: one file's own SHA-256, or the hash of the names and hashes.
  std::string manifest, last;
  for (const fs::path& f : d.files) {
    last = sha256_file(f);
    manifest += f.filename().string() + " " + last + "\n";
  }
  d.sha256 = d.files.size() == 1 ? last : sha256_hex(manifest);
  return d;
}

}  // namespace winokit
