#include "eval_run.hpp"

#include "common.hpp"
#include "winokit/report/csv_report.hpp"
#include "winokit/report/html_report.hpp"
#include "winokit/report/json_report.hpp"
#include "winokit/report/markdown.hpp"

namespace winokit::cli {

EvalRun run_evaluation(const EvalRequest& req, Scorer& scorer, const std::string& name) {
  WinogroundDataset dataset = load_dataset(req.data);
  dataset.images = req.images;
  return run_evaluation(std::move(dataset), req, scorer, name);
}

EvalRun run_evaluation(WinogroundDataset dataset, const EvalRequest& req, Scorer& scorer,
                       const std::string& name) {
  EvalRun r;
  r.dataset = std::move(dataset);
  for (const auto& spec : req.tags) {
    r.inputs.tag_sets.push_back(load_tag_set(spec, r.dataset));
    const TagSet& set = r.inputs.tag_sets.back();
    note_ignored_ids(set.file, set.ignored_ids, r.dataset.examples.size());
  }
  for (const auto& file : req.covariates) {
    auto covs = load_covariates(file, r.dataset);
    if (!covs.empty()) note_ignored_ids(file, covs[0].ignored_ids, r.dataset.examples.size());
    r.inputs.covariates.insert(r.inputs.covariates.end(), covs.begin(), covs.end());
  }
  r.inputs.covariates.insert(r.inputs.covariates.end(), req.extra_covariates.begin(),
                             req.extra_covariates.end());
  r.scores = scorer.score(r.dataset);
  r.result = evaluate(r.dataset, r.scores, r.inputs, req.options);
  r.context = make_context(r.dataset, name.empty() ? scorer.name() : name, scorer.describe(),
                           r.inputs, req.options);
  r.markdown = markdown_report(r.result, r.context);
  return r;
}

OutputPaths output_paths(const ReportFlags& report, const std::string& per_example,
                         const std::string& scores_out) {
  return {report.json, report.csv,      per_example,    scores_out,
          report.html, report.markdown, report.images()};
}

void add_eval_outputs(const EvalRun& r, const OutputPaths& p, OutputSet& out) {
  if (!p.json.empty()) out.add(p.json, json_report(r.result, r.context).dump(2) + "\n");
  if (!p.csv.empty()) out.add(p.csv, csv_report(r.result, r.context));
  if (!p.per_example.empty()) {
    out.add(p.per_example, per_example_jsonl(r.dataset, r.scores, r.result, r.inputs.tag_sets));
  }
  if (!p.scores_out.empty()) out.add(p.scores_out, official_scores_jsonl(r.dataset, r.scores));
  if (!p.html.empty()) {
    ExampleBrowser browser{
        &r.dataset,
        {r.context.model},
        {r.scores},
        r.inputs.tag_sets,
        example_images(r.dataset, p.html_images, std::filesystem::path(p.html).parent_path())};
    out.add(p.html, html_report(r.result, r.context, &browser));
  }
  if (!p.markdown.empty()) out.add(p.markdown, r.markdown);
}

}  // namespace winokit::cli
