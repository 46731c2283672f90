// Image decoding (PNG, JPEG, WebP; the format sniffed from the bytes), as the CLI decodes a
// dataset's images before preprocessing them.
#include "fuzz_common.hpp"
#include "winokit/io/image_decode.hpp"
#include "winokit/model/preprocess.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(winokit::fuzz::bytes(data, size));
  winokit::fuzz::expect_typed_errors([&] {
    winokit::DecodedImage im = winokit::decode_image(bytes, "fuzz-image");
    if (im.width <= 0 || im.height <= 0) std::abort();
    const std::size_t pixels = static_cast<std::size_t>(im.width) * im.height;
    const std::size_t have = im.mode == winokit::PixelMode::I ? im.wide.size() : im.pixels.size();
    if (have != pixels * static_cast<std::size_t>(winokit::channels(im.mode))) std::abort();
    if (im.mode == winokit::PixelMode::P) {
      for (std::uint8_t index : im.pixels) {
        if (index >= im.palette.size()) std::abort();  // every index names a palette entry
      }
    }
  });
  return 0;
}
