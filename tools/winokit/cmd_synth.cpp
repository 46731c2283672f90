// winokit synth: a synthetic Winoground-layout dataset with known ground truth.
#include <iostream>

#include "commands.hpp"
#include "common.hpp"
#include "winokit/data/synth.hpp"

namespace winokit::cli {

namespace {
struct SynthFlags {
  std::string out;
  SynthOptions options;
  bool zip = false, force = false;
};
}  // namespace

void add_synth(CLI::App& app, int& exit_code) {
  auto f = std::make_shared<SynthFlags>();
  CLI::App* cmd = app.add_subcommand(
      "synth", "Render a synthetic Winoground-layout dataset (shapes, colours, relations)");
  cmd->add_option("--out", f->out, "Output folder")->required();
  cmd->add_option("--count", f->options.count, "Number of examples")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{1}, std::size_t{1'000'000}));
  cmd->add_option("--seed", f->options.seed, "Seed")->capture_default_str();
  cmd->add_option("--image-size", f->options.image_size, "Image side in pixels")
      ->capture_default_str()
      ->check(CLI::Range(64, 2048));
  cmd->add_flag("--zip", f->zip, "Store the images in images.zip instead of images/");
  cmd->add_flag("--force", f->force, "Replace an existing dataset in the output folder");
  cmd->callback([f, &exit_code] {
    exit_code = guarded([&] {
      SynthDataset s = generate_synthetic(f->options);
      write_synthetic(s, f->out, f->zip, f->force);
      std::cerr << "winokit: wrote " << s.dataset.examples.size() << " examples to " << f->out
                << "\n";
      return 0;
    });
  });
}

}  // namespace winokit::cli
