// The eval pipeline shared by `eval` and `demo`: dataset -> scorer -> evaluation -> reports.
#pragma once

#include <string>
#include <vector>

#include "winokit/eval/evaluation.hpp"
#include "winokit/eval/scorer.hpp"
#include "winokit/io/files.hpp"
#include "winokit/report.hpp"

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

struct OutputPaths {
  std::string json, csv, per_example, scores_out, html, markdown;
  HtmlImages html_images = HtmlImages::Embed;  // the example browser's images
};

EvalRun run_evaluation(const EvalRequest& req, Scorer& scorer, const std::string& name);
EvalRun run_evaluation(WinogroundDataset dataset, const EvalRequest& req, Scorer& scorer,
                       const std::string& name);
void add_eval_outputs(const EvalRun& run, const OutputPaths& paths, OutputSet& out);

}  // namespace winokit::cli
