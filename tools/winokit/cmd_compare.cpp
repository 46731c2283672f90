// winokit compare: a leaderboard of several runs on one dataset, with pairwise tests.
#include <filesystem>
#include <iostream>

#include "commands.hpp"
#include "common.hpp"
#include "winokit/core/error.hpp"
#include "winokit/eval/compare.hpp"
#include "winokit/io/files.hpp"
#include "winokit/report.hpp"
#include "winokit/version.hpp"

namespace winokit::cli {

namespace {

struct CompareFlags {
  std::string data, json, csv, html, markdown;
  std::string html_images = "embed";
  std::vector<std::string> runs, exclude;
  std::string run_info;
  bool quiet = false;
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

int run(const CompareFlags& f) {
  WinogroundDataset dataset = load_dataset(f.data);
  EvalOptions options = f.stats.resolve();
  std::vector<Run> runs;
  nlohmann::json sources = nlohmann::json::array();
  for (const auto& spec : f.runs) {
    auto [name, file] = split_run(spec);
    LoadedScores loaded = load_scores(file, dataset);
    nlohmann::json source = {
        {"file", file}, {"sha256", loaded.sha256}, {"format", to_string(loaded.format)}};
    sources.push_back(source);
    runs.push_back({name, std::move(loaded.scores), source});
  }
  if (f.run_info.empty() && !f.exclude.empty()) {
    throw UsageError("--exclude-from-correlation needs --run-info FILE");
  }
  CompareResult result = compare_runs(dataset, runs, options);
  nlohmann::json provenance = {{"tool", "winokit"},
                               {"version", kVersion},
                               {"dataset", dataset_json(dataset)},
                               {"runs", sources},
                               {"options", options_json(options)}};
  if (!f.run_info.empty()) {
    result.run_correlations = correlate_runs(result, load_run_info(f.run_info), f.exclude);
    provenance["run_info"] = {{"file", f.run_info}, {"sha256", result.run_correlations->sha256}};
    for (const auto& set : result.run_correlations->sets) {
      for (const auto& m : set.messages)
        std::cerr << "winokit: run info " << m << "\n";
    }
  }
  std::string md = markdown_compare(result);
  OutputSet out;
  if (!f.json.empty()) out.add(f.json, json_compare(result, provenance).dump(2) + "\n");
  if (!f.csv.empty()) out.add(f.csv, csv_compare(result));
  if (!f.html.empty()) {
    ExampleBrowser browser{&dataset, {}, {}, {}, {}};
    for (const auto& run : runs) {
      browser.models.push_back(run.name);
      browser.scores.push_back(run.scores);
    }
    browser.images = example_images(dataset, parse_html_images(f.html_images),
                                    std::filesystem::path(f.html).parent_path());
    out.add(f.html, html_compare(result, provenance, &browser));
  }
  if (!f.markdown.empty()) out.add(f.markdown, md);
  commit(out);
  if (!f.quiet && f.markdown.empty()) std::cout << md;
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
  cmd->add_option("--data", flags->data, "Dataset folder with examples.jsonl")->required();
  cmd->add_option("--run-info", flags->run_info,
                  "CSV of numbers per run (run, pretraining_pairs, ...): correlate them with the "
                  "scores across runs (Table 7)");
  cmd->add_option("--exclude-from-correlation", flags->exclude,
                  "With --run-info: also correlate without this run (repeatable)");
  cmd->add_option("--json", flags->json, "Write the JSON report");
  cmd->add_option("--csv", flags->csv, "Write the leaderboard as CSV");
  cmd->add_option("--html", flags->html, "Write the HTML report");
  cmd->add_option("--html-images", flags->html_images,
                  "Images in the HTML example browser: embed (thumbnails, one self-contained "
                  "file), link (to the image files), none")
      ->capture_default_str()
      ->check(CLI::IsMember({"embed", "link", "none"}));
  cmd->add_option("--markdown", flags->markdown, "Write the markdown tables to a file");
  cmd->add_flag("--quiet", flags->quiet, "Do not print the tables");
  flags->stats.add_to(*cmd);
  cmd->callback([flags, &exit_code] { exit_code = guarded([&] { return run(*flags); }); });
}

}  // namespace winokit::cli
