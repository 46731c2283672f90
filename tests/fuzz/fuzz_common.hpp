// Helpers shared by the libFuzzer targets (tests/fuzz/fuzz_<name>.cpp).
//
// A target feeds the bytes to one reader through its public API and accepts the library's typed
// errors (winokit::Error: InputError, IoError, UsageError) as the expected outcome of bad input.
// Anything else escaping (a std::out_of_range, a nlohmann exception, a crash, a sanitizer
// report, a leak, a timeout) is a finding.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include "winokit/core/error.hpp"

namespace winokit::fuzz {

inline std::string_view bytes(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Runs `body`, swallowing the library's typed errors only.
template <typename F>
void expect_typed_errors(F&& body) {
  try {
    body();
  } catch (const winokit::Error&) {
  }
}

// A private scratch folder (under $TMPDIR), removed at exit.
inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    std::string tmpl = (std::filesystem::temp_directory_path() / "winokit-fuzz-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) std::abort();
    std::filesystem::path p = tmpl;
    static const std::filesystem::path to_remove = p;
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(to_remove, ec);
    });
    return p;
  }();
  return dir;
}

// Writes the input to `name` in the scratch folder (readers that take a path).
inline std::filesystem::path write_input(std::string_view content, const std::string& name) {
  const auto path = scratch_dir() / name;
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) std::abort();
  if (!content.empty() && std::fwrite(content.data(), 1, content.size(), f) != content.size()) {
    std::abort();
  }
  std::fclose(f);
  return path;
}

}  // namespace winokit::fuzz
