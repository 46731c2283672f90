// winokit demo: the whole pipeline on a synthetic set, with the built-in baselines.
#include <filesystem>
#include <iostream>

#include "commands.hpp"
#include "common.hpp"
#include "eval_run.hpp"
#include "winokit/data/synth.hpp"
#include "winokit/eval/compare.hpp"
#include "winokit/eval/model_scorer.hpp"
#include "winokit/model/compute.hpp"
#include "winokit/report/example_browser.hpp"
#include "winokit/report/html_report.hpp"
#include "winokit/report/markdown.hpp"
#include "winokit/report/provenance.hpp"
#include "winokit/version.hpp"

namespace winokit::cli {

namespace {

struct DemoFlags {
  ReportFlags output;  // --out: the folder, "winokit-demo" unless given
  DemoFlags() { output.out = "winokit-demo"; }
  std::size_t count = 140;
  std::uint64_t seed = 1;
  bool no_clip = false;
  int threads = 0;
};

int run(const DemoFlags& f) {
  namespace fs = std::filesystem;
  const fs::path dir = f.output.out;
  const fs::path data = dir / "synthetic";
  SynthOptions so;
  so.count = f.count;
  so.seed = f.seed;
  std::cout << "# winokit " << kVersion << " demo\n\n"
            << "Rendering " << f.count << " synthetic Winoground-style examples (shapes, colours, "
            << "sizes, counts, left/above/inside) into " << data.string() << " ...\n";
  SynthDataset synth = generate_synthetic(so);
  write_synthetic(synth, data, /*zip=*/false, /*force=*/true);

  EvalRequest req;
  req.data = data.string();
  req.options.seed = f.seed;
  std::vector<Run> runs;
  for (const std::string kind : {"oracle", "bag-of-words", "random"}) {
    auto scorer = make_baseline_scorer(kind, f.seed);
    EvalRun r = run_evaluation(req, *scorer, kind);
    OutputSet out;
    const std::string stem = (dir / kind).string();
    add_eval_outputs(r,
                     {stem + ".json", "", stem + ".per-example.jsonl", stem + ".scores.jsonl",
                      stem + ".html", ""},
                     out);
    commit(out);
    std::cout << "\n" << r.markdown;
    runs.push_back({kind, r.scores, scorer->describe()});
  }
  if (!f.no_clip) {
    // A CLIP run through the real engine, with ViT-B/32-shaped random weights made in memory
    // and the byte-level tokenizer: the demo needs no files the user does not have.
    set_compute_threads(f.threads);
    std::cout << "\nBuilding a ViT-B/32-shaped CLIP with seeded random weights in memory and "
                 "scoring the images in-process ...\n";
    ModelOptions options;
    options.use_cache = false;
    options.on_progress = progress_bar();
    std::unique_ptr<VlModel> model = random_demo_model(f.seed, options);
    auto scorer = make_model_scorer(*model, model->name());
    EvalRun r = run_evaluation(req, *scorer, "clip-random-vit-b32");
    OutputSet out;
    const std::string stem = (dir / "clip-random-vit-b32").string();
    add_eval_outputs(r, {stem + ".json", "", "", stem + ".scores.jsonl", stem + ".html", ""}, out);
    commit(out);
    std::cout << "\n"
              << r.markdown
              << "\nThese CLIP weights are random, so its scores measure nothing: a random network "
                 "tends to prefer one caption (or one image) whatever it is paired with, which "
                 "puts it at or below chance. It shows the engine running end to end; a real "
                 "checkpoint (below) gives real numbers.\n";
    runs.push_back({"clip-random-vit-b32", r.scores, scorer->describe()});
  }
  WinogroundDataset dataset = load_dataset(data);
  CompareResult c = compare_runs(dataset, runs, req.options);
  const nlohmann::json provenance = Provenance().dataset(dataset).options(req.options).json();
  ExampleBrowser browser{&dataset, {}, {}, {}, example_images(dataset, HtmlImages::Embed, dir)};
  for (const auto& run : runs) {
    browser.models.push_back(run.name);
    browser.scores.push_back(run.scores);
  }
  OutputSet out;
  out.add((dir / "compare.html").string(), html_compare(c, provenance, &browser));
  commit(out);
  std::cout << "\n" << markdown_compare(c);
  std::cout << "\nWhat to read: the oracle scores from the scene descriptions and gets 100; the "
               "bag-of-words scorer is blind to word order, so both captions tie on every image "
               "(see its tie count) and every score is 0; random sits near chance.\n\n"
            << "Reports (open in a browser): " << (dir / "oracle.html").string() << ", "
            << (dir / "bag-of-words.html").string() << ", " << (dir / "random.html").string()
            << (f.no_clip ? "" : ", " + (dir / "clip-random-vit-b32.html").string()) << ", "
            << (dir / "compare.html").string() << "\n\n"
            << "Next: evaluate a real checkpoint on the real dataset\n"
            << "  1. get Winoground (examples.jsonl + images.zip, e.g. a clone of the dataset "
               "repository) into ./winoground\n"
            << "  2. download a CLIP checkpoint folder (Hugging Face CLIPModel, e.g. "
               "openai/clip-vit-base-patch32, or OpenCLIP) into ./clip-vit-base-patch32\n"
            << "  3. build/winokit eval --data winoground --model clip-vit-base-patch32 "
               "--html report.html --json report.json\n"
            << "  Scores of other models: build/winokit eval --data winoground --scores "
               "model.jsonl (official {\"label\", \"score\"} JSONL or a table)\n"
            << "Play the WinoGAViL game on the demo's images (then open http://127.0.0.1:8080/):\n"
            << "  build/winokit serve --images " << (data / "images").string()
            << " --admin <your name>\n";
  return 0;
}

}  // namespace

void add_demo(CLI::App& app, int& exit_code) {
  auto f = std::make_shared<DemoFlags>();
  CLI::App* cmd = app.add_subcommand(
      "demo", "Generate a synthetic set, score it with the baselines, print and write reports");
  f->output.add_to(*cmd, ReportFlags::Help::only_out("Folder for the dataset and reports", false));
  cmd->add_option("--count", f->count, "Number of examples")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{8}, std::size_t{100'000}));
  cmd->add_option("--seed", f->seed, "Seed")->capture_default_str();
  cmd->add_flag("--no-clip", f->no_clip, "Skip the in-process CLIP run with random weights");
  cmd->add_option("--threads", f->threads, "Compute threads (0: all cores)")->capture_default_str();
  cmd->callback([f, &exit_code] { exit_code = guarded([&] { return run(*f); }); });
}

}  // namespace winokit::cli
