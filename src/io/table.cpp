#include "winokit/io/table.hpp"

#include "winokit/core/error.hpp"
#include "winokit/core/text.hpp"
#include "winokit/io/files.hpp"

namespace winokit {

std::string normalize_column_name(std::string_view name) {
  std::string out;
  for (char c : trim(name)) {
    if (c == '_' || c == '-' || c == ' ') continue;
    out.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
  }
  return out;
}

std::optional<std::size_t> Table::find_column(std::initializer_list<std::string_view> names) const {
  for (std::string_view wanted : names) {
    const std::string key = normalize_column_name(wanted);
    for (std::size_t i = 0; i < header.size(); ++i) {
      if (normalize_column_name(header[i]) == key) return i;
    }
  }
  return std::nullopt;
}

namespace {

std::string bytes_text(std::size_t bytes) {
  if (bytes % (std::size_t{1} << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes) + " bytes";
}

// Refuses a record as soon as it is read: too many columns, or not as many as the header.
void check_record(const std::vector<TableRow>& records, const TableRow& row,
                  const std::string& file, const TableLimits& limits, bool ragged = false) {
  if (row.cells.size() > limits.max_columns) {
    throw InputError({file, row.line, ""},
                     "more than " + std::to_string(limits.max_columns) + " columns");
  }
  if (!records.empty() && row.cells.size() != records.front().cells.size() && !ragged) {
    throw InputError({file, row.line, ""},
                     "expected " + std::to_string(records.front().cells.size()) +
                         " columns, found " + std::to_string(row.cells.size()));
  }
}

// Parses CSV records; each record remembers its starting line.
std::vector<TableRow> parse_csv(std::string_view text, const std::string& file,
                                const TableLimits& limits) {
  auto check_cell = [&](const std::string& cell, std::size_t line) {
    if (cell.size() > limits.max_field_bytes) {
      throw InputError({file, line, ""}, "a field longer than " +
                                             bytes_text(limits.max_field_bytes) +
                                             ", the limit for a table cell");
    }
  };
  std::vector<TableRow> records;
  std::size_t line = 1;
  std::size_t i = 0;
  // Skip a UTF-8 byte order mark.
  if (text.substr(0, 3) == "\xEF\xBB\xBF") i = 3;
  while (i < text.size()) {
    TableRow row;
    row.line = line;
    std::string cell;
    bool in_quotes = false;
    bool quoted = false;
    std::size_t quote_line = line;
    bool record_done = false;
    while (i < text.size() && !record_done) {
      char c = text[i];
      if (in_quotes) {
        if (c == '"') {
          if (i + 1 < text.size() && text[i + 1] == '"') {
            cell.push_back('"');
            i += 2;
            continue;
          }
          in_quotes = false;
          ++i;
          continue;
        }
        if (c == '\n') ++line;
        cell.push_back(c);
        check_cell(cell, quote_line);
        ++i;
        continue;
      }
      switch (c) {
        case '"':
          if (!trim(cell).empty()) {
            throw InputError({file, line, ""}, "stray quote inside an unquoted CSV field");
          }
          cell.clear();
          in_quotes = true;
          quoted = true;
          quote_line = line;
          ++i;
          break;
        case ',':
          row.cells.push_back(quoted ? cell : std::string(trim(cell)));
          cell.clear();
          quoted = false;
          if (row.cells.size() > limits.max_columns) check_record(records, row, file, limits);
          ++i;
          break;
        case '\r':
          ++i;
          break;
        case '\n':
          ++line;
          ++i;
          record_done = true;
          break;
        default:
          cell.push_back(c);
          check_cell(cell, line);
          ++i;
      }
    }
    if (in_quotes) {
      throw InputError({file, quote_line, ""}, "unterminated quoted CSV field");
    }
    row.cells.push_back(quoted ? cell : std::string(trim(cell)));
    bool blank = row.cells.size() == 1 && row.cells[0].empty();
    if (!blank) {
      check_record(records, row, file, limits);
      records.push_back(std::move(row));
    }
  }
  return records;
}

std::vector<TableRow> parse_whitespace(std::string_view text, const std::string& file,
                                       const TableLimits& limits) {
  std::vector<TableRow> records;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  auto lines = split_lines(text);
  for (std::size_t n = 0; n < lines.size(); ++n) {
    if (lines[n].size() > limits.max_field_bytes * 2) {
      throw InputError({file, n + 1, ""}, "a line longer than " +
                                              bytes_text(limits.max_field_bytes * 2) +
                                              ", the limit for a table line");
    }
    TableRow row{n + 1, split_whitespace(lines[n])};
    if (row.cells.empty()) continue;
    check_record(records, row, file, limits, limits.ragged_whitespace_rows);
    records.push_back(std::move(row));
  }
  return records;
}

}  // namespace

Table read_table(std::string_view text, const std::string& file, const TableLimits& limits) {
  Table table;
  table.file = file;
  std::string_view first_line;
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (start == 0) line = strip_bom(line);
    if (!trim(line).empty()) {
      first_line = line;
      break;
    }
    start = end + 1;
  }
  if (first_line.empty()) throw InputError({file, 0, ""}, "empty table: no header line");
  table.format =
      first_line.find(',') != std::string_view::npos ? TableFormat::Csv : TableFormat::Whitespace;
  auto records = table.format == TableFormat::Csv ? parse_csv(text, file, limits)
                                                  : parse_whitespace(text, file, limits);
  // A first line of only no-break spaces is blank to the parsers (found by fuzz_table).
  if (records.empty()) throw InputError({file, 0, ""}, "empty table: no header line");
  table.header = std::move(records.front().cells);
  for (std::size_t r = 1; r < records.size(); ++r) {
    const bool ragged_ok = table.format == TableFormat::Whitespace && limits.ragged_whitespace_rows;
    if (records[r].cells.size() != table.header.size() && !ragged_ok) {
      throw InputError({file, records[r].line, ""},
                       "expected " + std::to_string(table.header.size()) + " columns, found " +
                           std::to_string(records[r].cells.size()));
    }
    table.rows.push_back(std::move(records[r]));
  }
  return table;
}

std::string csv_escape(std::string_view field) {
  if (field.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(field);
  std::string out = "\"";
  for (char c : field) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

}  // namespace winokit
