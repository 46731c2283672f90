#include "winokit/eval/scores.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>

#include "winokit/core/error.hpp"
#include "winokit/core/hash.hpp"
#include "winokit/core/text.hpp"
#include "winokit/io/files.hpp"
#include "winokit/io/table.hpp"

namespace winokit {

using nlohmann::json;

const char* pair_label(std::size_t index) {
  static constexpr std::array<const char*, 4> kLabels = {"c0_i0", "c0_i1", "c1_i0", "c1_i1"};
  return kLabels.at(index);
}

const char* to_string(ScoresFormat format) {
  switch (format) {
    case ScoresFormat::OfficialJsonl:
      return "official-jsonl";
    case ScoresFormat::PerExampleJsonl:
      return "per-example-jsonl";
    case ScoresFormat::Table:
      return "table";
  }
  return "unknown";
}

namespace {

// Collects scores and reports duplicates and gaps.
class Collector {
 public:
  Collector(const WinogroundDataset& dataset, std::string file)
      : dataset_(dataset), file_(std::move(file)), values_(dataset.examples.size()) {}

  void put(const std::string& id, std::size_t pair, double value, std::size_t line,
           const std::string& field) {
    auto index = dataset_.find(id);
    if (!index) {
      throw InputError({file_, line, field}, "unknown example id '" + id + "'",
                       "the id is not in " + dataset_.examples_path.string());
    }
    if (!std::isfinite(value)) {
      throw InputError({file_, line, field}, "non-finite score for " + id + "_" + pair_label(pair));
    }
    auto& slot = values_[*index][pair];
    if (slot.line != 0) {
      throw InputError({file_, line, field}, "duplicate score for " + id + "_" + pair_label(pair) +
                                                 " (first on line " + std::to_string(slot.line) +
                                                 ")");
    }
    slot.value = value;
    slot.line = line;
  }

  std::vector<WinogroundScores> finish() const {
    std::vector<WinogroundScores> out(values_.size());
    for (std::size_t i = 0; i < values_.size(); ++i) {
      for (std::size_t p = 0; p < 4; ++p) {
        if (values_[i][p].line == 0) {
          throw InputError({file_, 0, ""}, "missing score for " + dataset_.examples[i].id + "_" +
                                               pair_label(p) + " (example " +
                                               dataset_.examples[i].id + " of " +
                                               dataset_.examples_path.string() + ")");
        }
        out[i].s[p] = values_[i][p].value;
      }
    }
    return out;
  }

 private:
  struct Slot {
    double value = 0;
    std::size_t line = 0;
  };
  const WinogroundDataset& dataset_;
  std::string file_;
  std::vector<std::array<Slot, 4>> values_;
};

std::optional<std::size_t> parse_pair_suffix(std::string_view c, std::string_view i) {
  if (c.size() != 2 || i.size() != 2 || c[0] != 'c' || i[0] != 'i') return std::nullopt;
  if ((c[1] != '0' && c[1] != '1') || (i[1] != '0' && i[1] != '1')) return std::nullopt;
  return pair_index(c[1] - '0', i[1] - '0');
}

double json_number(const json& v, const Location& where) {
  if (v.is_number()) return v.get<double>();
  // Python's json.dumps writes NaN / Infinity literals, which are not JSON; strings are
  // accepted so that such values are reported as non-finite rather than as syntax errors.
  if (v.is_string()) {
    auto parsed = parse_double(v.get<std::string>());
    if (parsed) return *parsed;
  }
  throw InputError(where, std::string("expected a number, found ") + v.type_name());
}

json parse_line(std::string_view line, const Location& where) {
  try {
    return json::parse(line);
  } catch (const json::parse_error& e) {
    // NaN / Infinity written by Python's json module: report them as non-finite scores.
    if (line.find("NaN") != std::string_view::npos ||
        line.find("Infinity") != std::string_view::npos) {
      throw InputError({where.file, where.line, "score"}, "non-finite score (NaN or Infinity)");
    }
    throw InputError(where, std::string("malformed JSON: ") + e.what());
  } catch (const json::exception& e) {
    // out_of_range.406: a number beyond a double ("score": 1e400).
    std::string what = e.what();
    if (auto close = what.find("] "); close != std::string::npos) what = what.substr(close + 2);
    throw InputError(where, "number out of range: " + what);
  }
}

void read_official(const std::vector<std::string_view>& lines, Collector& out,
                   const std::string& file) {
  for (std::size_t n = 0; n < lines.size(); ++n) {
    auto line = trim(lines[n]);
    if (line.empty()) continue;
    Location where{file, n + 1, ""};
    json obj = parse_line(line, where);
    if (!obj.is_object()) throw InputError(where, "expected a JSON object");
    auto label_it = obj.find("label");
    if (label_it == obj.end() || !label_it->is_string()) {
      throw InputError({file, n + 1, "label"}, "missing or not a string");
    }
    const std::string label = label_it->get<std::string>();
    auto last = label.rfind('_');
    auto before =
        last == std::string::npos || last == 0 ? std::string::npos : label.rfind('_', last - 1);
    std::optional<std::size_t> pair;
    if (before != std::string::npos && before > 0) {
      pair = parse_pair_suffix(std::string_view(label).substr(before + 1, last - before - 1),
                               std::string_view(label).substr(last + 1));
    }
    if (!pair) {
      throw InputError({file, n + 1, "label"},
                       "malformed label '" + label + "' (expected <id>_c<j>_i<k>, j,k in {0,1})");
    }
    auto score_it = obj.find("score");
    if (score_it == obj.end()) throw InputError({file, n + 1, "score"}, "missing");
    double value = json_number(*score_it, {file, n + 1, "score"});
    out.put(label.substr(0, before), *pair, value, n + 1, "score");
  }
}

void read_per_example(const std::vector<std::string_view>& lines, Collector& out,
                      const std::string& file) {
  for (std::size_t n = 0; n < lines.size(); ++n) {
    auto line = trim(lines[n]);
    if (line.empty()) continue;
    Location where{file, n + 1, ""};
    json obj = parse_line(line, where);
    if (!obj.is_object()) throw InputError(where, "expected a JSON object");
    auto id_it = obj.find("id");
    if (id_it == obj.end()) throw InputError({file, n + 1, "id"}, "missing");
    auto id = id_text(*id_it);
    if (!id) throw InputError({file, n + 1, "id"}, "expected an integer or a string");
    auto scores_it = obj.find("scores");
    if (scores_it == obj.end() || !scores_it->is_object()) {
      throw InputError({file, n + 1, "scores"}, "missing or not an object");
    }
    for (std::size_t p = 0; p < 4; ++p) {
      std::string field = std::string("scores.") + pair_label(p);
      auto v = scores_it->find(pair_label(p));
      if (v == scores_it->end()) throw InputError({file, n + 1, field}, "missing");
      out.put(*id, p, json_number(*v, {file, n + 1, field}), n + 1, field);
    }
  }
}

// The published per-example score tables (baselines/*/..._scores.txt of
// nightingal3/winoground-project) are white-space separated with the header `ID tag
// secondary_tag num_main_preds collapsed_tag C0I0 C0I1 C1I0 C1I1`, but their tags hold spaces
// ("Negation, Scope") and may be empty (two spaces), so a row has as many fields as the words of
// its tags. When the header's first column is the id and its last four the four scores, each
// row's first field is the id and its last four fields the scores, whatever lies between.
// Returns the header positions of c0_i0 ... c1_i1 among the last four, or nullopt when the
// header is not laid out that way.
std::optional<std::array<std::size_t, 4>> id_first_scores_last(const Table& table,
                                                               std::size_t id_col) {
  const std::size_t n = table.header.size();
  if (id_col != 0 || n < 5) return std::nullopt;
  std::array<std::size_t, 4> cols{};
  std::array<bool, 4> seen{};
  for (std::size_t k = n - 4; k < n; ++k) {
    auto name = normalize_column_name(table.header[k]);
    std::optional<std::size_t> p;
    for (std::size_t q = 0; q < 4; ++q)
      if (name == normalize_column_name(pair_label(q))) p = q;
    if (!p || seen[*p]) return std::nullopt;
    seen[*p] = true;
    cols[*p] = k;
  }
  return cols;
}

void read_table_scores(std::string_view text, Collector& out, const std::string& file) {
  TableLimits limits;
  limits.ragged_whitespace_rows = true;
  Table table = read_table(text, file, limits);
  auto id_col = table.find_column({"id", "example_id", "example", "ex_id"});
  if (!id_col) {
    throw InputError({file, 1, "id"}, "the header has no id column",
                     "name it id, example_id or example");
  }
  std::array<std::size_t, 4> cols{};
  for (std::size_t p = 0; p < 4; ++p) {
    auto col = table.find_column({pair_label(p)});
    if (!col) {
      throw InputError({file, 1, pair_label(p)}, "the header has no score column",
                       "expected c0_i0, c0_i1, c1_i0, c1_i1 (or C0I0 ...)");
    }
    cols[p] = *col;
  }
  const std::size_t width = table.header.size();
  // Positional reading: only for white-space tables laid out as the published ones.
  std::optional<std::array<std::size_t, 4>> positional;
  if (table.format == TableFormat::Whitespace) positional = id_first_scores_last(table, *id_col);
  for (const auto& row : table.rows) {
    const std::size_t fields = row.cells.size();
    std::array<std::size_t, 4> at = cols;
    if (positional) {
      if (fields < 5) {
        throw InputError({file, row.line, ""}, "expected an id and four scores, found " +
                                                   std::to_string(fields) +
                                                   (fields == 1 ? " field" : " fields"));
      }
      // Same header position from the end: the k-th of the last four header columns is the
      // k-th of the row's last four fields.
      for (std::size_t p = 0; p < 4; ++p)
        at[p] = fields - (width - (*positional)[p]);
    } else if (fields != width) {
      throw InputError(
          {file, row.line, ""},
          "expected " + std::to_string(width) + " columns, found " + std::to_string(fields),
          "a white-space separated row with another number of fields is only read "
          "when the header's first column is the id and its last four are C0I0, "
          "C0I1, C1I0, C1I1 (the published score tables); otherwise quote the "
          "cells in a CSV");
    }
    std::string id(trim(row.cells[*id_col]));
    for (std::size_t p = 0; p < 4; ++p) {
      const std::string& cell = row.cells[at[p]];
      const std::string& column = table.header[cols[p]];
      auto value = parse_double(cell);
      if (!value) {
        throw InputError({file, row.line, column},
                         "not a number: '" + cell + "'" +
                             (positional ? " (the last four fields of a row are its scores)" : ""));
      }
      out.put(id, p, *value, row.line, column);
    }
  }
}

// A table's first line must be a header naming an id or a score column; anything else (an HTML
// page, a model's log) is not a scores file at all, whatever its column count.
void check_table_header(const std::vector<std::string_view>& lines, const std::string& file) {
  for (std::size_t n = 0; n < lines.size(); ++n) {
    auto line = trim(lines[n]);
    if (line.empty()) continue;
    std::string lower(line);
    for (auto& c : lower)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string squeezed;
    for (char c : lower)
      if (c != '_' && c != '-' && c != ' ') squeezed += c;
    const bool named = squeezed.find("c0i0") != std::string::npos ||
                       squeezed.find("id") != std::string::npos ||
                       squeezed.find("example") != std::string::npos;
    if (!named || lower.front() == '<') {
      throw InputError({file, n + 1, ""},
                       "not a recognised scores file (expected the official JSONL: "
                       "{\"label\": \"<id>_c0_i0\", \"score\": ...} per line; per-example "
                       "JSONL: {\"id\": ..., \"scores\": {\"c0_i0\": ..., ...}} per line; or a "
                       "CSV/TSV table with a header naming an id column and c0_i0, c0_i1, "
                       "c1_i0, c1_i1)");
    }
    return;
  }
}

ScoresFormat detect_format(const std::vector<std::string_view>& lines) {
  for (auto raw : lines) {
    auto line = trim(raw);
    if (line.empty()) continue;
    if (line.front() != '{') return ScoresFormat::Table;
    if (line.find("\"label\"") != std::string_view::npos) return ScoresFormat::OfficialJsonl;
    if (line.find("\"scores\"") != std::string_view::npos) return ScoresFormat::PerExampleJsonl;
    return ScoresFormat::OfficialJsonl;
  }
  return ScoresFormat::OfficialJsonl;
}

}  // namespace

LoadedScores parse_scores(const std::string& text, const std::string& file,
                          const WinogroundDataset& dataset) {
  LoadedScores loaded;
  loaded.file = file;
  loaded.sha256 = sha256_hex(text);
  // A UTF-8 byte order mark (Windows editors write one) is not part of the first line.
  const std::string_view body = strip_bom(text);
  if (!is_valid_utf8(body)) {
    auto lines = split_lines(body);
    for (std::size_t n = 0; n < lines.size(); ++n) {
      if (!is_valid_utf8(lines[n])) throw InputError({file, n + 1, ""}, "invalid UTF-8");
    }
  }
  auto lines = split_lines(body);
  loaded.format = detect_format(lines);
  if (std::all_of(lines.begin(), lines.end(), [](auto l) { return trim(l).empty(); })) {
    throw InputError({file, 0, ""}, "empty scores file");
  }
  Collector collector(dataset, file);
  switch (loaded.format) {
    case ScoresFormat::OfficialJsonl:
      read_official(lines, collector, file);
      break;
    case ScoresFormat::PerExampleJsonl:
      read_per_example(lines, collector, file);
      break;
    case ScoresFormat::Table:
      check_table_header(lines, file);
      read_table_scores(body, collector, file);
      break;
  }
  loaded.scores = collector.finish();
  return loaded;
}

LoadedScores load_scores(const std::string& file, const WinogroundDataset& dataset) {
  return parse_scores(read_text_file(file), file, dataset);
}

std::string official_scores_jsonl(const WinogroundDataset& dataset,
                                  const std::vector<WinogroundScores>& scores) {
  std::string out;
  for (std::size_t i = 0; i < dataset.examples.size(); ++i) {
    for (std::size_t p = 0; p < 4; ++p) {
      json line = {{"label", dataset.examples[i].id + "_" + pair_label(p)},
                   {"score", scores[i].s[p]}};
      out += line.dump();
      out += '\n';
    }
  }
  return out;
}

}  // namespace winokit
