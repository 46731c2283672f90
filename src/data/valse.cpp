// VALSE's official piece files (data/valse.hpp), read as lxmert_valse_eval.py reads them.
#include "winokit/data/valse.hpp"

#include <nlohmann/json.hpp>

#include "winokit/core/error.hpp"
#include "winokit/data/subset_files.hpp"
#include "winokit/io/files.hpp"

namespace winokit {

namespace fs = std::filesystem;

const std::vector<std::string>& valse_pieces() {
  static const std::vector<std::string> names = {"existence",
                                                 "plurals",
                                                 "counting-hard",
                                                 "counting-small-quant",
                                                 "counting-adversarial",
                                                 "relations",
                                                 "action-replacement",
                                                 "actant-swap",
                                                 "coreference-standard",
                                                 "coreference-hard",
                                                 "foil-it"};
  return names;
}

std::string valse_image_folder(const std::string& piece) {
  if (piece == "existence" || piece.rfind("counting-", 0) == 0) return "visual7w/images";
  if (piece == "plurals") return "plurals/test_images";
  if (piece == "relations") return "relations/test_images";
  if (piece == "action-replacement" || piece == "actant-swap") return "actions/images_512";
  if (piece == "coreference-standard") return "coref/release_too_many_is_this_in_color/images";
  if (piece == "coreference-hard") return "coref/release_v18/test_images";
  if (piece == "foil-it") return "val2014";
  throw UsageError("unknown VALSE piece '" + piece + "'");
}

std::string valse_instrument(const std::string& piece) {
  if (piece.rfind("counting-", 0) == 0) return "counting";
  if (piece == "plurals") return "plurality";
  if (piece == "relations") return "spatial relations";
  if (piece == "action-replacement" || piece == "actant-swap") return "actions";
  if (piece.rfind("coreference-", 0) == 0) return "coreference";
  return piece;  // existence, foil-it
}

namespace {

std::string text_field(const nlohmann::json& v, const char* field, const fs::path& file,
                       const std::string& key) {
  const auto it = v.find(field);
  if (it == v.end() || !it->is_string() || it->get<std::string>().empty()) {
    throw InputError({file.string(), 0, key + "." + field}, "expected a non-empty string");
  }
  return it->get<std::string>();
}

void read_piece(const fs::path& file, const std::string& piece, ValseDataset& d) {
  nlohmann::ordered_json j;
  try {
    j = nlohmann::ordered_json::parse(read_text_file(file, {TextLimits::kMiB * 256, 0}));
  } catch (const nlohmann::json::exception& e) {
    throw InputError({file.string(), 0, ""}, std::string("malformed JSON: ") + e.what());
  }
  if (!j.is_object() || j.empty()) {
    throw InputError({file.string(), 0, ""},
                     "expected a JSON object of items ({\"ID\": {\"image_file\", \"caption\", "
                     "\"foil\", \"mturk\"}, ...})");
  }
  const fs::path folder = d.images / valse_image_folder(piece);
  for (const auto& [key, v] : j.items()) {
    if (!v.is_object()) throw InputError({file.string(), 0, key}, "expected an object");
    ValseItem item;
    item.piece = piece;
    item.key = key;
    item.image_file = text_field(v, "image_file", file, key);
    item.image = folder / item.image_file;
    item.caption = text_field(v, "caption", file, key);
    item.foil = text_field(v, "foil", file, key);
    const auto m = v.find("mturk");
    if (m == v.end() || !m->is_object() || !m->contains("caption") ||
        !(*m)["caption"].is_number_integer()) {
      throw InputError({file.string(), 0, key + ".mturk.caption"},
                       "expected the number of annotators who chose the caption");
    }
    item.mturk_caption = (*m)["caption"].get<int>();
    item.valid = item.mturk_caption >= 2;  // "valid examples only (validated by mturkers)"
    d.items.push_back(std::move(item));
  }
  d.files.push_back(file);
}

}  // namespace

ValseDataset load_valse(const fs::path& path, const fs::path& images) {
  SubsetLayout layout{"VALSE piece file",
                      {},
                      "the release's data/ folder has all 11; to run one piece, pass its file",
                      "the release's files are existence.json, plurals.json, counting-hard.json, "
                      "counting-small-quant.json, counting-adversarial.json, relations.json, "
                      "action-replacement.json, actant-swap.json, coreference-standard.json, "
                      "coreference-hard.json and foil-it.json",
                      {},
                      {}};
  for (const std::string& p : valse_pieces())
    layout.subsets.emplace_back(p, std::vector<std::string>{p + ".json"});
  const std::vector<SubsetFile> found = find_subset_files(path, layout);
  ValseDataset d;
  d.root = path;
  d.images = images.empty() ? found.front().file.parent_path() : images;
  for (const SubsetFile& f : found)
    read_piece(f.file, f.subset, d);
  d.sha256 = sha256_of_files(d.files);
  return d;
}

}  // namespace winokit
