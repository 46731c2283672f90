#include "winokit/data/winoground.hpp"

#include <algorithm>

#include "winokit/core/error.hpp"
#include "winokit/core/hash.hpp"
#include "winokit/core/text.hpp"
#include "winokit/io/files.hpp"
#include "winokit/io/image_store.hpp"

namespace winokit {

namespace fs = std::filesystem;
using nlohmann::json;

std::optional<std::string> id_text(const json& value) {
  if (value.is_number_integer()) return std::to_string(value.get<long long>());
  if (value.is_number_unsigned()) return std::to_string(value.get<unsigned long long>());
  if (value.is_string()) {
    std::string s = value.get<std::string>();
    if (trim(s).empty()) return std::nullopt;
    return s;
  }
  return std::nullopt;
}

std::vector<std::size_t> WinogroundDataset::id_order() const {
  std::vector<std::size_t> order(examples.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  if (numeric_ids) {
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return *parse_int(examples[a].id) < *parse_int(examples[b].id);
    });
  } else {
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return examples[a].id < examples[b].id; });
  }
  return order;
}

std::optional<std::size_t> WinogroundDataset::find(const std::string& id) const {
  auto it = index_by_id.find(id);
  if (it == index_by_id.end()) return std::nullopt;
  return it->second;
}

namespace {

const std::string& required_string(const json& obj, const char* field, const Location& where) {
  auto it = obj.find(field);
  if (it == obj.end()) throw InputError({where.file, where.line, field}, "missing");
  if (!it->is_string()) {
    throw InputError({where.file, where.line, field},
                     std::string("expected a string, found ") + it->type_name());
  }
  return it->get_ref<const std::string&>();
}

std::string optional_string(const json& obj, const char* field, const Location& where) {
  auto it = obj.find(field);
  if (it == obj.end() || it->is_null()) return {};
  if (!it->is_string()) {
    throw InputError({where.file, where.line, field},
                     std::string("expected a string, found ") + it->type_name());
  }
  return it->get<std::string>();
}

// nlohmann's message without its "[json.exception.parse_error.101] " prefix.
std::string json_problem(const json::exception& e) {
  std::string what = e.what();
  if (auto close = what.find("] "); what.rfind("[json.exception.", 0) == 0 && close != what.npos) {
    what = what.substr(close + 2);
  }
  if (e.id == 406) return "number out of range: " + what;  // "number overflow parsing '1e400'"
  return "malformed JSON: " + what;
}

void check_image_name(const std::string& name, const Location& where) {
  if (!normalize_image_name(name)) {
    throw InputError(where, "'" + name + "' is not a name inside the image folder",
                     "image names are relative to images/ (or images.zip) and cannot leave it");
  }
}

fs::file_status status_of(const fs::path& p) {
  std::error_code ec;
  fs::file_status st = fs::status(p, ec);
  if (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory) {
    throw IoError(p.string() + ": " + ec.message());
  }
  return st;
}

}  // namespace

WinogroundDataset parse_examples(const std::string& text, const std::string& file) {
  WinogroundDataset ds;
  auto lines = split_lines(strip_bom(text));
  for (std::size_t n = 0; n < lines.size(); ++n) {
    std::string_view line = trim(lines[n]);
    if (line.empty()) continue;
    Location where{file, n + 1, ""};
    if (!is_valid_utf8(line)) throw InputError(where, "invalid UTF-8");
    json obj;
    try {
      obj = json::parse(line);
    } catch (const json::exception& e) {
      throw InputError(where, json_problem(e));
    }
    if (!obj.is_object()) throw InputError(where, "expected a JSON object");
    WinogroundExample ex;
    ex.line = n + 1;
    auto id_it = obj.find("id");
    if (id_it == obj.end()) throw InputError({file, n + 1, "id"}, "missing");
    auto id = id_text(*id_it);
    if (!id) throw InputError({file, n + 1, "id"}, "expected an integer or a non-empty string");
    ex.id = *id;
    if (!id_it->is_number_integer() && !id_it->is_number_unsigned()) ds.numeric_ids = false;
    ex.captions[0] = required_string(obj, "caption_0", where);
    ex.captions[1] = required_string(obj, "caption_1", where);
    ex.images[0] = required_string(obj, "image_0", where);
    ex.images[1] = required_string(obj, "image_1", where);
    check_image_name(ex.images[0], {file, n + 1, "image_0"});
    check_image_name(ex.images[1], {file, n + 1, "image_1"});
    ex.tag = optional_string(obj, "tag", where);
    ex.collapsed_tag = optional_string(obj, "collapsed_tag", where);
    if (auto it = obj.find("secondary_tag"); it != obj.end() && !it->is_null()) {
      if (it->is_string()) {
        ex.secondary_tag_raw = it->get<std::string>();
        ex.secondary_tags = split_trimmed(ex.secondary_tag_raw, ',');
      } else if (it->is_array()) {
        for (const auto& v : *it) {
          if (!v.is_string()) {
            throw InputError({file, n + 1, "secondary_tag"}, "list entries must be strings");
          }
          ex.secondary_tags.push_back(std::string(trim(v.get<std::string>())));
        }
        for (std::size_t k = 0; k < ex.secondary_tags.size(); ++k) {
          ex.secondary_tag_raw += (k ? ", " : "") + ex.secondary_tags[k];
        }
      } else {
        throw InputError({file, n + 1, "secondary_tag"},
                         std::string("expected a string, found ") + it->type_name());
      }
    }
    if (auto it = obj.find("num_main_preds"); it != obj.end() && !it->is_null()) {
      std::optional<long long> value;
      if (it->is_number_integer() || it->is_number_unsigned()) value = it->get<long long>();
      if (it->is_string()) value = parse_int(it->get<std::string>());
      if (!value || *value < 1) {
        throw InputError({file, n + 1, "num_main_preds"}, "expected a positive integer");
      }
      ex.num_main_preds = static_cast<int>(*value);
    }
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      static const std::array<const char*, 9> kKnown = {
          "id",  "caption_0",     "caption_1",      "image_0",      "image_1",
          "tag", "secondary_tag", "num_main_preds", "collapsed_tag"};
      if (std::find_if(kKnown.begin(), kKnown.end(),
                       [&](const char* k) { return it.key() == k; }) == kKnown.end()) {
        ex.extra[it.key()] = it.value();
      }
    }
    if (ds.index_by_id.count(ex.id)) {
      const auto& first = ds.examples[ds.index_by_id[ex.id]];
      throw InputError({file, n + 1, "id"}, "duplicate id " + ex.id + " (first on line " +
                                                std::to_string(first.line) + ")");
    }
    ds.index_by_id.emplace(ex.id, ds.examples.size());
    ds.examples.push_back(std::move(ex));
  }
  if (ds.examples.empty()) throw InputError({file, 0, ""}, "no examples");
  return ds;
}

WinogroundDataset load_dataset(const fs::path& path) {
  fs::path examples;
  if (fs::is_regular_file(status_of(path))) {
    examples = path;
  } else if (fs::is_regular_file(status_of(path / "examples.jsonl"))) {
    examples = path / "examples.jsonl";
  } else if (fs::is_regular_file(status_of(path / "data" / "examples.jsonl"))) {
    examples = path / "data" / "examples.jsonl";
  } else if (!fs::exists(status_of(path))) {
    throw IoError(path.string() + ": not found", "pass the Winoground dataset folder with --data");
  } else {
    throw IoError(path.string() + ": no examples.jsonl (looked in " + path.string() + " and " +
                      (path / "data").string() + ")",
                  "pass the folder that holds examples.jsonl, or a clone with data/");
  }
  std::string text = read_text_file(examples);
  WinogroundDataset ds = parse_examples(text, examples.string());
  ds.examples_path = examples;
  ds.root = examples.parent_path().empty() ? fs::path(".") : examples.parent_path();
  ds.examples_sha256 = sha256_hex(text);
  return ds;
}

}  // namespace winokit
