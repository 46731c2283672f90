// Content hashes recorded in every result file so a run can be reproduced and checked.
//
//   std::string h = winokit::sha256_hex(bytes);          // 64 lowercase hex digits
//   (a file's hash: winokit::sha256_file in winokit/io/files.hpp)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(core);

namespace winokit {

std::string sha256_hex(std::string_view bytes);

// 64-bit FNV-1a, used to derive per-group random streams from names (stable across platforms).
std::uint64_t fnv1a64(std::string_view text);

}  // namespace winokit
