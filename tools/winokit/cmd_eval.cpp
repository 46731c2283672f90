// winokit eval: Winoground scores, breakdowns and statistics for one scorer.
#include <cmath>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "common.hpp"
#include "eval_run.hpp"
#include "perplexity_run.hpp"
#include "winokit/core/error.hpp"
#include "winokit/eval/scorer.hpp"
#include "winokit/eval/scores.hpp"
#include "winokit/io/files.hpp"

namespace winokit::cli {

namespace {

struct EvalFlags {
  std::string data, scores, scorer, name, per_example, scores_out, images;
  std::vector<std::string> tags, covariates;
  std::string perplexity;
  bool force = false;  // replace a default scores file that holds other scores
  LmRequest lm;
  ReportFlags report;
  StatFlags stats;
  ModelFlags model;
};

// Where a model run keeps its scores when --scores-out is not given: beside the other outputs
// (the folder of the first report file asked for; the current folder when there is none), named
// after the model (as a safe file name).
std::filesystem::path default_scores_path(const EvalFlags& f, const std::string& name) {
  std::filesystem::path folder;
  for (const std::string* p :
       {&f.report.json, &f.report.csv, &f.report.markdown, &f.report.html, &f.per_example}) {
    if (!p->empty()) {
      folder = std::filesystem::path(*p).parent_path();
      break;
    }
  }
  return folder / (safe_file_name(name) + ".scores.jsonl");
}

// Two official scores files with the same labels and scores equal up to kSameScore (a rerun of
// one model may differ in the last bits with another batch size or thread count).
bool same_scores(const std::string& a, const std::string& b) {
  constexpr double kSameScore = 1e-4;  // relative; other models differ by far more
  std::istringstream sa(a), sb(b);
  std::string la, lb;
  while (true) {
    const bool more_a = static_cast<bool>(std::getline(sa, la));
    const bool more_b = static_cast<bool>(std::getline(sb, lb));
    if (more_a != more_b) return false;
    if (!more_a) return true;
    const auto ja = nlohmann::json::parse(la, nullptr, false);
    const auto jb = nlohmann::json::parse(lb, nullptr, false);
    if (!ja.is_object() || !jb.is_object() || ja.value("label", "") != jb.value("label", "") ||
        !ja.contains("score") || !ja["score"].is_number() || !jb.contains("score") ||
        !jb["score"].is_number())
      return false;
    const double x = ja["score"].get<double>(), y = jb["score"].get<double>();
    if (std::abs(x - y) > kSameScore * std::max(1.0, std::abs(y))) return false;
  }
}

// A default scores file is replaced only when it holds these very scores (the same model on
// the same data) or with --force: two models in folders of the same name must not silently
// overwrite each other's runs.
void check_default_scores(const std::filesystem::path& path, const std::string& content,
                          bool force) {
  std::error_code ec;
  if (force || !std::filesystem::is_regular_file(path, ec)) return;
  if (same_scores(read_file(path), content)) return;
  throw UsageError(path.string() + ": exists and holds other scores (another model's run?)",
                   "pass --force to replace it, or --scores-out FILE to write elsewhere");
}

int run(const EvalFlags& f) {
  check_shard_model(f.model.shard, f.model.model);
  const int sources = !f.scores.empty() + !f.scorer.empty() + !f.model.model.empty();
  if (sources != 1) {
    throw UsageError("give exactly one of --scores FILE, --scorer KIND or --model DIR");
  }
  EvalRequest req;
  req.data = f.data;
  req.images = f.images;
  req.tags = f.tags;
  req.covariates = f.covariates;
  req.options = f.stats.resolve();
  std::unique_ptr<VlModel> model;  // outlives the scorer
  std::unique_ptr<Scorer> scorer;
  std::string scores_out = f.scores_out;
  bool default_scores = false;
  if (!f.model.model.empty()) {
    model = f.model.open("eval", Ability::PairScores);
    const std::string name = f.name.empty() ? model->name() : f.name;
    scorer = make_model_scorer(*model, name);
    // A model run always keeps its scores, so it can be re-scored or compared later.
    if (scores_out.empty()) {
      scores_out = default_scores_path(f, name).string();
      default_scores = true;
    }
  } else if (!f.scores.empty()) {
    scorer = make_scores_file_scorer(f.scores, f.name);
  } else {
    scorer = make_baseline_scorer(f.scorer, req.options.seed);
  }
  WinogroundDataset dataset = load_dataset(f.data);
  dataset.images = f.images;
  if (!f.perplexity.empty() && !f.lm.model.empty()) {
    throw UsageError("give --perplexity FILE or --lm DIR, not both");
  }
  if (!f.perplexity.empty()) {
    // The perplexity columns of a `winokit perplexity` table: perplexity_exp2 (the official
    // computation) and perplexity (textbook); other columns are ignored.
    bool found = false;
    auto covs = load_covariates(f.perplexity, dataset);
    if (!covs.empty()) note_ignored_ids(f.perplexity, covs[0].ignored_ids, dataset.examples.size());
    for (const char* name : {kPerplexityOfficial, kPerplexityTextbook}) {
      for (auto& cov : covs) {
        if (cov.name != name) continue;
        req.extra_covariates.push_back(std::move(cov));
        found = true;
      }
    }
    if (!found) {
      throw InputError({f.perplexity, 1, "perplexity"}, "no perplexity column",
                       "write the file with winokit perplexity, or pass it with --covariate");
    }
  } else if (!f.lm.model.empty()) {
    LmRequest lm = f.lm;
    lm.threads = f.model.threads;
    lm.no_cache = f.model.no_cache;
    lm.cache_dir = f.model.cache_dir;
    LmRun run = run_perplexity(dataset, lm);
    for (auto& cov : perplexity_covariates(dataset, run.values, f.lm.model))
      req.extra_covariates.push_back(std::move(cov));
    std::cerr << "winokit: " << run.model_name << " perplexity of " << run.values.size()
              << " captions (" << run.cached << " from the cache); " << run.definition << "\n";
  }
  EvalRun r = run_evaluation(std::move(dataset), req, *scorer, f.name);
  if (default_scores && !shard_active())
    check_default_scores(scores_out, official_scores_jsonl(r.dataset, r.scores), f.force);
  OutputSet out;
  add_eval_outputs(r, output_paths(f.report, f.per_example, scores_out), out);
  commit(out);
  if (!f.model.model.empty() && !shard_active()) {
    const auto& scorer_record = r.context.provenance["scorer"];
    const auto& e = scorer_record["embeddings"];
    if (e.contains("pairs_computed")) {
      // A cross-encoder scores each (caption, image) pair in a joint forward pass: its cache
      // holds pair scores.
      std::cerr << "winokit: " << scorer_record.value("family", std::string("model"))
                << ": caption-image pairs: " << e["pairs_computed"] << " computed, "
                << e["pairs_cached"] << " from the cache (" << e["images_computed"] << " images, "
                << e["captions_computed"] << " captions encoded)\n";
    } else {
      std::cerr << "winokit: embeddings: " << e["images_computed"] << " images computed, "
                << e["images_cached"] << " from the cache; " << e["captions_computed"]
                << " captions computed, " << e["captions_cached"] << " from the cache\n";
    }
    std::cerr << "winokit: scores written to " << scores_out << "\n";
  }
  f.report.print(r.markdown);
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
  cmd->add_option("--images", flags->images,
                  "Image folder or .zip, when not images/ (or images.zip) beside examples.jsonl");
  cmd->add_option("--scores", flags->scores,
                  "Scores file: official JSONL, per-example JSONL, or CSV/TSV table");
  cmd->add_option("--scorer", flags->scorer, "Built-in baseline: random, bag-of-words, oracle")
      ->check(CLI::IsMember(baseline_scorer_kinds()));
  cmd->add_option("--name", flags->name, "Model name shown in the reports");
  cmd->add_option("--tags", flags->tags, "Extra tag set (JSON id -> tags), FILE or NAME=FILE");
  cmd->add_option("--covariate", flags->covariates,
                  "Covariate table (id[, caption], numeric columns) to correlate with correctness");
  cmd->add_option("--perplexity", flags->perplexity,
                  "Caption perplexity table from `winokit perplexity` (Table 6, left)");
  cmd->add_option("--lm", flags->lm.model,
                  "Language-model folder (GPT-2 as in the paper; llama, qwen2): compute caption "
                  "perplexities (cached) for Table 6, left");
  cmd->add_flag("--lm-bos", flags->lm.bos,
                "With --lm: prepend the model's start token (see perplexity --bos)");
  flags->report.add_to(*cmd, {.csv = "Write the CSV report (one row per group and metric)",
                              .html = "Write the self-contained HTML report",
                              .html_images = true});
  cmd->add_option("--per-example", flags->per_example, "Write per-example outcomes (JSONL)");
  cmd->add_option("--scores-out", flags->scores_out,
                  "Write the scores in the official JSONL (with --model, by default "
                  "MODEL.scores.jsonl beside the other outputs)");
  cmd->add_flag("--force", flags->force,
                "With --model: replace a default scores file that holds other scores");
  flags->stats.add_to(*cmd);
  flags->model.add_to(*cmd, /*required=*/false);
  cmd->callback([flags, &exit_code] { exit_code = guarded([&] { return run(*flags); }); });
}

}  // namespace winokit::cli
