// winokit winogavil: score WinoGAViL associations (a model zero-shot, or a predictions column).
#include <iostream>

#include "commands.hpp"
#include "common.hpp"
#include "winokit/core/error.hpp"
#include "winokit/data/swow.hpp"
#include "winokit/eval/association_solver.hpp"
#include "winokit/eval/supervised.hpp"
#include "winokit/io/files.hpp"
#include "winokit/report/provenance.hpp"
#include "winokit/report/winogavil_report.hpp"
#include "winokit/version.hpp"

namespace winokit::cli {

namespace {

struct WinogavilFlags {
  std::string data, images, captions, column, name, types, predictions_out;
  std::string prompt_template = "{A} {cue}";
  std::uint64_t seed = 0;
  std::size_t bootstrap = 10000;
  double confidence = 0.95;
  ReportFlags report;
  bool supervised = false;
  int epochs = 7;
  std::string supervised_epoch = "first";
  ModelFlags model;
};

struct SwowFlags {
  std::string graph, images;
  ReportFlags output;  // --out
  SwowOptions options;
};

int run(const WinogavilFlags& f) {
  check_shard_model(f.model.shard, f.model.model);
  const bool with_model = !f.model.model.empty();
  if (with_model == !f.column.empty()) {
    throw UsageError(
        "give either --model DIR (with --images DIR or --captions CSV) or --predictions-column "
        "NAME");
  }
  if (with_model && f.images.empty() == f.captions.empty()) {
    throw UsageError("with --model, give exactly one of --images DIR or --captions CSV");
  }
  AssociationDataset ds = load_winogavil(f.data);
  if (!f.types.empty()) load_association_types(ds, f.types);
  std::vector<std::vector<std::string>> predictions;
  std::string model_name_ = f.name;
  Provenance provenance;
  std::string supervised_md;
  nlohmann::json supervised_json;
  if (f.supervised && !with_model) throw UsageError("--supervised needs --model");
  if (with_model) {
    // Text-only candidates and --supervised need a dual encoder's embeddings.
    std::unique_ptr<VlModel> model =
        !f.captions.empty() ? f.model.open("winogavil --captions", Ability::Embeddings)
        : f.supervised      ? f.model.open("winogavil --supervised", Ability::Embeddings)
                            : f.model.open("winogavil", Ability::PairScores);
    if (model_name_.empty()) model_name_ = model->name();
    AssociationSolveOptions so;
    so.prompt_template = f.prompt_template;
    SolveResult solved =
        f.images.empty()
            ? solve_with_captions(*model->dual_encoder(), ds, load_candidate_captions(f.captions),
                                  so)
            : solve_with_images(*model, ds, resolve_candidate_images(ds, f.images), so);
    predictions = std::move(solved.predictions);
    if (f.supervised) {
      SupervisedOptions so2;
      so2.epochs = f.epochs;
      so2.select = f.supervised_epoch == "best"   ? EpochSelection::Best
                   : f.supervised_epoch == "last" ? EpochSelection::Last
                                                  : EpochSelection::First;
      if (!f.model.quiet_progress) {
        so2.on_run = [bar = progress_bar()](std::size_t done, std::size_t total) {
          bar("supervised runs", done, total);
        };
      }
      SupervisedResult sup =
          run_supervised(ds, solved.prompt_embeds, solved.candidate_embeds, predictions, so2);
      supervised_md = markdown_supervised(sup, so2.seeds.size());
      supervised_json = json_supervised(sup);
    }
    provenance.model("predictions", model->describe())
        .detail("predictions", "prompt_template", f.prompt_template)
        .detail("predictions", "candidates",
                f.images.empty()        ? "captions (text tower)"
                : model->dual_encoder() ? "images"
                                        : "images (joint forward pass of the prompt with each "
                                          "candidate)")
        .detail("predictions", "embeddings", embed_stats_json(solved.stats));
  } else {
    predictions = predictions_from_column(ds, f.column);
    if (model_name_.empty()) {
      model_name_ = f.column;
      const std::string suffix = "_predictions";
      if (model_name_.size() > suffix.size() &&
          model_name_.compare(model_name_.size() - suffix.size(), suffix.size(), suffix) == 0) {
        model_name_.resize(model_name_.size() - suffix.size());
      }
    }
    provenance.source("predictions", "predictions-column", "column", f.column);
  }
  AssociationOptions o;
  o.seed = f.seed;
  o.bootstrap_resamples = f.bootstrap;
  o.confidence = f.confidence;
  AssociationResult r = evaluate_associations(ds, predictions, o);
  provenance.input("data", ds.file, ds.sha256, ds.instances.size())
      .option("seed", o.seed)
      .option("bootstrap_resamples", o.bootstrap_resamples)
      .option("confidence", o.confidence);
  const std::string md = markdown_associations(r, model_name_) + supervised_md;
  OutputSet out;
  f.report.add_outputs(
      out,
      {{ReportFormat::Json,
        [&] {
          nlohmann::json report = json_associations(r, model_name_, provenance.json());
          if (!supervised_json.is_null()) report["supervised"] = supervised_json;
          return report.dump(2) + "\n";
        }},
       {ReportFormat::Csv, [&] { return csv_associations(r); }},
       {ReportFormat::Html, [&] { return html_associations(r, model_name_, provenance.json()); }},
       {ReportFormat::Markdown, [&] { return md; }}});
  if (!f.predictions_out.empty())
    out.add(f.predictions_out, predictions_csv(ds, predictions, r, model_name_));
  commit(out);
  f.report.print(md);
  return 0;
}

}  // namespace

void add_winogavil(CLI::App& app, int& exit_code) {
  auto f = std::make_shared<WinogavilFlags>();
  CLI::App* cmd = app.add_subcommand(
      "winogavil",
      "WinoGAViL associations: Jaccard scores of a model (zero-shot) or of a predictions column");
  cmd->add_option("--data", f->data, "WinoGAViL CSV (published layout)")->required();
  cmd->add_option("--images", f->images, "Folder of candidate images (<name>.<ext>)");
  cmd->add_option("--captions", f->captions, "Text-only solving: CSV of image name -> caption");
  cmd->add_option("--predictions-column", f->column,
                  "Score a predictions column of the CSV instead of a model");
  cmd->add_option("--name", f->name, "Model name in the reports and the predictions CSV columns");
  cmd->add_option("--types", f->types,
                  "Association types: CSV with ID and annotations_label columns");
  cmd->add_option("--template", f->prompt_template, "Prompt: {A}/{a} article, {cue}")
      ->capture_default_str();
  f->report.add_to(*cmd, {.csv = "Write the CSV report"});
  cmd->add_option("--predictions-out", f->predictions_out,
                  "Write the input CSV with <model>_predictions and <model>_jaccard columns");
  cmd->add_option("--seed", f->seed, "Bootstrap seed")->capture_default_str();
  cmd->add_option("--bootstrap", f->bootstrap, "Bootstrap resamples")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{2}, std::size_t{10'000'000}));
  cmd->add_option("--confidence", f->confidence, "Interval level")
      ->capture_default_str()
      ->check(CLI::Range(0.5, 0.9999));
  cmd->add_flag(
      "--supervised", f->supervised,
      "Also train and report the supervised baseline (the official WinoGAViL recipe, five runs "
      "per candidate-count group) on the model's embeddings");
  cmd->add_option("--epochs", f->epochs, "Supervised baseline epochs")->capture_default_str();
  cmd->add_option("--supervised-epoch", f->supervised_epoch,
                  "Which epoch's model is tested: first (the official script's --load_epoch 0), "
                  "best (validation Jaccard) or last")
      ->capture_default_str()
      ->check(CLI::IsMember({"first", "best", "last"}));
  f->model.add_to(*cmd, /*required=*/false);
  cmd->callback([f, &exit_code] { exit_code = guarded([&] { return run(*f); }); });

  auto s = std::make_shared<SwowFlags>();
  CLI::App* swow = app.add_subcommand(
      "swow", "Generate WinoGAViL-style instances from a Small World of Words association graph");
  swow->add_option("--graph", s->graph, "SWOW CSV: cue,R1,R2,R3 or cue,response,strength")
      ->required();
  swow->add_option("--images", s->images, "Folder of candidate images (<name>.<ext>)")->required();
  s->output.add_to(*swow, ReportFlags::Help::only_out("Output CSV in the WinoGAViL layout", true));
  swow->add_option("--count", s->options.max_instances, "At most this many instances")
      ->capture_default_str();
  swow->add_option("--seed", s->options.seed, "Seed")->capture_default_str();
  swow->add_option("--candidates", s->options.candidate_counts, "Candidate counts to draw from")
      ->capture_default_str()
      ->delimiter(',');
  swow->callback([s, &exit_code] {
    exit_code = guarded([&] {
      std::size_t made = 0;
      std::string csv =
          generate_swow_instances(load_swow(s->graph), image_names(s->images), s->options, &made);
      if (made == 0)
        throw UsageError("no cue has enough associations with images",
                         "check the graph and the images folder");
      write_file_atomic(s->output.out, csv);
      std::cerr << "winokit: wrote " << made << " instances to " << s->output.out << "\n";
      return 0;
    });
  });
}

}  // namespace winokit::cli
