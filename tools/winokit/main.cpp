// winokit: Winograd-style vision-language benchmarks from the command line.
#include <malloc.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "common.hpp"
#include "shard.hpp"
#include "winokit/version.hpp"

// Buffers below 32 MiB (per-batch activations, decoded images) come from the heap and are reused
// batch after batch; mapping each afresh (glibc's dynamic threshold, or a low fixed one) costs
// page faults on every batch: 14% of a cold `eval --model` with ViT-B/32 on 800 photos
// (bench/run_memory_bench.sh). The holes that packing the weights leaves in the heap are given
// back by the model itself (malloc_trim after each tower).
constexpr std::size_t kMmapThresholdBytes = std::size_t{32} << 20;

namespace winokit::cli {

int run_winokit(const std::vector<std::string>& args) {
  std::vector<std::string> copy = args;
  std::vector<char*> argv;
  for (auto& a : copy)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  const int argc = static_cast<int>(copy.size());
  CLI::App app{"winokit: Winoground and WinoGAViL evaluation toolkit"};
  app.set_version_flag("--version", std::string("winokit ") + winokit::kVersion);
  app.require_subcommand(1);
  int exit_code = 0;
  add_eval(app, exit_code);
  add_compare(app, exit_code);
  add_synth(app, exit_code);
  add_demo(app, exit_code);
  add_model_commands(app, exit_code);
  add_winogavil(app, exit_code);
  add_retrieval(app, exit_code);
  add_probe(app, exit_code);
  add_game(app, exit_code);
  add_variants(app, exit_code);
  add_heatmap(app, exit_code);
  add_perplexity(app, exit_code);
  add_run(app, exit_code);
  add_merge(app, exit_code);
  if (!precheck_arguments(app, argc, argv.data())) return kExitInput;
  try {
    app.parse(argc, argv.data());
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    print_parse_error(app, e);
    return kExitInput;
  }
  return exit_code;
}

}  // namespace winokit::cli

int main(int argc, char** argv) {
  mallopt(M_MMAP_THRESHOLD, static_cast<int>(kMmapThresholdBytes));
  winokit::cli::set_command_line(argc, argv);
  return winokit::cli::run_winokit(std::vector<std::string>(argv, argv + argc));
}
