#include "winokit/tag_set.hpp"

#include "winokit/error.hpp"
#include "winokit/files.hpp"
#include "winokit/hash.hpp"
#include "winokit/text.hpp"

namespace winokit {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Line of the first occurrence of "key": in the text (JSON objects keep no positions).
std::size_t line_of_key(const std::string& text, const std::string& key) {
  auto pos = text.find("\"" + key + "\"");
  if (pos == std::string::npos) return 0;
  std::size_t line = 1;
  for (std::size_t i = 0; i < pos; ++i)
    line += text[i] == '\n';
  return line;
}

// Splits "NAME=FILE" when the part before '=' is not itself an existing path.
std::pair<std::string, std::string> split_spec(const std::string& spec) {
  auto eq = spec.find('=');
  if (eq == std::string::npos || eq == 0 || fs::exists(spec)) return {"", spec};
  return {spec.substr(0, eq), spec.substr(eq + 1)};
}

}  // namespace

TagSet load_tag_set(const std::string& spec, const Dataset& dataset) {
  auto [name, file] = split_spec(spec);
  TagSet set;
  set.file = file;
  set.name = name.empty() ? fs::path(file).stem().string() : name;
  std::string text = read_file(file);
  set.sha256 = sha256_hex(text);
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    std::size_t line = 1;
    for (std::size_t i = 0; i < e.byte && i < text.size(); ++i)
      line += text[i] == '\n';
    throw InputError({file, line, ""}, std::string("malformed JSON: ") + e.what());
  }
  if (!doc.is_object()) {
    throw InputError({file, 0, ""}, "expected a JSON object mapping example id to a list of tags");
  }
  set.tags.assign(dataset.examples.size(), std::nullopt);
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    Location where{file, line_of_key(text, it.key()), it.key()};
    auto index = dataset.find(it.key());
    if (!index) {
      throw InputError(where, "unknown example id '" + it.key() + "'",
                       "the id is not in " + dataset.examples_path.string());
    }
    if (!it.value().is_array()) throw InputError(where, "expected a list of tags");
    std::vector<std::string> tags;
    for (const auto& tag : it.value()) {
      if (!tag.is_string() || trim(tag.get<std::string>()).empty()) {
        throw InputError(where, "every tag must be a non-empty string");
      }
      tags.emplace_back(trim(tag.get<std::string>()));
    }
    set.tags[*index] = std::move(tags);
  }
  return set;
}

}  // namespace winokit
