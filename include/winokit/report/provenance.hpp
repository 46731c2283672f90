// The provenance record of every report (src/report/provenance.cpp): which tool and version
// wrote it, every input with its hash, the model (name, weights hash, precision, threads, as its
// runtime describes it), the options and seeds. One builder, so that the JSON, HTML and markdown
// outputs of every command name their inputs the same way.
//
//   winokit::Provenance p;                       // {"tool": "winokit", "version": ...}
//   p.dataset(dataset)                           // "dataset": {examples, sha256, n}
//       .model("scorer", runtime.describe())     // "scorer": {...}
//       .inputs("tag_sets")                      // "tag_sets": [] even when none is given
//       .list_input("tag_sets", {"why", "hard.json", sha256, {}})
//       .options(eval_options);                  // "options": {seed, bootstrap_resamples, ...}
//   nlohmann::json record = p.json();
//
// The record is a JSON object, so its keys are written in sorted order whatever order they are
// added in.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "winokit/eval/evaluation.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(report);

namespace winokit {

// One input file of a list: {"name", "file", "sha256", "format"}; name and format are written
// when given.
struct InputRecord {
  std::optional<std::string> name;
  std::string file, sha256;
  std::optional<std::string> format;
};

class Provenance {
 public:
  // Starts the record with the tool and its version.
  Provenance();

  // The Winoground-style dataset: "dataset": {"examples": path, "sha256", "n"}.
  Provenance& dataset(const WinogroundDataset& dataset);
  // One input file under `key`: {"file", "sha256"}, and "n" (its records) when given.
  Provenance& input(const std::string& key, const std::string& file, const std::string& sha256);
  Provenance& input(const std::string& key, const std::string& file, const std::string& sha256,
                    std::size_t n);
  // A list of input files under `key`, recorded (empty) even when nothing is added to it.
  Provenance& inputs(const std::string& key);
  // Appends one input file to the list under `key` (creating the list).
  Provenance& list_input(const std::string& key, const InputRecord& record);
  // Where the scores or states come from, under `key` ("scorer", "model", "embeddings",
  // "scores", "predictions"): a runtime's own description (model name, weights hash, precision,
  // preprocessing, threads) or a file's ({"kind", "file"}).
  Provenance& model(const std::string& key, const nlohmann::json& description);
  // A file or column that stands in for a model under `key`: {"kind": kind, field: value}
  // ("file" for an embeddings file or a score matrix, "column" for a predictions column).
  Provenance& source(const std::string& key, const std::string& kind, const std::string& field,
                     const std::string& value);
  // One more field of the record under `key` (how a model was run: its prompt, its cache use).
  Provenance& detail(const std::string& key, const std::string& field, const nlohmann::json& value);
  // The statistics options of an evaluation: "options": {seed, bootstrap_resamples, confidence,
  // folds, alpha, secondary_grouping, threads}.
  Provenance& options(const EvalOptions& options);
  // One option (seed, resamples, ...) under "options".
  Provenance& option(const std::string& name, const nlohmann::json& value);
  // Any other field of the record (a list of variant files, a count of rows).
  Provenance& field(const std::string& key, const nlohmann::json& value);

  const nlohmann::json& json() const { return record_; }

 private:
  nlohmann::json record_;
};

// The statistics options as the provenance records them.
nlohmann::json options_json(const EvalOptions& options);
// {"examples": path, "sha256": ..., "n": ...}: how every result file names its dataset.
nlohmann::json dataset_json(const WinogroundDataset& dataset);

}  // namespace winokit
