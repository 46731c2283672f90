// winokit run / winokit benchmarks: any registered benchmark (winokit/eval/benchmark.hpp) through
// the shared task machinery: load, score (any registered model or a scores file), evaluate, report.
#include <cstdio>
#include <iostream>
#include <optional>

#include "commands.hpp"
#include "common.hpp"
#include "winokit/core/error.hpp"
#include "winokit/eval/benchmark.hpp"
#include "winokit/io/files.hpp"
#include "winokit/report/benchmark_browser.hpp"
#include "winokit/report/html_report.hpp"
#include "winokit/report/provenance.hpp"
#include "winokit/report/sections.hpp"

namespace winokit::cli {

namespace {

struct RunFlags {
  std::string benchmark, data, images, scores, name, prompt, config, reports;
  std::size_t html_items = 0;
  BenchmarkOptions options;
  ReportFlags report;
  ModelFlags model;
};

// One benchmark scored (from a scores file, else by the model) and evaluated, with its
// provenance: what `run NAME` and each benchmark of `run all` share.
struct ScoredBenchmark {
  BenchmarkSummary summary;
  std::string name;
  nlohmann::json provenance;
};

ScoredBenchmark score_benchmark(const Benchmark& benchmark, const BenchmarkData& data,
                                const std::string& scores_file, const VlModel* model,
                                std::string name, const BenchmarkOptions& options) {
  std::vector<ItemScores> scores;
  nlohmann::json scorer;
  if (!scores_file.empty()) {
    scores = benchmark.load_scores(data, scores_file);
    if (name.empty()) name = std::filesystem::path(scores_file).stem().string();
  } else {
    EmbedStats stats;
    scores = score_items(data, *model, &stats);
    if (name.empty()) name = model->name();
    scorer = model->describe();
    scorer["embeddings"] = embed_stats_json(stats);
  }
  ScoredBenchmark r{benchmark.evaluate(data, scores, options), std::move(name), {}};
  Provenance p;
  p.input("data", data.file.string(), data.sha256, data.items.size())
      .field("benchmark", benchmark.name())
      .option("seed", options.seed)
      .option("bootstrap_resamples", options.bootstrap_resamples)
      .option("confidence", options.confidence);
  if (!scores_file.empty()) {
    p.source("scorer", "scores file", "file", scores_file)
        .detail("scorer", "sha256", sha256_file(scores_file));
  } else {
    p.model("scorer", scorer);
  }
  r.provenance = p.json();
  return r;
}

int run_all(const RunFlags& f);

int run(const RunFlags& f) {
  if (f.benchmark == "all") return run_all(f);
  if (!f.config.empty() || !f.reports.empty()) {
    throw UsageError("--config and --reports are for `winokit run all`");
  }
  if (f.data.empty()) throw UsageError("--data is required");
  check_shard_model(f.model.shard, f.model.model);
  const Benchmark& benchmark = find_benchmark(f.benchmark);
  if (f.model.model.empty() == f.scores.empty()) {
    throw UsageError("give exactly one of --model DIR|FILE or --scores FILE");
  }
  // A scores-file run names its images without reading them, unless its HTML report is to
  // show them: then --images is read (and checked) as for a model run.
  const bool html_images = !f.report.html.empty() && f.report.images() != HtmlImages::None;
  const bool read_images = f.scores.empty() || (html_images && !f.images.empty());
  BenchmarkData data = benchmark.load({f.data, f.images, f.prompt, read_images});
  std::unique_ptr<VlModel> model;
  if (f.scores.empty()) model = f.model.open("run", Ability::PairScores);
  const ScoredBenchmark r =
      score_benchmark(benchmark, data, f.scores, model.get(), f.name, f.options);
  const BenchmarkSummary& summary = r.summary;
  const std::string& name = r.name;
  const nlohmann::json& provenance = r.provenance;
  const std::string md = summary_markdown(benchmark, data, summary, name, provenance);
  OutputSet out;
  f.report.add_outputs(
      out,
      {{ReportFormat::Json,
        [&] { return summary_json(benchmark, data, summary, name, provenance).dump(2) + "\n"; }},
       {ReportFormat::Markdown, [&] { return md; }},
       {ReportFormat::Csv, [&] { return summary_per_item_csv(summary); }},
       {ReportFormat::Html, [&] {
          const BenchmarkImages images = benchmark_images(
              data, f.report.images(), std::filesystem::path(f.report.html).parent_path(),
              read_images, browser_sample(data.items.size(), f.html_items, f.options.seed));
          return summary_html(benchmark, data, summary, name, provenance, images);
        }}});
  commit(out);
  f.report.print(md);
  return 0;
}

// One benchmark of a `run all` config: its load options and, instead of --model, a scores file.
struct ConfigEntry {
  std::string name;
  BenchmarkLoadOptions load;
  std::string scores;
};

std::vector<ConfigEntry> read_run_config(const std::filesystem::path& file) {
  namespace fs = std::filesystem;
  nlohmann::ordered_json j;
  try {
    j = nlohmann::ordered_json::parse(read_text_file(file));
  } catch (const nlohmann::json::exception& e) {
    throw InputError({file.string(), 0, ""}, std::string("malformed JSON: ") + e.what());
  }
  if (!j.is_object() || j.empty()) {
    throw InputError({file.string(), 0, ""},
                     "expected an object of benchmarks: {\"sugarcrepe\": {\"data\": \"DIR\", "
                     "\"images\": \"DIR\"}, ...}");
  }
  const fs::path base = file.parent_path();
  const auto resolve = [&](const std::string& p) {
    return fs::path(p).is_absolute() || base.empty() ? fs::path(p) : base / p;
  };
  std::vector<ConfigEntry> entries;
  for (const auto& [name, v] : j.items()) {
    find_benchmark(name);  // UsageError naming the known ones
    if (!v.is_object()) {
      throw InputError({file.string(), 0, name},
                       "expected an object with data (and images, prompt_template, scores)");
    }
    ConfigEntry e;
    e.name = name;
    for (const auto& [key, value] : v.items()) {
      if (!value.is_string() || value.get<std::string>().empty()) {
        throw InputError({file.string(), 0, name + "." + key}, "expected a non-empty string");
      }
      const std::string s = value.get<std::string>();
      if (key == "data") {
        e.load.data = resolve(s);
      } else if (key == "images") {
        e.load.images = resolve(s);
      } else if (key == "prompt_template") {
        e.load.prompt_template = s;
      } else if (key == "scores") {
        e.scores = resolve(s).string();
      } else {
        throw InputError({file.string(), 0, name + "." + key},
                         "unknown key (known: data, images, prompt_template, scores)");
      }
    }
    if (e.load.data.empty()) throw InputError({file.string(), 0, name + ".data"}, "missing");
    std::error_code ec;
    for (const auto& [what, path] : {std::pair<const char*, fs::path>{"data", e.load.data},
                                     {"images", e.load.images},
                                     {"scores", fs::path(e.scores)}}) {
      if (!path.empty() && !fs::exists(path, ec)) {
        throw IoError(file.string() + ": " + name + "." + what + ": " + path.string() +
                      ": not found");
      }
    }
    entries.push_back(std::move(e));
  }
  return entries;
}

std::string cell(const std::optional<double>& low, const std::optional<double>& high) {
  if (!low) return "";
  char b[64];
  std::snprintf(b, sizeof b, "[%.2f, %.2f]", *low, *high);
  return b;
}

// `winokit run all --config FILE (--model M | scores in the config) --reports DIR`: every
// benchmark of the config, each checked and loaded before any model work; one report per
// benchmark in DIR (NAME.json, NAME.md, NAME.csv) and one summary table of every headline metric.
int run_all(const RunFlags& f) {
  if (f.config.empty()) throw UsageError("winokit run all needs --config FILE");
  if (f.reports.empty()) {
    throw UsageError("winokit run all needs --reports DIR (one report per benchmark)");
  }
  if (!f.data.empty() || !f.images.empty() || !f.scores.empty() || !f.prompt.empty()) {
    throw UsageError(
        "winokit run all takes each benchmark's --data, --images, --prompt-template and "
        "scores from the --config file");
  }
  const std::vector<ConfigEntry> entries = read_run_config(f.config);
  bool all_scores = true;
  for (const ConfigEntry& e : entries)
    all_scores = all_scores && !e.scores.empty();
  if (f.model.model.empty() && !all_scores) {
    throw UsageError(
        "winokit run all needs --model DIR|FILE, or a scores file for every "
        "benchmark of the config");
  }
  check_shard_model(f.model.shard, f.model.model);
  // Everything is loaded (and every image checked) before a model is opened. With --html, an
  // entry with a scores file and images shows them (read and checked as for a model).
  const bool html = !f.report.html.empty();
  const bool html_images = html && f.report.images() != HtmlImages::None;
  std::vector<BenchmarkData> loaded;
  std::vector<bool> readable;
  for (const ConfigEntry& e : entries) {
    BenchmarkLoadOptions o = e.load;
    o.need_images = e.scores.empty() || (html_images && !e.load.images.empty());
    readable.push_back(o.need_images);
    loaded.push_back(find_benchmark(e.name).load(o));
  }
  std::unique_ptr<VlModel> model;
  if (!f.model.model.empty()) model = f.model.open("run", Ability::PairScores);
  nlohmann::json summary_rows = nlohmann::json::array();
  nlohmann::json provenances = nlohmann::json::object();
  std::string table =
      "# winokit run all\n\n| Benchmark | Metric | % | N | Interval |\n|---|---|---:|---:|---|\n";
  OutputSet out;
  for (std::size_t k = 0; k < entries.size(); ++k) {
    const ConfigEntry& e = entries[k];
    const Benchmark& benchmark = find_benchmark(e.name);
    const BenchmarkData& data = loaded[k];
    const ScoredBenchmark r =
        score_benchmark(benchmark, data, e.scores, model.get(), f.name, f.options);
    const BenchmarkSummary& summary = r.summary;
    const std::string& name = r.name;
    const nlohmann::json& provenance = r.provenance;
    out.add_in(f.reports, e.name + ".json",
               summary_json(benchmark, data, summary, name, provenance).dump(2) + "\n");
    out.add_in(f.reports, e.name + ".md",
               summary_markdown(benchmark, data, summary, name, provenance));
    out.add_in(f.reports, e.name + ".csv", summary_per_item_csv(summary));
    if (html) {
      const BenchmarkImages images =
          benchmark_images(data, f.report.images(), f.reports, readable[k],
                           browser_sample(data.items.size(), f.html_items, f.options.seed));
      out.add_in(f.reports, e.name + ".html",
                 summary_html(benchmark, data, summary, name, provenance, images));
    }
    provenances[e.name] = provenance;
    for (const BenchmarkMetric& m : summary.metrics) {
      char pct[32];
      std::snprintf(pct, sizeof pct, "%.2f", m.percent);
      table += "| " + e.name + " | " + m.name + " | " + pct + " | " + std::to_string(m.n) + " | " +
               cell(m.low, m.high) + " |\n";
      nlohmann::json row = {{"benchmark", e.name},
                            {"metric", m.name},
                            {"percent", m.percent},
                            {"n", m.n},
                            {"scorer", name}};
      if (m.low) {
        row["low"] = *m.low;
        row["high"] = *m.high;
      }
      summary_rows.push_back(std::move(row));
    }
  }
  out.add_in(f.reports, "summary.md", table);
  out.add_in(f.reports, "summary.json", nlohmann::json{{"metrics", summary_rows}}.dump(2) + "\n");
  f.report.add_outputs(
      out,
      {{ReportFormat::Json,
        [&] {
          return nlohmann::json{{"metrics", summary_rows}}.dump(2) + "\n";
        }},
       {ReportFormat::Markdown, [&] { return table; }},
       {ReportFormat::Html, [&] { return markdown_html("winokit run all", table, provenances); }}});
  commit(out);
  f.report.print(table);
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
  cmd->add_option("benchmark", f->benchmark,
                  "Benchmark name (winokit benchmarks lists them), or all (with --config)")
      ->required();
  cmd->add_option("--data", f->data, "The benchmark's data file or folder (required but with all)");
  cmd->add_option("--images", f->images,
                  "Folder (or zip) of the benchmark's images, when not beside the data");
  cmd->add_option("--scores", f->scores,
                  "Scores file: the generic layout {\"id\", \"scores\": [[...], ...]} per line, "
                  "or the benchmark's official one");
  f->model.add_to(*cmd, false);
  cmd->add_option("--name", f->name, "Name of the model in the report");
  cmd->add_option("--config", f->config,
                  "run all: a JSON file of benchmarks, {\"NAME\": {\"data\": DIR, \"images\": DIR, "
                  "\"prompt_template\": T, \"scores\": FILE}, ...} (paths from the file's folder)");
  cmd->add_option("--reports", f->reports,
                  "run all: the folder of the per-benchmark reports (NAME.json, NAME.md, "
                  "NAME.csv) and summary.md / summary.json");
  cmd->add_option("--prompt-template", f->prompt,
                  "How a cue becomes a text (WinoGAViL; default \"{A} {cue}\")");
  cmd->add_option("--seed", f->options.seed, "Seed of the bootstrap (and of --html-items)");
  cmd->add_option("--html-items", f->html_items,
                  "List at most N items in the HTML example browser: a seeded random sample when "
                  "the benchmark has more (0: every item)")
      ->capture_default_str();
  cmd->add_option("--bootstrap", f->options.bootstrap_resamples, "Bootstrap resamples")
      ->check(CLI::PositiveNumber);
  f->report.add_to(*cmd, {.json = "Write the summary as JSON",
                          .csv = "Write one row per item (CSV)",
                          .html = "Write the HTML report with the example browser (images, "
                                  "texts, scores, what failed); run all: the summary table, "
                                  "and NAME.html per benchmark in --reports",
                          .html_images = true,
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
