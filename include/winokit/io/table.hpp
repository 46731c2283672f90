// Reads delimited tables: CSV (RFC 4180 quoting, fields may span lines) or white-space
// separated columns (spaces, tabs, no-break spaces), detected from the header line.
//
//   winokit::Table t = winokit::read_table(winokit::read_file("scores.csv"), "scores.csv");
//   auto id = t.find_column({"id"});            // case-insensitive, '_' and '-' ignored
//   for (const auto& row : t.rows) use(row.line, row.cells[*id]);
#pragma once

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(io);

namespace winokit {

enum class TableFormat { Csv, Whitespace };

struct TableRow {
  std::size_t line = 0;  // 1-based line where the record starts
  std::vector<std::string> cells;
};

struct Table {
  std::string file;
  TableFormat format = TableFormat::Csv;
  std::vector<std::string> header;
  std::vector<TableRow> rows;

  // Index of the first column whose normalised name equals one of `names` (normalised too).
  std::optional<std::size_t> find_column(std::initializer_list<std::string_view> names) const;
};

// Column names compare after lower-casing and removing '_', '-' and spaces: "C0I0" == "c0_i0".
std::string normalize_column_name(std::string_view name);

// Caps that keep a hostile table from taking memory far beyond its size.
struct TableLimits {
  std::size_t max_field_bytes = std::size_t{1} << 20;  // one cell, quoted lines included
  std::size_t max_columns = 4096;
  // White-space separated tables only: rows may have another number of fields than the header
  // (cells that are empty or hold spaces, as in the published Winoground score tables); the
  // caller then picks fields by position. CSV rows must still match the header.
  bool ragged_whitespace_rows = false;
};

// Throws InputError naming the file and line for unterminated quotes, ragged rows (as soon as
// one is read, unless `limits.ragged_whitespace_rows` allows them) and cells or headers beyond
// `limits`. A leading UTF-8 byte order mark is skipped.
Table read_table(std::string_view text, const std::string& file, const TableLimits& limits = {});

// Quotes a CSV field when needed (RFC 4180).
std::string csv_escape(std::string_view field);

}  // namespace winokit
