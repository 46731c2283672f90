// The shared table reader (CSV with RFC 4180 quoting, or white-space columns).
#include "fuzz_common.hpp"
#include "winokit/io/table.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  winokit::fuzz::expect_typed_errors([&] {
    winokit::Table t = winokit::read_table(winokit::fuzz::bytes(data, size), "fuzz-table");
    for (const auto& row : t.rows) {
      if (row.cells.size() != t.header.size()) std::abort();  // ragged rows are refused
    }
    (void)t.find_column({"id", "c0_i0"});
  });
  return 0;
}
