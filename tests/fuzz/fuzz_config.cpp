// CLIP checkpoint configuration parsing (load_clip_config): the input is written as config.json
// (Hugging Face) or open_clip_config.json (OpenCLIP), chosen by the first byte.
#include "fuzz_common.hpp"
#include "model/families/clip/clip_model.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static const auto dir = [] {
    auto hf = winokit::fuzz::scratch_dir() / "hf";
    auto oc = winokit::fuzz::scratch_dir() / "openclip";
    std::filesystem::create_directories(hf);
    std::filesystem::create_directories(oc);
    return std::pair{hf, oc};
  }();
  const bool openclip = (data[0] & 1) != 0;
  const auto& folder = openclip ? dir.second : dir.first;
  const auto text = winokit::fuzz::bytes(data + 1, size - 1);
  winokit::fuzz::write_input(text, openclip ? "openclip/open_clip_config.json" : "hf/config.json");
  winokit::fuzz::expect_typed_errors([&] { (void)winokit::load_clip_config(folder); });
  return 0;
}
