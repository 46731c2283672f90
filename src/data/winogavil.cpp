#include "winokit/data/winogavil.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "winokit/core/error.hpp"
#include "winokit/core/hash.hpp"
#include "winokit/core/text.hpp"
#include "winokit/io/files.hpp"

namespace winokit {

using nlohmann::json;

std::optional<std::vector<std::string>> parse_name_list(std::string_view cell) {
  cell = trim(cell);
  if (cell.empty()) return std::vector<std::string>{};
  try {
    json j = json::parse(cell);
    if (!j.is_array()) return std::nullopt;
    std::vector<std::string> out;
    for (const auto& v : j) {
      if (!v.is_string()) return std::nullopt;
      out.push_back(v.get<std::string>());
    }
    return out;
  } catch (const json::exception&) {
    // Not JSON (parse_error), or a number beyond a double (out_of_range.406, found by
    // fuzz_winogavil): try the Python literal.
  }
  // Python literal: ['a', "b's"] with backslash escapes.
  if (cell.front() != '[' || cell.back() != ']') return std::nullopt;
  std::vector<std::string> out;
  std::size_t i = 1;
  const std::size_t end = cell.size() - 1;
  while (i < end) {
    while (i < end && (cell[i] == ' ' || cell[i] == ','))
      ++i;
    if (i >= end) break;
    const char quote = cell[i];
    if (quote != '\'' && quote != '"') return std::nullopt;
    std::string item;
    ++i;
    while (i < end && cell[i] != quote) {
      if (cell[i] == '\\' && i + 1 < end) ++i;
      item.push_back(cell[i++]);
    }
    if (i >= end) return std::nullopt;
    ++i;  // closing quote
    out.push_back(item);
  }
  return out;
}

namespace {

std::optional<double> optional_number(const Table& t, const TableRow& row,
                                      std::optional<std::size_t> col, double low, double high,
                                      const char* scale) {
  if (!col || trim(row.cells[*col]).empty()) return std::nullopt;
  auto v = parse_double(row.cells[*col]);
  if (!v || !std::isfinite(*v)) {
    throw InputError({t.file, row.line, t.header[*col]},
                     "not a finite number: '" + row.cells[*col] + "'");
  }
  if (*v < low || *v > high) {
    throw InputError({t.file, row.line, t.header[*col]},
                     "'" + row.cells[*col] + "' is outside " + scale,
                     "the published files write solvers' Jaccard on 0-1 and score_fool_the_ai "
                     "on 0-100");
  }
  return v;
}

void parse_types(AssociationInstance& inst, const std::string& cell, const Location& where) {
  if (trim(cell).empty()) return;
  json j;
  try {
    j = json::parse(cell);
  } catch (const json::exception& e) {  // parse_error, or out_of_range (1e400)
    throw InputError(where, std::string("malformed JSON object: ") + e.what());
  }
  if (!j.is_object()) throw InputError(where, "expected a JSON object candidate -> type");
  // The published analysis CSV maps each candidate to one type name, and a type name may hold a
  // comma ("Non Visual, Concept Related"): a string is one type; a list of strings is several.
  for (auto it = j.begin(); it != j.end(); ++it) {
    std::vector<std::string> types;
    if (it.value().is_string()) {
      types.emplace_back(trim(it.value().get<std::string>()));
    } else if (it.value().is_array()) {
      for (const auto& v : it.value()) {
        if (!v.is_string()) throw InputError(where, "association types must be strings");
        types.emplace_back(trim(v.get<std::string>()));
      }
    } else {
      throw InputError(
          where, "association type of '" + it.key() + "' must be a string or a list of strings");
    }
    std::erase_if(types, [](const std::string& t) { return t.empty(); });
    inst.association_types[it.key()] = std::move(types);
  }
}

}  // namespace

AssociationDataset parse_winogavil(const std::string& text, const std::string& file) {
  AssociationDataset ds;
  ds.file = file;
  ds.sha256 = sha256_hex(text);
  ds.table = read_table(text, file);
  const Table& t = ds.table;
  auto col = [&](const char* name) { return t.find_column({name}); };
  auto need = [&](const char* name) {
    auto c = col(name);
    if (!c) throw InputError({file, 1, name}, "column missing from the header");
    return *c;
  };
  const std::size_t c_cand = need("candidates"), c_cue = need("cue"),
                    c_assoc = need("associations");
  const auto c_id = col("ID"), c_k = col("num_associations"), c_n = col("num_candidates"),
             c_mean = col("solvers_jaccard_mean"), c_std = col("solvers_jaccard_std"),
             c_fool = col("score_fool_the_ai"), c_types = col("annotations_label");
  std::set<std::string> ids;
  for (std::size_t r = 0; r < t.rows.size(); ++r) {
    const TableRow& row = t.rows[r];
    AssociationInstance inst;
    inst.row = r;
    inst.line = row.line;
    inst.id = c_id ? std::string(trim(row.cells[*c_id])) : std::to_string(r);
    if (inst.id.empty()) throw InputError({file, row.line, "ID"}, "empty id");
    if (!ids.insert(inst.id).second)
      throw InputError({file, row.line, "ID"}, "duplicate id " + inst.id);
    inst.cue = std::string(trim(row.cells[c_cue]));
    if (inst.cue.empty()) throw InputError({file, row.line, "cue"}, "empty cue");
    // A control character (NUL, a line break from a quoted cell, ...) is no word, and would be
    // written raw into --predictions-out.
    if (std::any_of(inst.cue.begin(), inst.cue.end(),
                    [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; })) {
      throw InputError({file, row.line, "cue"}, "control character in the cue");
    }
    auto cands = parse_name_list(row.cells[c_cand]);
    if (!cands || cands->empty()) {
      throw InputError({file, row.line, "candidates"}, "expected a non-empty list of names");
    }
    auto gold = parse_name_list(row.cells[c_assoc]);
    if (!gold || gold->empty()) {
      throw InputError({file, row.line, "associations"}, "expected a non-empty list of names");
    }
    inst.candidates = *cands;
    inst.associations = *gold;
    std::set<std::string> unique(cands->begin(), cands->end());
    if (unique.size() != cands->size()) {
      throw InputError({file, row.line, "candidates"}, "a candidate appears twice");
    }
    for (const auto& g : *gold) {
      if (!unique.count(g)) {
        throw InputError({file, row.line, "associations"}, "'" + g + "' is not a candidate");
      }
    }
    if (c_k) {
      auto k = parse_int(row.cells[*c_k]);
      if (!k || *k != inst.k()) {
        throw InputError({file, row.line, "num_associations"},
                         "'" + row.cells[*c_k] + "' disagrees with the " +
                             std::to_string(inst.k()) + " associations listed");
      }
    }
    if (c_n) {
      auto n = parse_int(row.cells[*c_n]);
      if (!n || *n != inst.n()) {
        throw InputError({file, row.line, "num_candidates"},
                         "'" + row.cells[*c_n] + "' disagrees with the " +
                             std::to_string(inst.n()) + " candidates listed");
      }
    }
    // Published scales: solvers' Jaccard (and its spread) on 0-1, fool-the-AI on 0-100.
    inst.solvers_jaccard_mean = optional_number(t, row, c_mean, 0, 1, "the 0-1 scale");
    inst.solvers_jaccard_std = optional_number(t, row, c_std, 0, 1, "the 0-1 scale");
    inst.fool_the_ai = optional_number(t, row, c_fool, 0, 100, "the 0-100 scale");
    if (c_types) parse_types(inst, row.cells[*c_types], {file, row.line, "annotations_label"});
    ds.instances.push_back(std::move(inst));
  }
  if (ds.instances.empty()) throw InputError({file, 0, ""}, "no instances");
  return ds;
}

AssociationDataset load_winogavil(const std::string& csv) {
  return parse_winogavil(read_text_file(csv), csv);  // size and line caps
}

void load_association_types(AssociationDataset& ds, const std::string& file) {
  Table t = read_table(read_text_file(file), file);
  auto c_id = t.find_column({"ID"});
  auto c_types = t.find_column({"annotations_label"});
  if (!c_id || !c_types) {
    throw InputError({file, 1, ""}, "expected the columns ID and annotations_label");
  }
  std::map<std::string, AssociationInstance*> by_id;
  for (auto& inst : ds.instances)
    by_id[inst.id] = &inst;
  for (const auto& row : t.rows) {
    auto it = by_id.find(std::string(trim(row.cells[*c_id])));
    if (it == by_id.end()) {
      throw InputError({file, row.line, "ID"}, "unknown instance id '" + row.cells[*c_id] + "'");
    }
    parse_types(*it->second, row.cells[*c_types], {file, row.line, "annotations_label"});
  }
}

double jaccard(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::set<std::string> sa(a.begin(), a.end()), sb(b.begin(), b.end());
  std::size_t inter = 0;
  for (const auto& x : sa)
    inter += sb.count(x);
  const std::size_t uni = sa.size() + sb.size() - inter;
  return uni == 0 ? 1.0 : static_cast<double>(inter) / static_cast<double>(uni);
}

double expected_random_jaccard(int n, int k) {
  if (k <= 0 || n <= 0 || k > n) return 0.0;
  // log C(a, b) via lgamma, exact enough for n <= a few hundred.
  auto log_choose = [](int a, int b) {
    return std::lgamma(a + 1.0) - std::lgamma(b + 1.0) - std::lgamma(a - b + 1.0);
  };
  double expected = 0;
  for (int i = std::max(0, 2 * k - n); i <= k; ++i) {
    const double p = std::exp(log_choose(k, i) + log_choose(n - k, k - i) - log_choose(n, k));
    expected += p * i / (2.0 * k - i);
  }
  return expected;
}

std::vector<std::vector<std::string>> predictions_from_column(const AssociationDataset& ds,
                                                              const std::string& column) {
  auto c = ds.table.find_column({column});
  if (!c) {
    throw InputError(
        {ds.file, 1, column}, "no such column", "prediction columns here: " + [&] {
          std::string list;
          for (const auto& h : ds.table.header) {
            if (h.find("prediction") != std::string::npos) list += (list.empty() ? "" : ", ") + h;
          }
          return list.empty() ? std::string("none") : list;
        }());
  }
  std::vector<std::vector<std::string>> out;
  for (const auto& inst : ds.instances) {
    const TableRow& row = ds.table.rows[inst.row];
    auto p = parse_name_list(row.cells[*c]);
    if (!p) throw InputError({ds.file, row.line, column}, "expected a list of candidate names");
    std::set<std::string> cands(inst.candidates.begin(), inst.candidates.end());
    for (const auto& name : *p) {
      if (!cands.count(name)) {
        throw InputError({ds.file, row.line, column}, "'" + name + "' is not a candidate");
      }
    }
    out.push_back(std::move(*p));
  }
  return out;
}

}  // namespace winokit
