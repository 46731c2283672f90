// WinoGAViL as a registered benchmark: items are the instances (one cue prompt x its 5-12
// candidate images), a model's prediction is its k highest-scoring candidates (ties broken by
// candidate order, as the association solver does), and the metric is the mean Jaccard index
// with a seeded bootstrap interval, broken down by candidates and k. `winokit winogavil` is this
// benchmark's full front end (captions instead of images, predictions columns, the supervised
// baseline, every report format).
#include <algorithm>
#include <cstdio>
#include <memory>

#include "winokit/core/error.hpp"
#include "winokit/data/winogavil.hpp"
#include "winokit/eval/association.hpp"
#include "winokit/eval/association_solver.hpp"
#include "winokit/eval/benchmark.hpp"

namespace winokit {

namespace {

std::string percent_text(double proportion) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", proportion * 100);
  return b;
}

class WinogavilBenchmark final : public Benchmark {
 public:
  std::string name() const override { return "winogavil"; }
  std::string title() const override { return "WinoGAViL (Bitton et al., NeurIPS 2022)"; }
  std::string description() const override {
    return "1 cue x 5-12 candidate images per instance; pick the k associated; mean Jaccard";
  }

  BenchmarkData load(const BenchmarkLoadOptions& o) const override {
    auto ds = std::make_shared<AssociationDataset>(load_winogavil(o.data.string()));
    if (o.images.empty() && o.need_images) {
      throw UsageError("winogavil needs --images DIR: the folder of candidate images");
    }
    // A scores file needs no images: the candidates are named, not read.
    const bool with_images = !o.images.empty() && o.need_images;
    const auto files = with_images ? resolve_candidate_images(*ds, o.images)
                                   : std::map<std::string, std::filesystem::path>{};
    const std::string prompt = o.prompt_template.empty() ? "{A} {cue}" : o.prompt_template;
    BenchmarkData data;
    data.benchmark = name();
    data.file = ds->file;
    data.sha256 = ds->sha256;
    for (const auto& inst : ds->instances) {
      BenchmarkItem item;
      item.id = inst.id;
      item.texts = {cue_prompt(inst.cue, prompt)};
      for (const auto& c : inst.candidates) {
        if (with_images) {
          item.images.push_back(image_file_request(files.at(c).string(), c));
        } else {
          item.images.push_back({c,
                                 [c]() -> ImageBytes {
                                   throw UsageError("candidate image '" + c +
                                                    "' is needed: give --images DIR");
                                 },
                                 {}});
        }
      }
      data.items.push_back(std::move(item));
    }
    data.native = ds;
    return data;
  }

  BenchmarkSummary evaluate(const BenchmarkData& data, const std::vector<ItemScores>& scores,
                            const BenchmarkOptions& o) const override {
    const auto& ds = *std::any_cast<std::shared_ptr<AssociationDataset>>(data.native);
    std::vector<std::vector<std::string>> predictions;
    for (std::size_t i = 0; i < ds.instances.size(); ++i) {
      const auto& inst = ds.instances[i];
      predictions.push_back(select_top_k(inst.candidates, scores[i], inst.k()));
    }
    AssociationOptions options;
    options.seed = o.seed;
    options.bootstrap_resamples = o.bootstrap_resamples;
    options.confidence = o.confidence;
    const AssociationResult r = evaluate_associations(ds, predictions, options);
    BenchmarkSummary summary;
    BenchmarkMetric jaccard{"Jaccard", r.overall.mean * 100, r.overall.n, {}, {}, {}};
    if (r.overall.interval.valid()) {
      jaccard.low = r.overall.interval.low * 100;
      jaccard.high = r.overall.interval.high * 100;
      jaccard.method = "seeded bootstrap percentile";
    }
    summary.metrics.push_back(std::move(jaccard));
    for (const auto& b : r.breakdowns) {
      ReportSection section{b.title, b.note, {"Subset", "N", "Jaccard", "Random"}, {}};
      for (const auto& g : b.groups) {
        section.rows.push_back(
            {g.name, std::to_string(g.n), percent_text(g.mean), percent_text(g.chance)});
      }
      summary.sections.push_back(std::move(section));
    }
    nlohmann::json per = nlohmann::json::array();
    for (std::size_t i = 0; i < ds.instances.size(); ++i) {
      per.push_back({{"id", ds.instances[i].id},
                     {"prediction", predictions[i]},
                     {"jaccard", r.per_instance[i]}});
    }
    summary.details = {{"per_item", per}};
    for (std::size_t i = 0; i < ds.instances.size(); ++i) {
      const auto& inst = ds.instances[i];
      std::vector<std::uint8_t> truth(inst.candidates.size(), 0);
      for (std::size_t c = 0; c < inst.candidates.size(); ++c)
        truth[c] = std::find(inst.associations.begin(), inst.associations.end(),
                             inst.candidates[c]) != inst.associations.end();
      std::vector<ScoreComparison> comparisons;
      for (std::size_t a = 0; a < truth.size(); ++a)
        for (std::size_t b = 0; b < truth.size(); ++b)
          if (truth[a] && !truth[b]) comparisons.push_back({0, a, 0, b});
      char note[64];
      std::snprintf(note, sizeof note, "Jaccard %.2f%%", r.per_instance[i] * 100);
      summary.items.push_back(
          {std::to_string(inst.k()) + " of " + std::to_string(inst.n()) + " candidates",
           std::move(truth),
           {item_check("every association over every other candidate", scores[i],
                       inst.candidates.size(), std::move(comparisons))},
           note,
           scores[i]});
    }
    return summary;
  }
};

}  // namespace

std::unique_ptr<Benchmark> make_winogavil_benchmark() {
  return std::make_unique<WinogavilBenchmark>();
}

}  // namespace winokit
