// The eval pipeline shared by `eval` and `demo`: dataset -> scorer -> evaluation -> reports.
#pragma once

#include <string>
#include <vector>

#include "winokit/eval/evaluation.hpp"
#include "winokit/eval/scorer.hpp"
#include "winokit/io/files.hpp"
#include "winokit/report/csv_report.hpp"
#include "winokit/report/example_browser.hpp"
#include "winokit/report/format.hpp"
#include "winokit/report/html_report.hpp"
#include "winokit/report/json_report.hpp"
#include "winokit/report/markdown.hpp"

namespace winokit::cli {

struct EvalRequest {
  std::string data;
  std::string images;  // --images: a folder or zip of the dataset's images, if not beside it
  std::vector<std::string> tags, covariates;
  std::vector<Covariate> extra_covariates;  // computed ones (eval --lm, --perplexity)
  EvalOptions options;
};

struct EvalRun {
  WinogroundDataset dataset;
  EvalInputs inputs;
  std::vector<WinogroundScores> scores;
  EvalResult result;
  ReportContext context;
  std::string markdown;
};

// Where an evaluation's outputs go ("" for none), in the order they are written.
struct OutputPaths {
  std::string json, csv, per_example, scores_out, html, markdown;
  HtmlImages html_images = HtmlImages::Embed;  // the example browser's images
};
struct ReportFlags;
// The paths of a command's report flags (--json, --csv, --html, --html-images, --markdown).
OutputPaths output_paths(const ReportFlags& report, const std::string& per_example,
                         const std::string& scores_out);

EvalRun run_evaluation(const EvalRequest& req, Scorer& scorer, const std::string& name);
EvalRun run_evaluation(WinogroundDataset dataset, const EvalRequest& req, Scorer& scorer,
                       const std::string& name);
void add_eval_outputs(const EvalRun& run, const OutputPaths& paths, OutputSet& out);

}  // namespace winokit::cli
