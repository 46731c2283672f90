// The WinoGAViL CSV reader, and a prediction column read from the same file.
#include "fuzz_common.hpp"
#include "winokit/data/winogavil.hpp"
#include "winokit/eval/association.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(winokit::fuzz::bytes(data, size));
  winokit::fuzz::expect_typed_errors([&] {
    winokit::AssociationDataset ds = winokit::parse_winogavil(text, "fuzz-winogavil.csv");
    for (const auto& inst : ds.instances) {
      if (inst.associations.empty() || inst.candidates.empty()) std::abort();
    }
    if (!ds.table.header.empty()) {
      (void)winokit::predictions_from_column(ds, ds.table.header.back());
    }
  });
  return 0;
}
