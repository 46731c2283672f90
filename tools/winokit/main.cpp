// winokit: Winograd-style vision-language benchmarks from the command line.
#include <malloc.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "commands.hpp"
#include "common.hpp"
#include "winokit/version.hpp"

// Buffers below 32 MiB (per-batch activations, decoded images) come from the heap and are reused
// batch after batch; mapping each afresh (glibc's dynamic threshold, or a low fixed one) costs
// page faults on every batch: 14% of a cold `eval --model` with ViT-B/32 on 800 photos
// (bench/run_memory_bench.sh). The holes that packing the weights leaves in the heap are given
// back by the model itself (malloc_trim after each tower).
constexpr std::size_t kMmapThresholdBytes = std::size_t{32} << 20;

int main(int argc, char** argv) {
  mallopt(M_MMAP_THRESHOLD, static_cast<int>(kMmapThresholdBytes));
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
