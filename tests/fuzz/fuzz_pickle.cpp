// The restricted unpickler of PyTorch zip checkpoints (SafeTensors::open_torch). The input is
// the pickle (archive/data.pkl); the target wraps it in a zip with fixed storages archive/data/0
// .. archive/data/7 (1 KiB each) and a version record, so the fuzzer mutates pickle opcodes
// rather than zip structure.
#include <zip.h>

#include <vector>

#include "fuzz_common.hpp"
#include "winokit/io/safetensors.hpp"

namespace {

void add(zip_t* z, const std::string& name, const void* data, std::size_t size) {
  zip_source_t* src = zip_source_buffer(z, data, size, 0);
  if (src == nullptr || zip_file_add(z, name.c_str(), src, ZIP_FL_OVERWRITE) < 0) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::vector<std::uint8_t> storage = [] {
    std::vector<std::uint8_t> s(1024);
    for (std::size_t i = 0; i < s.size(); ++i)
      s[i] = static_cast<std::uint8_t>(i * 37 + 11);
    return s;
  }();
  const auto path = winokit::fuzz::scratch_dir() / "checkpoint.bin";
  int err = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  if (z == nullptr) std::abort();
  add(z, "archive/data.pkl", data, size);
  for (int k = 0; k < 8; ++k)
    add(z, "archive/data/" + std::to_string(k), storage.data(), storage.size());
  add(z, "archive/version", "3\n", 2);
  if (zip_close(z) != 0) std::abort();
  winokit::fuzz::expect_typed_errors([&] {
    winokit::SafeTensors st = winokit::SafeTensors::open_torch(path);
    for (const auto& [name, view] : st.tensors())
      (void)st.to_float(name);
  });
  return 0;
}
