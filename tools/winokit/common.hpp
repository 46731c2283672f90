// Shared pieces of the winokit subcommands: option binding and error-to-exit-code mapping.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

#include "winokit/evaluation.hpp"

namespace winokit::cli {

// Exit codes: 0 success, 1 internal error, 2 bad input or usage, 3 file system error.
inline constexpr int kExitInternal = 1;
inline constexpr int kExitInput = 2;
inline constexpr int kExitIo = 3;

// Runs a subcommand body, turning the library's typed errors into a message on stderr and an
// exit code.
int guarded(const std::function<int()>& body);

// Binds the statistics flags shared by eval and compare.
struct StatFlags {
  EvalOptions options;
  std::string secondary = "membership";
  void add_to(CLI::App& app);
  // Validates and fills options.secondary.
  EvalOptions resolve() const;
};

}  // namespace winokit::cli
