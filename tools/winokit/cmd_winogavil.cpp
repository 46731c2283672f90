// winokit winogavil: score WinoGAViL associations (a model zero-shot, or a predictions column).
#include <iostream>

#include "commands.hpp"
#include "common.hpp"
#include "winokit/association_solver.hpp"
#include "winokit/error.hpp"
#include "winokit/files.hpp"
#include "winokit/version.hpp"
#include "winokit/winogavil_report.hpp"

namespace winokit::cli {

namespace {

struct WinogavilFlags {
  std::string data, images, captions, column, name, types, json, csv, html, markdown, predictions_out;
  std::string prompt_template = "{A} {cue}";
  std::uint64_t seed = 0;
  std::size_t bootstrap = 10000;
  double confidence = 0.95;
  bool quiet = false;
  ModelFlags model;
};

int run(const WinogavilFlags& f) {
  const bool with_model = !f.model.model.empty();
  if (with_model == !f.column.empty()) {
    throw UsageError("give either --model DIR (with --images DIR or --captions CSV) or --predictions-column NAME");
  }
  if (with_model && f.images.empty() == f.captions.empty()) {
    throw UsageError("with --model, give exactly one of --images DIR or --captions CSV");
  }
  AssociationDataset ds = load_winogavil(f.data);
  if (!f.types.empty()) load_association_types(ds, f.types);
  std::vector<std::vector<std::string>> predictions;
  std::string model_name_ = f.name;
  nlohmann::json source;
  if (with_model) {
    if (model_name_.empty()) model_name_ = model_name(f.model.model);
    ClipRuntime rt = f.model.load();
    AssociationSolveOptions so;
    so.prompt_template = f.prompt_template;
    SolveResult solved = f.images.empty()
                             ? solve_with_captions(rt, ds, load_candidate_captions(f.captions), so)
                             : solve_with_images(rt, ds, resolve_candidate_images(ds, f.images), so);
    predictions = std::move(solved.predictions);
    source = rt.describe();
    source["prompt_template"] = f.prompt_template;
    source["candidates"] = f.images.empty() ? "captions (text tower)" : "images";
    source["embeddings"] = {{"images_computed", solved.stats.images_computed},
                            {"images_cached", solved.stats.images_cached},
                            {"texts_computed", solved.stats.texts_computed},
                            {"texts_cached", solved.stats.texts_cached}};
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
    source = {{"kind", "predictions-column"}, {"column", f.column}};
  }
  AssociationOptions o;
  o.seed = f.seed;
  o.bootstrap_resamples = f.bootstrap;
  o.confidence = f.confidence;
  AssociationResult r = evaluate_associations(ds, predictions, o);
  nlohmann::json provenance = {{"tool", "winokit"},
                               {"version", kVersion},
                               {"data", {{"file", ds.file}, {"sha256", ds.sha256}, {"n", ds.instances.size()}}},
                               {"predictions", source},
                               {"options", {{"seed", o.seed}, {"bootstrap_resamples", o.bootstrap_resamples},
                                            {"confidence", o.confidence}}}};
  const std::string md = markdown_associations(r, model_name_);
  OutputSet out;
  if (!f.json.empty()) out.add(f.json, json_associations(r, model_name_, provenance).dump(2) + "\n");
  if (!f.csv.empty()) out.add(f.csv, csv_associations(r));
  if (!f.html.empty()) out.add(f.html, html_associations(r, model_name_, provenance));
  if (!f.markdown.empty()) out.add(f.markdown, md);
  if (!f.predictions_out.empty()) out.add(f.predictions_out, predictions_csv(ds, predictions, r, model_name_));
  out.commit();
  if (!f.quiet && f.markdown.empty()) std::cout << md;
  return 0;
}

}  // namespace

void add_winogavil(CLI::App& app, int& exit_code) {
  auto f = std::make_shared<WinogavilFlags>();
  CLI::App* cmd = app.add_subcommand(
      "winogavil", "WinoGAViL associations: Jaccard scores of a model (zero-shot) or of a predictions column");
  cmd->add_option("--data", f->data, "WinoGAViL CSV (published layout)")->required();
  cmd->add_option("--images", f->images, "Folder of candidate images (<name>.<ext>)");
  cmd->add_option("--captions", f->captions, "Text-only solving: CSV of image name -> caption");
  cmd->add_option("--predictions-column", f->column, "Score a predictions column of the CSV instead of a model");
  cmd->add_option("--name", f->name, "Model name in the reports and the predictions CSV columns");
  cmd->add_option("--types", f->types, "Association types: CSV with ID and annotations_label columns");
  cmd->add_option("--template", f->prompt_template, "Prompt: {A}/{a} article, {cue}")->capture_default_str();
  cmd->add_option("--json", f->json, "Write the JSON report");
  cmd->add_option("--csv", f->csv, "Write the CSV report");
  cmd->add_option("--html", f->html, "Write the HTML report");
  cmd->add_option("--markdown", f->markdown, "Write the markdown tables to a file");
  cmd->add_option("--predictions-out", f->predictions_out,
                  "Write the input CSV with <model>_predictions and <model>_jaccard columns");
  cmd->add_option("--seed", f->seed, "Bootstrap seed")->capture_default_str();
  cmd->add_option("--bootstrap", f->bootstrap, "Bootstrap resamples")->capture_default_str()
      ->check(CLI::Range(std::size_t{2}, std::size_t{10'000'000}));
  cmd->add_option("--confidence", f->confidence, "Interval level")->capture_default_str()
      ->check(CLI::Range(0.5, 0.9999));
  cmd->add_flag("--quiet", f->quiet, "Do not print the tables");
  f->model.add_to(*cmd, /*required=*/false);
  cmd->callback([f, &exit_code] { exit_code = guarded([&] { return run(*f); }); });
}

}  // namespace winokit::cli
