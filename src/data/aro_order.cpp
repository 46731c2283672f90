// ARO's order test cases as written out from the official dataset objects (data/aro_order.hpp).
#include "winokit/data/aro_order.hpp"

#include <nlohmann/json.hpp>

#include "winokit/core/error.hpp"
#include "winokit/io/files.hpp"

namespace winokit {

namespace fs = std::filesystem;

AroOrderDataset load_aro_order(const fs::path& path, const fs::path& images) {
  AroOrderDataset d;
  d.file = path;
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    throw IoError(path.string() + ": not found",
                  "pass the test cases of the official COCO_Order / Flickr30k_Order as JSON "
                  "(json.dump(dataset.test_cases, f))");
  }
  d.images = images.empty() ? path.parent_path() : images;
  d.subset = path.stem().string();
  const std::string file = path.string();
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_text_file(path, {TextLimits::kMiB * 512, 0}));
  } catch (const nlohmann::json::exception& e) {
    throw InputError({file, 0, ""}, std::string("malformed JSON: ") + e.what());
  }
  if (!j.is_array() || j.empty()) {
    throw InputError({file, 0, ""}, "expected a JSON list of {image, caption_options} items");
  }
  for (std::size_t i = 0; i < j.size(); ++i) {
    const auto& v = j[i];
    const std::string where = std::to_string(i);
    if (!v.is_object()) throw InputError({file, 0, where}, "expected an object");
    AroOrderItem item;
    item.index = i;
    const auto image = v.find("image");
    if (image == v.end() || !image->is_string() || image->get<std::string>().empty()) {
      throw InputError({file, 0, where + ".image"}, "expected a non-empty string");
    }
    item.image = image->get<std::string>();
    const auto caps = v.find("caption_options");
    if (caps == v.end() || !caps->is_array() || caps->size() < 2) {
      throw InputError({file, 0, where + ".caption_options"},
                       "expected the caption and its reorderings (2 or more strings)");
    }
    for (const auto& c : *caps) {
      if (!c.is_string()) {
        throw InputError({file, 0, where + ".caption_options"}, "expected strings");
      }
      item.captions.push_back(c.get<std::string>());
    }
    d.items.push_back(std::move(item));
  }
  d.sha256 = sha256_of_files({path});
  return d;
}

}  // namespace winokit
