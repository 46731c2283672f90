// The Winoground examples reader (examples.jsonl).
#include "fuzz_common.hpp"
#include "winokit/data/winoground.hpp"
#include "winokit/io/image_store.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(winokit::fuzz::bytes(data, size));
  winokit::fuzz::expect_typed_errors([&] {
    winokit::WinogroundDataset ds = winokit::parse_examples(text, "fuzz-examples.jsonl");
    for (const auto& ex : ds.examples) {
      // Every accepted image name stays inside the image folder.
      for (const auto& image : ex.images) {
        if (!winokit::normalize_image_name(image)) std::abort();
      }
      if (ds.find(ex.id) == std::nullopt) std::abort();
    }
    (void)ds.id_order();
  });
  return 0;
}
