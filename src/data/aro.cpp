// ARO's official annotation files (data/aro.hpp), read as dataset_zoo/aro_datasets.py reads them.
#include "winokit/data/aro.hpp"

#include <nlohmann/json.hpp>

#include "winokit/core/error.hpp"
#include "winokit/data/subset_files.hpp"
#include "winokit/io/files.hpp"

namespace winokit {

namespace fs = std::filesystem;

const std::vector<std::string>& aro_subsets() {
  static const std::vector<std::string> names = {"vg_relation", "vg_attribution"};
  return names;
}

std::string aro_file(const std::string& subset) {
  if (subset == "vg_relation") return "visual_genome_relation.json";
  if (subset == "vg_attribution") return "visual_genome_attribution.json";
  throw UsageError("unknown ARO subset '" + subset + "'");
}

const std::vector<std::string>& aro_symmetric_relations() {
  static const std::vector<std::string> names = {"adjusting",
                                                 "attached to",
                                                 "between",
                                                 "bigger than",
                                                 "biting",
                                                 "boarding",
                                                 "brushing",
                                                 "chewing",
                                                 "cleaning",
                                                 "climbing",
                                                 "close to",
                                                 "coming from",
                                                 "coming out of",
                                                 "contain",
                                                 "crossing",
                                                 "dragging",
                                                 "draped over",
                                                 "drinking",
                                                 "drinking from",
                                                 "driving",
                                                 "driving down",
                                                 "driving on",
                                                 "eating from",
                                                 "eating in",
                                                 "enclosing",
                                                 "exiting",
                                                 "facing",
                                                 "filled with",
                                                 "floating in",
                                                 "floating on",
                                                 "flying",
                                                 "flying above",
                                                 "flying in",
                                                 "flying over",
                                                 "flying through",
                                                 "full of",
                                                 "going down",
                                                 "going into",
                                                 "going through",
                                                 "grazing in",
                                                 "growing in",
                                                 "growing on",
                                                 "guiding",
                                                 "hanging from",
                                                 "hanging in",
                                                 "hanging off",
                                                 "hanging over",
                                                 "higher than",
                                                 "holding onto",
                                                 "hugging",
                                                 "in between",
                                                 "jumping off",
                                                 "jumping on",
                                                 "jumping over",
                                                 "kept in",
                                                 "larger than",
                                                 "leading",
                                                 "leaning over",
                                                 "leaving",
                                                 "licking",
                                                 "longer than",
                                                 "looking in",
                                                 "looking into",
                                                 "looking out",
                                                 "looking over",
                                                 "looking through",
                                                 "lying next to",
                                                 "lying on top of",
                                                 "making",
                                                 "mixed with",
                                                 "mounted on",
                                                 "moving",
                                                 "on the back of",
                                                 "on the edge of",
                                                 "on the front of",
                                                 "on the other side of",
                                                 "opening",
                                                 "painted on",
                                                 "parked at",
                                                 "parked beside",
                                                 "parked by",
                                                 "parked in",
                                                 "parked in front of",
                                                 "parked near",
                                                 "parked next to",
                                                 "perched on",
                                                 "petting",
                                                 "piled on",
                                                 "playing",
                                                 "playing in",
                                                 "playing on",
                                                 "playing with",
                                                 "pouring",
                                                 "reaching for",
                                                 "reading",
                                                 "reflected on",
                                                 "riding on",
                                                 "running in",
                                                 "running on",
                                                 "running through",
                                                 "seen through",
                                                 "sitting behind",
                                                 "sitting beside",
                                                 "sitting by",
                                                 "sitting in front of",
                                                 "sitting near",
                                                 "sitting next to",
                                                 "sitting under",
                                                 "skiing down",
                                                 "skiing on",
                                                 "sleeping in",
                                                 "sleeping on",
                                                 "smiling at",
                                                 "sniffing",
                                                 "splashing",
                                                 "sprinkled on",
                                                 "stacked on",
                                                 "standing against",
                                                 "standing around",
                                                 "standing behind",
                                                 "standing beside",
                                                 "standing in front of",
                                                 "standing near",
                                                 "standing next to",
                                                 "staring at",
                                                 "stuck in",
                                                 "surrounding",
                                                 "swimming in",
                                                 "swinging",
                                                 "talking to",
                                                 "topped with",
                                                 "touching",
                                                 "traveling down",
                                                 "traveling on",
                                                 "tying",
                                                 "typing on",
                                                 "underneath",
                                                 "wading in",
                                                 "waiting for",
                                                 "walking across",
                                                 "walking by",
                                                 "walking down",
                                                 "walking next to",
                                                 "walking through",
                                                 "working in",
                                                 "working on",
                                                 "worn on",
                                                 "wrapped around",
                                                 "wrapped in",
                                                 "by",
                                                 "of",
                                                 "near",
                                                 "next to",
                                                 "with",
                                                 "beside",
                                                 "on the side of",
                                                 "around"};
  return names;
}

namespace {

std::string string_field(const nlohmann::json& v, const char* field, const fs::path& file,
                         const std::string& where) {
  const auto it = v.find(field);
  if (it == v.end() || !it->is_string() || it->get<std::string>().empty()) {
    throw InputError({file.string(), 0, where + "." + field}, "expected a non-empty string");
  }
  return it->get<std::string>();
}

double number_field(const nlohmann::json& v, const char* field, const fs::path& file,
                    const std::string& where) {
  const auto it = v.find(field);
  if (it == v.end() || !it->is_number()) {
    throw InputError({file.string(), 0, where + "." + field}, "expected a number");
  }
  return it->get<double>();
}

void read_subset(const fs::path& file, const std::string& subset, AroDataset& d) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_text_file(file, {TextLimits::kMiB * 256, 0}));
  } catch (const nlohmann::json::exception& e) {
    throw InputError({file.string(), 0, ""}, std::string("malformed JSON: ") + e.what());
  }
  if (!j.is_array() || j.empty()) {
    throw InputError({file.string(), 0, ""}, "expected a JSON list of items");
  }
  const bool relation = subset == "vg_relation";
  for (std::size_t i = 0; i < j.size(); ++i) {
    const auto& v = j[i];
    const std::string where = std::to_string(i);
    if (!v.is_object()) throw InputError({file.string(), 0, where}, "expected an object");
    AroItem item;
    item.subset = subset;
    item.index = i;
    item.image_path = string_field(v, "image_path", file, where);
    item.image = d.images / item.image_path;
    item.true_caption = string_field(v, "true_caption", file, where);
    item.false_caption = string_field(v, "false_caption", file, where);
    item.bbox_x = number_field(v, "bbox_x", file, where);
    item.bbox_y = number_field(v, "bbox_y", file, where);
    item.bbox_w = number_field(v, "bbox_w", file, where);
    item.bbox_h = number_field(v, "bbox_h", file, where);
    if (!(item.bbox_w > 0) || !(item.bbox_h > 0)) {
      throw InputError({file.string(), 0, where + (item.bbox_w > 0 ? ".bbox_h" : ".bbox_w")},
                       "expected a box of positive width and height (the image is cropped to "
                       "it)");
    }
    if (relation) {
      item.group = string_field(v, "relation_name", file, where);
    } else {
      const auto a = v.find("attributes");
      if (a == v.end() || !a->is_array() || a->size() < 2 || !(*a)[0].is_string() ||
          !(*a)[1].is_string()) {
        throw InputError({file.string(), 0, where + ".attributes"},
                         "expected a list of two attribute strings");
      }
      item.group = (*a)[0].get<std::string>() + "_" + (*a)[1].get<std::string>();
    }
    d.items.push_back(std::move(item));
  }
  d.files.push_back(file);
}

}  // namespace

AroDataset load_aro(const fs::path& path, const fs::path& images) {
  SubsetLayout layout{"ARO annotation file",
                      {},
                      "the release's folder has visual_genome_relation.json and "
                      "visual_genome_attribution.json; to run one subset, pass its file",
                      "the release's files are visual_genome_relation.json and "
                      "visual_genome_attribution.json",
                      {},
                      {}};
  for (const std::string& s : aro_subsets())
    layout.subsets.emplace_back(s, std::vector<std::string>{aro_file(s)});
  const std::vector<SubsetFile> found = find_subset_files(path, layout);
  AroDataset d;
  d.root = path;
  d.images = images.empty() ? found.front().file.parent_path() / "images" : images;
  for (const SubsetFile& f : found)
    read_subset(f.file, f.subset, d);
  d.sha256 = sha256_of_files(d.files);
  return d;
}

}  // namespace winokit
