// The winokit subcommands; each registers itself on the CLI11 app.
#pragma once

#include <CLI/CLI.hpp>

namespace winokit::cli {

// Each registers its subcommand on the app; the subcommand's callback runs it and sets exit_code.
void add_eval(CLI::App& app, int& exit_code);
void add_compare(CLI::App& app, int& exit_code);
void add_synth(CLI::App& app, int& exit_code);
void add_demo(CLI::App& app, int& exit_code);
void add_model_commands(CLI::App& app, int& exit_code);
void add_winogavil(CLI::App& app, int& exit_code);
void add_retrieval(CLI::App& app, int& exit_code);
void add_probe(CLI::App& app, int& exit_code);
void add_game(CLI::App& app, int& exit_code);
void add_variants(CLI::App& app, int& exit_code);
void add_heatmap(CLI::App& app, int& exit_code);
void add_perplexity(CLI::App& app, int& exit_code);
void add_run(CLI::App& app, int& exit_code);

}  // namespace winokit::cli
