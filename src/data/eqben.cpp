// EqBen's released subset annotation (data/eqben.hpp).
#include "winokit/data/eqben.hpp"

#include <nlohmann/json.hpp>

#include "winokit/core/error.hpp"
#include "winokit/io/files.hpp"

namespace winokit {

namespace fs = std::filesystem;

EqBenDataset load_eqben(const fs::path& path, const fs::path& images) {
  EqBenDataset d;
  d.file = path;
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    throw IoError(path.string() + ": not found",
                  "pass EqBen's annotation file (eqben_subset_10percent_final.json)");
  }
  d.images = images.empty() ? path.parent_path() / "image_subset" : images;
  const std::string file = path.string();
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_text_file(path, {TextLimits::kMiB * 512, 0}));
  } catch (const nlohmann::json::exception& e) {
    throw InputError({file, 0, ""}, std::string("malformed JSON: ") + e.what());
  }
  if (!j.is_array() || j.empty()) {
    throw InputError({file, 0, ""},
                     "expected a JSON list of {image0, caption0, image1, caption1} items");
  }
  for (std::size_t i = 0; i < j.size(); ++i) {
    const auto& v = j[i];
    const std::string where = std::to_string(i);
    if (!v.is_object()) throw InputError({file, 0, where}, "expected an object");
    EqBenItem item;
    item.index = i;
    for (auto [field, out] : {std::pair<const char*, std::string*>{"image0", &item.image0},
                              {"image1", &item.image1},
                              {"caption0", &item.caption0},
                              {"caption1", &item.caption1}}) {
      const auto it = v.find(field);
      if (it == v.end() || !it->is_string() || it->get<std::string>().empty()) {
        throw InputError({file, 0, where + "." + field}, "expected a non-empty string");
      }
      *out = it->get<std::string>();
    }
    const std::size_t slash = item.image0.find('/');
    item.source = slash == std::string::npos ? "" : item.image0.substr(0, slash);
    d.items.push_back(std::move(item));
  }
  d.sha256 = sha256_of_files({path});
  return d;
}

}  // namespace winokit
