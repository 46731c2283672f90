// The safetensors reader (header, offsets, dtypes, shapes), through SafeTensors::open on a file
// holding the input, then every tensor converted to float32.
#include "fuzz_common.hpp"
#include "winokit/io/safetensors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto path = winokit::fuzz::write_input(winokit::fuzz::bytes(data, size), "w.safetensors");
  winokit::fuzz::expect_typed_errors([&] {
    winokit::SafeTensors st = winokit::SafeTensors::open(path);
    for (const auto& [name, view] : st.tensors()) {
      if (view.dtype == winokit::DType::F32 || view.dtype == winokit::DType::F16 ||
          view.dtype == winokit::DType::BF16) {
        (void)st.to_float(name);
      }
    }
    (void)st.metadata();
  });
  return 0;
}
