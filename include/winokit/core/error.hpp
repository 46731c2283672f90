// Typed errors: the library never prints or exits; it throws these and tools/ turn them into
// messages and exit codes.
//
//   try {
//     auto ds = winokit::load_dataset("winoground/");
//   } catch (const winokit::InputError& e) {
//     std::cerr << e.what() << "\n";  // "data/examples.jsonl:12: field 'caption_0': missing"
//     return 2;
//   }
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(core);

namespace winokit {

// Where in an input the problem is. `line` is 1-based; 0 means "the whole file".
struct Location {
  std::string file;
  std::size_t line = 0;
  std::string field;
};

// Base class of every error the library throws on purpose.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, std::string hint = {});
  const std::string& hint() const noexcept { return hint_; }

 private:
  std::string hint_;
};

// The content of an input file is wrong (malformed line, missing field, duplicate score...).
class InputError : public Error {
 public:
  InputError(Location where, const std::string& problem, std::string hint = {});
  const Location& location() const noexcept { return where_; }
  const std::string& problem() const noexcept { return problem_; }

 private:
  Location where_;
  std::string problem_;
};

// A file cannot be found, opened, read or written.
class IoError : public Error {
 public:
  using Error::Error;
};

// A request that cannot be satisfied with the given options (e.g. an oracle on real data).
class UsageError : public Error {
 public:
  using Error::Error;
};

// Formats "file:line: field 'name': problem (hint)".
std::string format_location(const Location& where);

}  // namespace winokit
