#include "winokit/covariates.hpp"

#include <cmath>

#include "winokit/error.hpp"
#include "winokit/files.hpp"
#include "winokit/hash.hpp"
#include "winokit/table.hpp"
#include "winokit/text.hpp"

namespace winokit {

Covariate caption_length_covariate(const Dataset& dataset) {
  Covariate c;
  c.name = "mean caption length (words)";
  c.source = "built-in";
  for (const auto& ex : dataset.examples) {
    double words = static_cast<double>(count_words(ex.captions[0]) + count_words(ex.captions[1]));
    c.values.emplace_back(words / 2.0);
  }
  return c;
}

std::vector<Covariate> load_covariates(const std::string& file, const Dataset& dataset) {
  std::string text = read_file(file);
  Table table = read_table(text, file);
  auto id_col = table.find_column({"id", "example_id", "example"});
  if (!id_col) throw InputError({file, 1, "id"}, "no id column in the header");
  auto caption_col = table.find_column({"caption", "caption_index", "caption_idx"});
  std::vector<std::size_t> value_cols;
  for (std::size_t c = 0; c < table.header.size(); ++c) {
    if (c != *id_col && (!caption_col || c != *caption_col)) value_cols.push_back(c);
  }
  if (value_cols.empty()) throw InputError({file, 1, ""}, "no covariate column besides the id");
  const std::string hash = sha256_hex(text);
  const std::size_t n = dataset.examples.size();
  // sums[c][i][k]: value of column c for example i, caption k (k = 0 when per example).
  std::vector<std::vector<std::array<std::optional<double>, 2>>> seen(
      value_cols.size(), std::vector<std::array<std::optional<double>, 2>>(n));
  std::vector<std::array<std::size_t, 2>> seen_line(n, {0, 0});
  for (const auto& row : table.rows) {
    const std::string& id = row.cells[*id_col];
    auto index = dataset.find(std::string(trim(id)));
    if (!index) {
      throw InputError({file, row.line, table.header[*id_col]}, "unknown example id '" + id + "'");
    }
    std::size_t k = 0;
    if (caption_col) {
      auto ci = parse_int(row.cells[*caption_col]);
      if (!ci || (*ci != 0 && *ci != 1)) {
        throw InputError({file, row.line, table.header[*caption_col]}, "expected 0 or 1");
      }
      k = static_cast<std::size_t>(*ci);
    }
    if (seen_line[*index][k] != 0) {
      throw InputError({file, row.line, table.header[*id_col]},
                       "duplicate row for id " + id + " (first on line " +
                           std::to_string(seen_line[*index][k]) + ")");
    }
    seen_line[*index][k] = row.line;
    for (std::size_t c = 0; c < value_cols.size(); ++c) {
      const std::string& cell = row.cells[value_cols[c]];
      auto v = parse_double(cell);
      if (!v) {
        throw InputError({file, row.line, table.header[value_cols[c]]},
                         "not a number: '" + cell + "'");
      }
      if (!std::isfinite(*v)) {
        throw InputError({file, row.line, table.header[value_cols[c]]}, "non-finite value");
      }
      seen[c][*index][k] = *v;
    }
  }
  std::vector<Covariate> out;
  for (std::size_t c = 0; c < value_cols.size(); ++c) {
    Covariate cov;
    cov.name = table.header[value_cols[c]];
    cov.source = file;
    cov.sha256 = hash;
    cov.values.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      const auto& v = seen[c][i];
      if (!caption_col) {
        cov.values[i] = v[0];
      } else if (v[0] && v[1]) {
        cov.values[i] = (*v[0] + *v[1]) / 2.0;
      } else if (v[0] || v[1]) {
        throw InputError({file, seen_line[i][v[0] ? 0 : 1], cov.name},
                         "example " + dataset.examples[i].id + " has a value for one caption only");
      }
    }
    out.push_back(std::move(cov));
  }
  return out;
}

}  // namespace winokit
