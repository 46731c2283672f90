// Every family's checkpoint configuration parsing. The first byte (modulo the number of
// families) picks the family: 0 CLIP config.json (Hugging Face), 1 CLIP open_clip_config.json
// (OpenCLIP), then ViLT, FLAVA, SigLIP, BLIP, GPT-2, Llama / Qwen2 (the decoders' config.json),
// SmolVLM and LLaVA-OneVision. For 0 and 1 the rest is the one file; for the others it is
// config.json, and what follows its first NUL byte (if any) is preprocessor_config.json.
#include <array>
#include <functional>

#include "fuzz_common.hpp"
#include "model/families/blip/blip_model.hpp"
#include "model/families/clip/clip_model.hpp"
#include "model/families/flava/flava_model.hpp"
#include "model/families/llava_onevision/llava_onevision_model.hpp"
#include "model/families/siglip/siglip_model.hpp"
#include "model/families/smolvlm/smolvlm_model.hpp"
#include "model/families/vilt/vilt_model.hpp"
#include "model/lm/llama_model.hpp"
#include "model/runtime/checkpoint.hpp"
#include "winokit/model/gpt2_model.hpp"

namespace fs = std::filesystem;

namespace {

struct Family {
  const char* folder;
  const char* file;   // where the bytes (before a NUL) go
  bool preprocessor;  // the bytes after the first NUL are preprocessor_config.json
  std::function<void(const fs::path&)> parse;
};

const std::array<Family, 10>& families() {
  static const std::array<Family, 10> table = {{
      {"hf", "config.json", false, [](const fs::path& d) { (void)winokit::load_clip_config(d); }},
      {"openclip", "open_clip_config.json", false,
       [](const fs::path& d) { (void)winokit::load_clip_config(d); }},
      {"vilt", "config.json", true, [](const fs::path& d) { (void)winokit::load_vilt_config(d); }},
      {"flava", "config.json", true,
       [](const fs::path& d) { (void)winokit::load_flava_config(d); }},
      {"siglip", "config.json", true,
       [](const fs::path& d) { (void)winokit::load_siglip_config(d); }},
      {"blip", "config.json", true, [](const fs::path& d) { (void)winokit::load_blip_config(d); }},
      {"gpt2", "config.json", false, [](const fs::path& d) { (void)winokit::load_gpt2_config(d); }},
      {"llama", "config.json", false,
       [](const fs::path& d) {
         (void)winokit::llama_config_from_json(winokit::detail::read_config_json(d / "config.json"),
                                               (d / "config.json").string());
       }},
      {"smolvlm", "config.json", true,
       [](const fs::path& d) { (void)winokit::load_smolvlm_config(d); }},
      {"llava", "config.json", true,
       [](const fs::path& d) { (void)winokit::load_llava_onevision_config(d); }},
  }};
  return table;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const Family& family = families()[data[0] % families().size()];
  const fs::path dir = winokit::fuzz::scratch_dir() / family.folder;
  static const bool made = [] {
    for (const Family& f : families())
      fs::create_directories(winokit::fuzz::scratch_dir() / f.folder);
    return true;
  }();
  (void)made;
  std::string_view text = winokit::fuzz::bytes(data + 1, size - 1);
  std::string_view preprocessor;
  bool has_preprocessor = false;
  if (family.preprocessor) {
    if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
      preprocessor = text.substr(nul + 1);
      text = text.substr(0, nul);
      has_preprocessor = true;
    }
  }
  const std::string folder = family.folder;
  winokit::fuzz::write_input(text, folder + "/" + family.file);
  if (has_preprocessor) {
    winokit::fuzz::write_input(preprocessor, folder + "/preprocessor_config.json");
  } else {
    std::error_code ec;
    fs::remove(dir / "preprocessor_config.json", ec);
  }
  winokit::fuzz::expect_typed_errors([&] { family.parse(dir); });
  return 0;
}
