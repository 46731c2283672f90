// winokit: Winograd-style vision-language benchmarks from the command line.
#include <CLI/CLI.hpp>
#include <iostream>

#include "commands.hpp"
#include "common.hpp"
#include "winokit/version.hpp"

int main(int argc, char** argv) {
  CLI::App app{"winokit: Winoground and WinoGAViL evaluation toolkit"};
  app.set_version_flag("--version", std::string("winokit ") + winokit::kVersion);
  app.require_subcommand(1);
  int exit_code = 0;
  winokit::cli::add_eval(app, exit_code);
  winokit::cli::add_compare(app, exit_code);
  winokit::cli::add_synth(app, exit_code);
  winokit::cli::add_demo(app, exit_code);
  winokit::cli::add_model_commands(app, exit_code);
  winokit::cli::add_winogavil(app, exit_code);
  winokit::cli::add_retrieval(app, exit_code);
  winokit::cli::add_probe(app, exit_code);
  winokit::cli::add_game(app, exit_code);
  winokit::cli::add_variants(app, exit_code);
  winokit::cli::add_heatmap(app, exit_code);
  winokit::cli::add_perplexity(app, exit_code);
  winokit::cli::add_run(app, exit_code);
  if (!winokit::cli::precheck_arguments(app, argc, argv)) return winokit::cli::kExitInput;
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    winokit::cli::print_parse_error(app, e);
    return winokit::cli::kExitInput;
  }
  return exit_code;
}
