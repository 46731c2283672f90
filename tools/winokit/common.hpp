// Shared pieces of the winokit subcommands: option binding and error-to-exit-code mapping.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

#include "winokit/eval/evaluation.hpp"
#include "winokit/io/files.hpp"
#include "winokit/report/example_browser.hpp"

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

// One line on stderr when a file for a larger set than the dataset (the official 400-id tags or
// perplexities on a subset) had ids the dataset lacks: how many were ignored.
void note_ignored_ids(const std::string& file, std::size_t ignored, std::size_t examples);

// Runs a subcommand body, turning the library's typed errors into a message on stderr and an
// exit code.
int guarded(const std::function<int()>& body);

// Binds the statistics flags shared by eval and compare.
struct StatFlags {
  EvalOptions options;
  std::string secondary = "membership";
  std::string fold_split = "paper";
  void add_to(CLI::App& app);
  // Validates and fills options.secondary.
  EvalOptions resolve() const;
};

// The output flags of every report-writing command, added by one call so that their names and
// help texts are the same everywhere: --out, --json, --csv, --html, --html-images, --markdown,
// --quiet (each only where the command has it), resolved into this struct.
//
//   flags.report.add_to(*cmd, {.csv = "Write the CSV report"});
//   ...
//   OutputSet out;
//   flags.report.add_outputs(out, {{ReportFormat::Json, [&] { return json.dump(2) + "\n"; }},
//                                  {ReportFormat::Markdown, [&] { return md; }}});
//   commit(out);
//   flags.report.print(md);
enum class ReportFormat { Json, Csv, Html, Markdown };
struct ReportText {
  ReportFormat format;
  std::function<std::string()> text;  // called only when the format's flag was given
};

struct ReportFlags {
  std::string out, json, csv, html, markdown;
  std::string html_images = "embed";
  bool quiet = false;
  // Which flags the command has (nullptr: none) and their help texts.
  struct Help {
    const char* out = nullptr;  // --out: a file or folder (its default, if any, is `out`)
    bool out_required = false;
    const char* json = "Write the JSON report";
    const char* csv = nullptr;
    const char* html = "Write the HTML report";
    bool html_images = false;  // --html-images embed|link|none (the example browser)
    const char* markdown = "Write the markdown tables to a file";
    const char* quiet = "Do not print the tables";
    // Only --out (a file or folder the command writes), or only --html.
    static Help only_out(const char* help, bool required) {
      return {help, required, nullptr, nullptr, nullptr, false, nullptr, nullptr};
    }
    static Help only_html(const char* help) {
      return {nullptr, false, nullptr, nullptr, help, false, nullptr, nullptr};
    }
  };
  void add_to(CLI::App& app, const Help& help);
  // The path given for a format ("" when none).
  const std::string& path(ReportFormat format) const;
  // Adds each text whose format was asked for, in the order given.
  void add_outputs(OutputSet& files, const std::vector<ReportText>& texts) const;
  // The example browser's images (--html-images).
  HtmlImages images() const { return parse_html_images(html_images); }
  // Prints the markdown on stdout unless --quiet or --markdown FILE.
  void print(const std::string& markdown) const;
};

}  // namespace winokit::cli

#include <memory>

#include "shard.hpp"
#include "winokit/eval/model_scorer.hpp"

namespace winokit::cli {

// Flags of every subcommand that runs a model (any registered family).
struct ModelFlags {
  std::string model, tokenizer, preprocess, cache_dir, head;
  std::vector<std::string> model_options;  // --model-option KEY=VALUE
  int threads = 0;
  int batch_size = 32;
  bool no_cache = false;
  bool quiet_progress = false;
  ShardFlags shard;  // --shard I/N, --part FILE (shard.hpp)
  // `required`: --model must be given.
  void add_to(CLI::App& app, bool required);
  ModelOptions options() const;
  // Sets the thread count and opens the checkpoint through the registry (the family is read
  // from the checkpoint), with a note on stderr while it loads.
  std::unique_ptr<VlModel> open() const;
  // The same, refused with the one message (require) when the model cannot do `ability`.
  std::unique_ptr<VlModel> open(const std::string& command, Ability ability) const;
};

// Progress of a long stage on stderr. On a terminal, a one-line bar: done/total, the rate over
// this stage's own work (items done since the stage's first report, over the time since then),
// the ETA, and the elapsed time when the stage ends; redrawn at most 10 times a second. When
// stderr is not a terminal (logs, CI), one line "winokit: STAGE done/total (pct), rate, ETA"
// every 5 seconds ($WINOKIT_PROGRESS_SECONDS overrides; 0: every report) and a closing line for
// a stage that wrote any: a run shorter than the interval stays silent.
std::function<void(const std::string&, std::size_t, std::size_t)> progress_bar();

// One status line on stderr ("winokit: LINE"), for a step that has no count (loading a model).
void progress_note(const std::string& line);

}  // namespace winokit::cli
