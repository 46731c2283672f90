// winokit eval: Winoground scores, breakdowns and statistics for one scorer.
#include <iostream>

#include "commands.hpp"
#include "common.hpp"
#include "eval_run.hpp"
#include "vilt_cli.hpp"
#include "winokit/error.hpp"
#include "winokit/files.hpp"
#include "winokit/scorer.hpp"

namespace winokit::cli {

namespace {

struct EvalFlags {
  std::string data, scores, scorer, name, json, csv, per_example, scores_out, html, markdown;
  std::vector<std::string> tags, covariates;
  bool quiet = false;
  StatFlags stats;
  ModelFlags model;
};

int run(const EvalFlags& f) {
  const int sources = !f.scores.empty() + !f.scorer.empty() + !f.model.model.empty();
  if (sources != 1) {
    throw UsageError("give exactly one of --scores FILE, --scorer KIND or --model DIR");
  }
  EvalRequest req;
  req.data = f.data;
  req.tags = f.tags;
  req.covariates = f.covariates;
  req.options = f.stats.resolve();
  std::unique_ptr<Scorer> scorer;
  std::string scores_out = f.scores_out;
  if (!f.model.model.empty()) {
    const std::string name = f.name.empty() ? model_name(f.model.model) : f.name;
    scorer = is_vilt_model(f.model) ? make_vilt_scorer(load_vilt(f.model), name)
                                    : make_clip_scorer(f.model.load(), name);
    // A model run always keeps its scores, so it can be re-scored or compared later.
    if (scores_out.empty()) scores_out = name + ".scores.jsonl";
  } else if (!f.scores.empty()) {
    scorer = make_scores_file_scorer(f.scores, f.name);
  } else {
    scorer = make_baseline_scorer(f.scorer, req.options.seed);
  }
  EvalRun r = run_evaluation(req, *scorer, f.name);
  OutputSet out;
  add_eval_outputs(r, {f.json, f.csv, f.per_example, scores_out, f.html, f.markdown}, out);
  out.commit();
  if (!f.model.model.empty()) {
    const auto& e = r.context.provenance["scorer"]["embeddings"];
    std::cerr << "winokit: embeddings: " << e["images_computed"] << " images computed, "
              << e["images_cached"] << " from the cache; " << e["captions_computed"]
              << " captions computed, " << e["captions_cached"] << " from the cache; scores in "
              << scores_out << "\n";
  }
  if (!f.quiet && f.markdown.empty()) std::cout << r.markdown;
  return 0;
}

}  // namespace

void add_eval(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<EvalFlags>();
  CLI::App* cmd = app.add_subcommand(
      "eval", "Winoground text/image/group scores with breakdowns, intervals and tests");
  cmd->add_option("--data", flags->data,
                  "Dataset folder with examples.jsonl (or a clone holding data/)")
      ->required();
  cmd->add_option("--scores", flags->scores,
                  "Scores file: official JSONL, per-example JSONL, or CSV/TSV table");
  cmd->add_option("--scorer", flags->scorer, "Built-in baseline: random, bag-of-words, oracle")
      ->check(CLI::IsMember(baseline_scorer_kinds()));
  cmd->add_option("--name", flags->name, "Model name shown in the reports");
  cmd->add_option("--tags", flags->tags, "Extra tag set (JSON id -> tags), FILE or NAME=FILE");
  cmd->add_option("--covariate", flags->covariates,
                  "Covariate table (id[, caption], numeric columns) to correlate with correctness");
  cmd->add_option("--json", flags->json, "Write the JSON report");
  cmd->add_option("--csv", flags->csv, "Write the CSV report (one row per group and metric)");
  cmd->add_option("--per-example", flags->per_example, "Write per-example outcomes (JSONL)");
  cmd->add_option("--scores-out", flags->scores_out, "Write the scores in the official JSONL");
  cmd->add_option("--html", flags->html, "Write the self-contained HTML report");
  cmd->add_option("--markdown", flags->markdown, "Write the markdown tables to a file");
  cmd->add_flag("--quiet", flags->quiet, "Do not print the tables");
  flags->stats.add_to(*cmd);
  flags->model.add_to(*cmd, /*required=*/false);
  cmd->callback([flags, &exit_code] { exit_code = guarded([&] { return run(*flags); }); });
}

}  // namespace winokit::cli
