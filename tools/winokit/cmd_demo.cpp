// winokit demo: the whole pipeline on a synthetic set, with the built-in baselines.
#include <filesystem>
#include <iostream>

#include "commands.hpp"
#include "common.hpp"
#include "eval_run.hpp"
#include "winokit/compare.hpp"
#include "winokit/synth.hpp"
#include "winokit/version.hpp"

namespace winokit::cli {

namespace {

struct DemoFlags {
  std::string out = "winokit-demo";
  std::size_t count = 140;
  std::uint64_t seed = 1;
};

int run(const DemoFlags& f) {
  namespace fs = std::filesystem;
  const fs::path dir = f.out;
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
    out.commit();
    std::cout << "\n" << r.markdown;
    runs.push_back({kind, r.scores, scorer->describe()});
  }
  Dataset dataset = load_dataset(data);
  CompareResult c = compare_runs(dataset, runs, req.options);
  nlohmann::json provenance = {{"tool", "winokit"},
                               {"version", kVersion},
                               {"dataset", dataset_json(dataset)},
                               {"options", options_json(req.options)}};
  OutputSet out;
  out.add((dir / "compare.html").string(), html_compare(c, provenance));
  out.commit();
  std::cout << "\n" << markdown_compare(c);
  std::cout << "\nWhat to read: the oracle scores from the scene descriptions and gets 100; the "
               "bag-of-words scorer is blind to word order, so both captions tie on every image "
               "(see its tie count) and every score is 0; random sits near chance.\n\n"
            << "Reports: " << (dir / "oracle.html").string() << ", "
            << (dir / "bag-of-words.html").string() << ", " << (dir / "random.html").string()
            << ", " << (dir / "compare.html").string() << "\n\n"
            << "Next: evaluate a real model on the real dataset\n"
            << "  1. get the Winoground dataset (examples.jsonl + images.zip) into e.g. "
               "./winoground\n"
            << "  2. score it with your model and write the official scores JSONL\n"
            << "     ({\"label\": \"<id>_c<j>_i<k>\", \"score\": s} per pair), then:\n"
            << "  winokit eval --data winoground --scores my_model.jsonl --html report.html "
               "--json report.json\n";
  return 0;
}

}  // namespace

void add_demo(CLI::App& app, int& exit_code) {
  auto f = std::make_shared<DemoFlags>();
  CLI::App* cmd = app.add_subcommand(
      "demo", "Generate a synthetic set, score it with the baselines, print and write reports");
  cmd->add_option("--out", f->out, "Folder for the dataset and reports")->capture_default_str();
  cmd->add_option("--count", f->count, "Number of examples")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{8}, std::size_t{100'000}));
  cmd->add_option("--seed", f->seed, "Seed")->capture_default_str();
  cmd->callback([f, &exit_code] { exit_code = guarded([&] { return run(*f); }); });
}

}  // namespace winokit::cli
