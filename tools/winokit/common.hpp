// Shared pieces of the winokit subcommands: option binding and error-to-exit-code mapping.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

#include "winokit/eval/evaluation.hpp"
#include "winokit/io/files.hpp"

namespace winokit::cli {

// Exit codes: 0 success, 1 internal error, 2 bad input or usage, 3 file system error.
inline constexpr int kExitInternal = 1;
inline constexpr int kExitInput = 2;
inline constexpr int kExitIo = 3;

// Levenshtein distance, and the closest of `candidates` to `word` when it is close enough to be
// a likely typo (empty otherwise): the "did you mean" of unknown subcommands and options.
std::size_t edit_distance(const std::string& a, const std::string& b);
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

// The one-line usage of a (sub)command: "usage: winokit eval --data DIR [options]", with its
// required options and positionals, and where the full help is.
std::string usage_line(const CLI::App& cmd);

// Checks argv before CLI11 parses it: an unknown subcommand or an unknown --option of the chosen
// subcommand gives "winokit: error: unknown ..., did you mean ...?" and the usage line on stderr.
// Returns false (after printing) when argv has such an error.
bool precheck_arguments(CLI::App& app, int argc, char** argv);

// Prints a CLI11 parse error in the one format: "winokit: error: ..." plus the usage line of
// the subcommand it belongs to.
void print_parse_error(CLI::App& app, const CLI::ParseError& error);

// Names a written file on stderr ("winokit: wrote report.html").
void wrote(const std::string& path);
// Commits an OutputSet and names each of its files once on stderr.
void commit(OutputSet& out);

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

#include "winokit/eval/clip_scorer.hpp"

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

// A one-line progress bar on stderr, drawn only when stderr is a terminal: done/total, the rate
// over this stage's own work (items done since the stage's first report, over the time since
// then), the ETA, and the elapsed time when the stage ends. Redrawn at most 10 times a second.
std::function<void(const std::string&, std::size_t, std::size_t)> progress_bar();

// The short name of a checkpoint folder ("clip-vit-base-patch32").
std::string model_name(const std::string& dir);

}  // namespace winokit::cli
