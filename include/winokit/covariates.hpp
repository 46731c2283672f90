// Per-example numeric covariates to correlate with correctness (e.g. caption perplexity).
// A covariate file is a table (CSV or white-space separated) with an `id` column, an optional
// caption column (`caption`, `caption_index`: 0 or 1) for per-caption values, and one or more
// numeric columns; each numeric column is one covariate. Per-caption values are averaged over
// an example's two captions (both must be given).
//
//   auto covs = winokit::load_covariates("perplexity.csv", dataset);
//   winokit::Covariate len = winokit::caption_length_covariate(dataset);
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "winokit/winoground.hpp"

namespace winokit {

struct Covariate {
  std::string name;
  std::string source;                         // file, or "built-in"
  std::string sha256;                         // of the file; empty for built-ins
  std::vector<std::optional<double>> values;  // aligned with dataset.examples
};

// Mean number of white-space separated words of the two captions (the Winoground paper's
// Table 6, right).
Covariate caption_length_covariate(const Dataset& dataset);

std::vector<Covariate> load_covariates(const std::string& file, const Dataset& dataset);

}  // namespace winokit
