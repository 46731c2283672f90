// winokit compare: a leaderboard of several runs on one dataset, with pairwise tests.
#include <filesystem>
#include <iostream>

#include "commands.hpp"
#include "common.hpp"
#include "winokit/core/error.hpp"
#include "winokit/eval/compare.hpp"
#include "winokit/io/files.hpp"
#include "winokit/report/csv_report.hpp"
#include "winokit/report/example_browser.hpp"
#include "winokit/report/format.hpp"
#include "winokit/report/html_report.hpp"
#include "winokit/report/json_report.hpp"
#include "winokit/report/markdown.hpp"
#include "winokit/report/provenance.hpp"
#include "winokit/report/sections.hpp"
#include "winokit/version.hpp"

namespace winokit::cli {

namespace {

struct CompareFlags {
  std::string data, benchmark, images;
  std::vector<std::string> runs, exclude;
  std::string run_info;
  ReportFlags report;
  StatFlags stats;
};

// "NAME=FILE" unless FILE itself exists; the name defaults to the file's stem.
std::pair<std::string, std::string> split_run(const std::string& spec) {
  auto eq = spec.find('=');
  if (eq == std::string::npos || eq == 0 || std::filesystem::exists(spec)) {
    return {std::filesystem::path(spec).stem().string(), spec};
  }
  return {spec.substr(0, eq), spec.substr(eq + 1)};
}

// compare --benchmark NAME: runs of any registered benchmark (scores files in its generic or
// official layout), compared from their per-item outcomes.
int run_benchmark(const CompareFlags& f) {
  if (!f.run_info.empty() || !f.exclude.empty()) {
    throw UsageError(
        "--run-info and --exclude-from-correlation are for Winoground runs (without "
        "--benchmark)");
  }
  const Benchmark& benchmark = find_benchmark(f.benchmark);
  const BenchmarkData data = benchmark.load({f.data, f.images, "", false});
  const EvalOptions eo = f.stats.resolve();
  const BenchmarkOptions options{eo.seed, eo.bootstrap_resamples, eo.confidence};
  std::vector<BenchmarkRun> runs;
  Provenance provenance;
  provenance.input("data", data.file.string(), data.sha256, data.items.size())
      .field("benchmark", benchmark.name())
      .inputs("runs");
  for (const auto& spec : f.runs) {
    auto [name, file] = split_run(spec);
    const std::vector<ItemScores> scores = benchmark.load_scores(data, file);
    provenance.list_input("runs", {name, file, sha256_file(file), std::nullopt});
    runs.push_back(
        {name, benchmark.evaluate(data, scores, options), provenance.json()["runs"].back()});
  }
  provenance.option("seed", options.seed)
      .option("bootstrap_resamples", options.bootstrap_resamples)
      .option("confidence", options.confidence);
  const BenchmarkCompareResult result = compare_benchmark_runs(data, runs, options);
  const std::string md = benchmark_compare_markdown(result, benchmark.title());
  const nlohmann::json& record = provenance.json();
  OutputSet out;
  f.report.add_outputs(
      out,
      {{ReportFormat::Json, [&] { return benchmark_compare_json(result, record).dump(2) + "\n"; }},
       {ReportFormat::Csv, [&] { return benchmark_compare_per_item_csv(result); }},
       {ReportFormat::Html,
        [&] { return markdown_html(benchmark.title() + ": compare", md, record); }},
       {ReportFormat::Markdown, [&] { return md; }}});
  commit(out);
  f.report.print(md);
  return 0;
}

int run(const CompareFlags& f) {
  if (!f.benchmark.empty()) return run_benchmark(f);
  if (!f.images.empty()) throw UsageError("--images is for --benchmark runs");
  WinogroundDataset dataset = load_dataset(f.data);
  EvalOptions options = f.stats.resolve();
  std::vector<Run> runs;
  Provenance provenance;
  provenance.dataset(dataset).inputs("runs");
  for (const auto& spec : f.runs) {
    auto [name, file] = split_run(spec);
    LoadedScores loaded = load_scores(file, dataset);
    provenance.list_input(
        "runs", {std::nullopt, file, loaded.sha256, std::string(to_string(loaded.format))});
    runs.push_back({name, std::move(loaded.scores), provenance.json()["runs"].back()});
  }
  if (f.run_info.empty() && !f.exclude.empty()) {
    throw UsageError("--exclude-from-correlation needs --run-info FILE");
  }
  CompareResult result = compare_runs(dataset, runs, options);
  provenance.options(options);
  if (!f.run_info.empty()) {
    result.run_correlations = correlate_runs(result, load_run_info(f.run_info), f.exclude);
    provenance.input("run_info", f.run_info, result.run_correlations->sha256);
    for (const auto& set : result.run_correlations->sets) {
      for (const auto& m : set.messages)
        std::cerr << "winokit: run info " << m << "\n";
    }
  }
  const std::string md = markdown_compare(result);
  const nlohmann::json& record = provenance.json();
  OutputSet out;
  f.report.add_outputs(
      out, {{ReportFormat::Json, [&] { return json_compare(result, record).dump(2) + "\n"; }},
            {ReportFormat::Csv, [&] { return csv_compare(result); }},
            {ReportFormat::Html,
             [&] {
               ExampleBrowser browser{&dataset, {}, {}, {}, {}};
               for (const auto& run : runs) {
                 browser.models.push_back(run.name);
                 browser.scores.push_back(run.scores);
               }
               browser.images = example_images(dataset, f.report.images(),
                                               std::filesystem::path(f.report.html).parent_path());
               return html_compare(result, record, &browser);
             }},
            {ReportFormat::Markdown, [&] { return md; }}});
  commit(out);
  f.report.print(md);
  return 0;
}

}  // namespace

void add_compare(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<CompareFlags>();
  CLI::App* cmd = app.add_subcommand(
      "compare", "Leaderboard of several runs with intervals and pairwise significance tests");
  cmd->add_option("runs", flags->runs,
                  "Scores files (any format eval reads), as FILE or NAME=FILE; at least two")
      ->required()
      ->expected(2, -1);
  cmd->add_option("--data", flags->data,
                  "Dataset folder with examples.jsonl (with --benchmark: the benchmark's data)")
      ->required();
  cmd->add_option("--benchmark", flags->benchmark,
                  "Compare runs of this registered benchmark (winokit benchmarks): its scores "
                  "files, from their per-item outcomes; --csv then writes one row per item");
  cmd->add_option("--images", flags->images,
                  "With --benchmark: the benchmark's images, when its loader needs the folder");
  cmd->add_option("--run-info", flags->run_info,
                  "CSV of numbers per run (run, pretraining_pairs, ...): correlate them with the "
                  "scores across runs (Table 7)");
  cmd->add_option("--exclude-from-correlation", flags->exclude,
                  "With --run-info: also correlate without this run (repeatable)");
  flags->report.add_to(*cmd, {.csv = "Write the leaderboard as CSV", .html_images = true});
  flags->stats.add_to(*cmd);
  cmd->callback([flags, &exit_code] { exit_code = guarded([&] { return run(*flags); }); });
}

}  // namespace winokit::cli
