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

#include <memory>

#include "winokit/clip_scorer.hpp"

namespace winokit::cli {

// Flags of every subcommand that runs a CLIP checkpoint.
struct ModelFlags {
  std::string model, tokenizer, preprocess, cache_dir;
  int threads = 0;
  int batch_size = 32;
  bool no_cache = false;
  bool quiet_progress = false;
  // `required`: --model must be given.
  void add_to(CLI::App& app, bool required);
  // Sets the thread count, loads the checkpoint and tokenizer.
  ClipRuntime load() const;
  ClipRunOptions options() const;
};

// A one-line progress bar on stderr, drawn only when stderr is a terminal.
std::function<void(const std::string&, std::size_t, std::size_t)> progress_bar();

// The short name of a checkpoint folder ("clip-vit-base-patch32").
std::string model_name(const std::string& dir);

}  // namespace winokit::cli
