// winokit: Winograd-style vision-language benchmarks from the command line.
#include <malloc.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "commands.hpp"
#include "common.hpp"
#include "winokit/version.hpp"

// Buffers of 1 MiB and more (weights while they are packed, per-batch activations) are mapped
// and unmapped, never kept in the heap: glibc's default raises this threshold at run time, and
// the freed holes between long-lived packed weights were then never given back (70 MB of the
// peak of `eval --model` with ViT-B/32; bench/run_memory_bench.sh).
constexpr int kMmapThresholdBytes = 1 << 20;

int main(int argc, char** argv) {
  mallopt(M_MMAP_THRESHOLD, kMmapThresholdBytes);
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
