#include "winokit/data/tag_set.hpp"

#include <algorithm>

#include "winokit/core/error.hpp"
#include "winokit/core/hash.hpp"
#include "winokit/core/text.hpp"
#include "winokit/io/files.hpp"

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

TagSet load_tag_set(const std::string& spec, const WinogroundDataset& dataset) {
  auto [name, file] = split_spec(spec);
  TagSet set;
  set.file = file;
  set.name = name.empty() ? fs::path(file).stem().string() : name;
  // One JSON object, possibly on one line: a file cap, no line cap.
  std::string text =
      read_text_file(file, {.max_file_bytes = 64 * TextLimits::kMiB, .max_line_bytes = 0});
  set.sha256 = sha256_hex(text);
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    std::size_t line = 1;
    for (std::size_t i = 0; i < e.byte && i < text.size(); ++i)
      line += text[i] == '\n';
    throw InputError({file, line, ""}, std::string("malformed JSON: ") + e.what());
  } catch (const json::exception& e) {
    // out_of_range.406 ("number overflow parsing '1e400'") gives no position: find the number.
    std::string what = e.what();
    if (auto close = what.find("] "); close != std::string::npos) what = what.substr(close + 2);
    std::size_t line = 0;
    const auto open = what.find('\''), close = what.rfind('\'');
    if (open != std::string::npos && close > open + 1) {
      if (auto pos = text.find(what.substr(open + 1, close - open - 1)); pos != text.npos) {
        line = 1;
        for (std::size_t i = 0; i < pos; ++i)
          line += text[i] == '\n';
      }
    }
    throw InputError({file, line, ""}, "number out of range: " + what);
  }
  if (!doc.is_object()) {
    throw InputError({file, 0, ""}, "expected a JSON object mapping example id to a list of tags");
  }
  set.tags.assign(dataset.examples.size(), std::nullopt);
  std::optional<Location> first_unknown;
  std::string first_unknown_id;
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    Location where{file, line_of_key(text, it.key()), it.key()};
    auto index = dataset.find(it.key());
    if (!index) {
      if (!first_unknown) {
        first_unknown = where;
        first_unknown_id = it.key();
      }
      ++set.ignored_ids;
      continue;
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
  if (first_unknown) {
    const auto missing =
        static_cast<std::size_t>(std::count(set.tags.begin(), set.tags.end(), std::nullopt));
    if (missing > 0) {
      throw InputError(*first_unknown,
                       "unknown example id '" + first_unknown_id + "' (" +
                           std::to_string(set.ignored_ids) + " ids not in the dataset, and " +
                           std::to_string(missing) + " of its " +
                           std::to_string(dataset.examples.size()) + " examples not in the file)",
                       "the file is for another dataset than " + dataset.examples_path.string() +
                           "; a file for a larger set is read when it covers every example");
    }
  }
  return set;
}

}  // namespace winokit
