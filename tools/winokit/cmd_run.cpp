// winokit run / winokit benchmarks: any registered benchmark (winokit/eval/benchmark.hpp) through
// the shared task machinery: load, score (any registered model or a scores file), evaluate, report.
#include <iostream>

#include "commands.hpp"
#include "common.hpp"
#include "winokit/core/error.hpp"
#include "winokit/eval/benchmark.hpp"
#include "winokit/io/files.hpp"
#include "winokit/report/provenance.hpp"
#include "winokit/report/sections.hpp"

namespace winokit::cli {

namespace {

struct RunFlags {
  std::string benchmark, data, images, scores, name, prompt;
  BenchmarkOptions options;
  ReportFlags report;
  ModelFlags model;
};

int run(const RunFlags& f) {
  check_shard_model(f.model.shard, f.model.model);
  const Benchmark& benchmark = find_benchmark(f.benchmark);
  if (f.model.model.empty() == f.scores.empty()) {
    throw UsageError("give exactly one of --model DIR|FILE or --scores FILE");
  }
  BenchmarkData data = benchmark.load({f.data, f.images, f.prompt, f.scores.empty()});
  std::vector<ItemScores> scores;
  std::string name = f.name;
  nlohmann::json scorer;
  if (!f.scores.empty()) {
    scores = benchmark.load_scores(data, f.scores);
    if (name.empty()) name = std::filesystem::path(f.scores).stem().string();
  } else {
    std::unique_ptr<VlModel> model = f.model.open("run", Ability::PairScores);
    EmbedStats stats;
    scores = score_items(data, *model, &stats);
    if (name.empty()) name = model->name();
    scorer = model->describe();
    scorer["embeddings"] = embed_stats_json(stats);
  }
  const BenchmarkSummary summary = benchmark.evaluate(data, scores, f.options);
  Provenance p;
  p.input("data", data.file.string(), data.sha256, data.items.size())
      .field("benchmark", benchmark.name())
      .option("seed", f.options.seed)
      .option("bootstrap_resamples", f.options.bootstrap_resamples)
      .option("confidence", f.options.confidence);
  if (!f.scores.empty()) {
    p.source("scorer", "scores file", "file", f.scores)
        .detail("scorer", "sha256", sha256_file(f.scores));
  } else {
    p.model("scorer", scorer);
  }
  const nlohmann::json& provenance = p.json();
  const std::string md = summary_markdown(benchmark, data, summary, name, provenance);
  OutputSet out;
  f.report.add_outputs(
      out,
      {{ReportFormat::Json,
        [&] { return summary_json(benchmark, data, summary, name, provenance).dump(2) + "\n"; }},
       {ReportFormat::Markdown, [&] { return md; }},
       {ReportFormat::Csv, [&] { return summary_per_item_csv(summary); }}});
  commit(out);
  f.report.print(md);
  return 0;
}

std::string benchmark_list() {
  std::string s;
  for (const auto& b : benchmarks())
    s += "  " + b->name() + std::string(b->name().size() < 12 ? 12 - b->name().size() : 1, ' ') +
         b->title() + ": " + b->description() + "\n";
  return s;
}

}  // namespace

void add_run(CLI::App& app, int& exit_code) {
  auto f = std::make_shared<RunFlags>();
  CLI::App* cmd = app.add_subcommand(
      "run", "Run any registered benchmark (see `winokit benchmarks`): load, score, evaluate");
  cmd->add_option("benchmark", f->benchmark, "Benchmark name (winokit benchmarks lists them)")
      ->required();
  cmd->add_option("--data", f->data, "The benchmark's data file or folder")->required();
  cmd->add_option("--images", f->images,
                  "Folder (or zip) of the benchmark's images, when not beside the data");
  cmd->add_option("--scores", f->scores,
                  "Scores file: the generic layout {\"id\", \"scores\": [[...], ...]} per line, "
                  "or the benchmark's official one");
  f->model.add_to(*cmd, false);
  cmd->add_option("--name", f->name, "Name of the model in the report");
  cmd->add_option("--prompt-template", f->prompt,
                  "How a cue becomes a text (WinoGAViL; default \"{A} {cue}\")");
  cmd->add_option("--seed", f->options.seed, "Seed of the bootstrap");
  cmd->add_option("--bootstrap", f->options.bootstrap_resamples, "Bootstrap resamples")
      ->check(CLI::PositiveNumber);
  f->report.add_to(*cmd, {.json = "Write the summary as JSON",
                          .csv = "Write one row per item (CSV)",
                          .html = nullptr,
                          .markdown = "Write the summary as Markdown",
                          .quiet = "Do not print the summary"});
  cmd->callback([f, &exit_code] { exit_code = guarded([&] { return run(*f); }); });

  CLI::App* list = app.add_subcommand("benchmarks", "List the registered benchmarks");
  list->callback([&exit_code] {
    std::cout << benchmark_list();
    exit_code = 0;
  });
  app.footer("Benchmarks (winokit run NAME):\n" + benchmark_list());
}

}  // namespace winokit::cli
