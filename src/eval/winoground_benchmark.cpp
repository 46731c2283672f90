// Winoground as a registered benchmark: items are the examples (2 captions x 2 images), the
// metrics are the text, image and group scores (winokit/eval/evaluation.hpp), with the fold-t
// interval of the paper and the collapsed-tag breakdown as report sections. `winokit eval` is
// this benchmark's full front end (tag sets, covariates, every report format).
#include <cstdio>
#include <fstream>
#include <memory>

#include "winokit/core/error.hpp"
#include "winokit/data/winoground.hpp"
#include "winokit/eval/benchmark.hpp"
#include "winokit/eval/evaluation.hpp"
#include "winokit/eval/scorer.hpp"
#include "winokit/eval/scores.hpp"
#include "winokit/io/image_store.hpp"

namespace winokit {

namespace {

std::string percent_text(double proportion) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", proportion * 100);
  return b;
}

BenchmarkMetric metric(const std::string& name, const GroupStats& g, std::size_t m,
                       const EvalOptions& options) {
  BenchmarkMetric out{name + " score", g.metrics[m].value * 100, g.n, {}, {}, {}};
  if (g.metrics[m].fold_t && g.metrics[m].fold_t->ci.valid()) {
    out.low = g.metrics[m].fold_t->ci.low * 100;
    out.high = g.metrics[m].fold_t->ci.high * 100;
    out.method = fold_method_text(options);
  }
  return out;
}

// Looks at the first non-blank line within the first MiB (the readers cap lines at 1 MiB).
bool is_generic_layout(const std::filesystem::path& file) {
  constexpr std::size_t kHead = std::size_t{1} << 20;
  std::ifstream in(file, std::ios::binary);
  std::string head(kHead, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  std::size_t begin = 0;
  while (begin < head.size()) {
    std::size_t end = head.find('\n', begin);
    if (end == std::string::npos) end = head.size();
    const std::string_view line = std::string_view(head).substr(begin, end - begin);
    begin = end + 1;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const nlohmann::json row = nlohmann::json::parse(line, nullptr, false);
    return !row.is_discarded() && row.is_object() && row.contains("scores");
  }
  return false;
}

class WinogroundBenchmark final : public Benchmark {
 public:
  std::string name() const override { return "winoground"; }
  std::string title() const override { return "Winoground (Thrush et al., CVPR 2022)"; }
  std::string description() const override {
    return "2 captions x 2 images per example; text, image and group scores (ties wrong)";
  }

  BenchmarkData load(const BenchmarkLoadOptions& o) const override {
    auto dataset = std::make_shared<WinogroundDataset>(load_dataset(o.data));
    dataset->images = o.images;
    auto store = std::make_shared<ImageStore>(ImageStore::open(dataset->root, dataset->images));
    BenchmarkData data;
    data.benchmark = name();
    data.file = dataset->examples_path;
    data.sha256 = dataset->examples_sha256;
    for (const auto& ex : dataset->examples) {
      BenchmarkItem item;
      item.id = ex.id;
      item.texts = {ex.captions[0], ex.captions[1]};
      for (const auto& image : ex.images) {
        const ImageStore* s = store.get();
        item.images.push_back({image, [s, image] { return s->read(image); },
                               [s, image] { return s->file_of(image); }});
      }
      data.items.push_back(std::move(item));
    }
    data.native = dataset;
    data.keep_alive = store;
    return data;
  }

  // Winoground's own layouts (the official scores JSONL, per-example JSONL, tables), or the
  // generic one when the first line is a JSON object with "scores".
  std::vector<ItemScores> load_scores(const BenchmarkData& data,
                                      const std::filesystem::path& file) const override {
    if (is_generic_layout(file)) return Benchmark::load_scores(data, file);
    const auto& dataset = *std::any_cast<std::shared_ptr<WinogroundDataset>>(data.native);
    const auto pairs = make_scores_file_scorer(file.string())->score(dataset);
    std::vector<ItemScores> out;
    for (const auto& p : pairs) {
      ItemScores s;
      for (int c = 0; c < 2; ++c) {
        for (int i = 0; i < 2; ++i)
          s.push_back(p.s[pair_index(c, i)]);
      }
      out.push_back(std::move(s));
    }
    return out;
  }

  BenchmarkSummary evaluate(const BenchmarkData& data, const std::vector<ItemScores>& scores,
                            const BenchmarkOptions& o) const override {
    const auto& dataset = *std::any_cast<std::shared_ptr<WinogroundDataset>>(data.native);
    std::vector<WinogroundScores> pairs(scores.size());
    for (std::size_t e = 0; e < scores.size(); ++e) {
      for (int c = 0; c < 2; ++c) {
        for (int i = 0; i < 2; ++i)
          pairs[e].s[pair_index(c, i)] = scores[e][static_cast<std::size_t>(c * 2 + i)];
      }
    }
    EvalOptions options;
    options.seed = o.seed;
    options.bootstrap_resamples = o.bootstrap_resamples;
    options.confidence = o.confidence;
    const EvalResult r = winokit::evaluate(dataset, pairs, {}, options);
    BenchmarkSummary summary;
    for (std::size_t m = 0; m < kMetricCount; ++m)
      summary.metrics.push_back(metric(kMetricNames[m], r.overall, m, options));
    for (const auto& b : r.breakdowns) {
      ReportSection section{b.title, b.note, {"Subset", "N", "Text", "Image", "Group"}, {}};
      for (const auto& g : b.groups) {
        section.rows.push_back({g.name, std::to_string(g.n), percent_text(g.metrics[kText].value),
                                percent_text(g.metrics[kImage].value),
                                percent_text(g.metrics[kGroup].value)});
      }
      summary.sections.push_back(std::move(section));
    }
    nlohmann::json per = nlohmann::json::array();
    for (std::size_t e = 0; e < r.outcomes.size(); ++e) {
      per.push_back({{"id", dataset.examples[e].id},
                     {"text", r.outcomes[e].text},
                     {"image", r.outcomes[e].image},
                     {"group", r.outcomes[e].group}});
    }
    summary.details = {{"per_item", per}};
    for (std::size_t e = 0; e < scores.size(); ++e)
      summary.items.push_back({dataset.examples[e].collapsed_tag,
                               {1, 0, 0, 1},
                               winoground_style_checks(scores[e]),
                               {},
                               scores[e]});
    return summary;
  }
};

}  // namespace

std::unique_ptr<Benchmark> make_winoground_benchmark() {
  return std::make_unique<WinogroundBenchmark>();
}

}  // namespace winokit
