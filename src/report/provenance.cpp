#include "winokit/report/provenance.hpp"

#include "winokit/version.hpp"

namespace winokit {

using Json = nlohmann::json;

Json options_json(const EvalOptions& o) {
  return {
      {"seed", o.seed},
      {"bootstrap_resamples", o.bootstrap_resamples},
      {"confidence", o.confidence},
      {"folds", o.folds},
      {"fold_split", o.fold_split == FoldSplit::IdOrder ? "id-order" : "paper"},
      {"fold_seed", o.fold_seed},
      {"alpha", o.alpha},
      {"secondary_grouping", o.secondary == SecondaryGrouping::Membership ? "membership" : "exact"},
      {"threads", 1}};
}

Json dataset_json(const WinogroundDataset& dataset) {
  return {{"examples", dataset.examples_path.string()},
          {"sha256", dataset.examples_sha256},
          {"n", dataset.examples.size()}};
}

Provenance::Provenance() : record_({{"tool", "winokit"}, {"version", kVersion}}) {}

Provenance& Provenance::dataset(const WinogroundDataset& dataset) {
  record_["dataset"] = dataset_json(dataset);
  return *this;
}

Provenance& Provenance::input(const std::string& key, const std::string& file,
                              const std::string& sha256) {
  record_[key] = {{"file", file}, {"sha256", sha256}};
  return *this;
}

Provenance& Provenance::input(const std::string& key, const std::string& file,
                              const std::string& sha256, std::size_t n) {
  record_[key] = {{"file", file}, {"sha256", sha256}, {"n", n}};
  return *this;
}

Provenance& Provenance::inputs(const std::string& key) {
  if (!record_.contains(key)) record_[key] = Json::array();
  return *this;
}

Provenance& Provenance::list_input(const std::string& key, const InputRecord& record) {
  inputs(key);
  Json entry = {{"file", record.file}, {"sha256", record.sha256}};
  if (record.name) entry["name"] = *record.name;
  if (record.format) entry["format"] = *record.format;
  record_[key].push_back(std::move(entry));
  return *this;
}

Provenance& Provenance::model(const std::string& key, const Json& description) {
  record_[key] = description;
  return *this;
}

Provenance& Provenance::source(const std::string& key, const std::string& kind,
                               const std::string& field, const std::string& value) {
  record_[key] = {{"kind", kind}, {field, value}};
  return *this;
}

Provenance& Provenance::detail(const std::string& key, const std::string& field,
                               const Json& value) {
  record_[key][field] = value;
  return *this;
}

Provenance& Provenance::options(const EvalOptions& options) {
  record_["options"] = options_json(options);
  return *this;
}

Provenance& Provenance::option(const std::string& name, const Json& value) {
  record_["options"][name] = value;
  return *this;
}

Provenance& Provenance::field(const std::string& key, const Json& value) {
  record_[key] = value;
  return *this;
}

}  // namespace winokit
