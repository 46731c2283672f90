// Content hashes recorded in every result file so a run can be reproduced and checked.
//
//   std::string h = winokit::sha256_hex(bytes);          // 64 lowercase hex digits
//   std::string f = winokit::sha256_file("scores.jsonl");
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace winokit {

std::string sha256_hex(std::string_view bytes);
std::string sha256_file(const std::filesystem::path& path);

// 64-bit FNV-1a, used to derive per-group random streams from names (stable across platforms).
std::uint64_t fnv1a64(std::string_view text);

}  // namespace winokit
