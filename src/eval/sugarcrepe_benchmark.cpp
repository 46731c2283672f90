// SugarCrepe as a registered benchmark: an item is one COCO image with its true caption and its
// hard negative (texts: [caption, negative_caption]); the item is right when the true caption
// scores strictly above the negative, as the official main_eval.py (`1 if pos_score > neg_score
// else 0`: a tie is wrong). The metric is the accuracy of each subset, with a seeded bootstrap
// interval and a one-sided binomial test against the 50% of chance; the paper's categories
// (Replace, Swap, Add) are the macro averages of their subsets.
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>

#include "winokit/core/error.hpp"
#include "winokit/core/rng.hpp"
#include "winokit/data/sugarcrepe.hpp"
#include "winokit/eval/benchmark.hpp"
#include "winokit/eval/stats.hpp"

namespace winokit {

namespace {

constexpr double kChance = 0.5;  // two captions

std::string fixed(double v, int digits = 2) {
  char b[32];
  std::snprintf(b, sizeof b, "%.*f", digits, v);
  return b;
}

std::string p_text(double p) {
  char b[32];
  std::snprintf(b, sizeof b, p < 1e-4 ? "%.1e" : "%.4f", p);
  return b;
}

class SugarCrepeBenchmark final : public Benchmark {
 public:
  std::string name() const override { return "sugarcrepe"; }
  std::string title() const override {
    return "SugarCrepe (Hsieh et al., NeurIPS 2023 Datasets and Benchmarks)";
  }
  std::string description() const override {
    return "1 COCO image x its caption and a hard negative; accuracy per subset (replace, swap, "
           "add)";
  }

  BenchmarkData load(const BenchmarkLoadOptions& o) const override {
    auto ds = std::make_shared<SugarCrepeDataset>(load_sugarcrepe(o.data));
    if (o.images.empty() && o.need_images) {
      throw UsageError(
          "sugarcrepe needs --images DIR: COCO's val2017 folder (the images the "
          "items' filename fields name)");
    }
    const bool with_images = !o.images.empty() && o.need_images;
    if (with_images) {
      std::vector<std::filesystem::path> files;
      for (const auto& item : ds->items)
        files.push_back(o.images / item.filename);
      require_image_files(files, o.images.string());
    }
    BenchmarkData data;
    data.benchmark = name();
    data.file = ds->root;
    data.sha256 = ds->sha256;
    for (const auto& it : ds->items) {
      BenchmarkItem item;
      item.id = it.subset + "/" + it.key;
      item.texts = {it.caption, it.negative_caption};
      if (with_images) {
        item.images.push_back(image_file_request((o.images / it.filename).string(), it.filename));
      } else {
        item.images.push_back(unread_image(it.filename));
      }
      data.items.push_back(std::move(item));
    }
    data.native = ds;
    return data;
  }

  BenchmarkSummary evaluate(const BenchmarkData& data, const std::vector<ItemScores>& scores,
                            const BenchmarkOptions& o) const override {
    const auto& ds = *std::any_cast<std::shared_ptr<SugarCrepeDataset>>(data.native);
    if (scores.size() != ds.items.size()) throw UsageError("sugarcrepe: one score pair per item");
    struct Subset {
      std::vector<std::uint8_t> right;
      std::size_t ties = 0;
    };
    std::map<std::string, Subset> by_subset;
    nlohmann::json per = nlohmann::json::array();
    std::vector<ItemOutcome> views;
    for (std::size_t i = 0; i < ds.items.size(); ++i) {
      const auto& item = ds.items[i];
      if (scores[i].size() != 2) {
        throw UsageError("sugarcrepe: item " + data.items[i].id +
                         " needs 2 scores (caption, "
                         "negative caption)");
      }
      const double pos = scores[i][0], neg = scores[i][1];
      const bool right = pos > neg;  // main_eval.py: a tie is wrong
      views.push_back({item.subset,
                       {1, 0},
                       {true_text_check("caption over its negative", scores[i], {1, 0}, 2, 1)},
                       {},
                       scores[i]});
      Subset& s = by_subset[item.subset];
      s.right.push_back(right ? 1 : 0);
      if (pos == neg) ++s.ties;
      per.push_back({{"id", data.items[i].id},
                     {"subset", item.subset},
                     {"filename", item.filename},
                     {"caption", item.caption},
                     {"negative_caption", item.negative_caption},
                     {"positive_score", pos},
                     {"negative_score", neg},
                     {"correct", right}});
    }
    BenchmarkSummary summary;
    ReportSection subsets{
        "Accuracy per subset",
        "An item is right when its caption scores strictly above its hard "
        "negative (a tie is wrong, as main_eval.py). Interval: seeded "
        "bootstrap percentile; p: one-sided exact binomial test against the "
        "50% of chance.",
        {"Subset", "Category", "N", "Accuracy", "Interval", "p vs chance", "Ties"},
        {}};
    std::map<std::string, std::vector<double>> by_category;
    double macro = 0;
    for (const std::string& name : sugarcrepe_subsets()) {
      const auto it = by_subset.find(name);
      if (it == by_subset.end()) continue;
      const Subset& s = it->second;
      std::size_t k = 0;
      for (auto r : s.right)
        k += r;
      const double acc = static_cast<double>(k) / static_cast<double>(s.right.size());
      const BenchmarkMetric m = accuracy_metric(name, s.right, o, "sugarcrepe/" + name);
      summary.metrics.push_back(m);
      subsets.rows.push_back(
          {name, sugarcrepe_category(name), std::to_string(s.right.size()), fixed(acc * 100),
           m.low ? "[" + fixed(*m.low) + ", " + fixed(*m.high) + "]" : "-",
           p_text(binomial_upper_tail(k, s.right.size(), kChance)), std::to_string(s.ties)});
      by_category[sugarcrepe_category(name)].push_back(acc);
      macro += acc;
    }
    summary.metrics.push_back({"mean of subsets",
                               macro / static_cast<double>(by_subset.size()) * 100,
                               ds.items.size(),
                               {},
                               {},
                               "macro average of the subsets' accuracies"});
    ReportSection categories{"Accuracy per category",
                             "The paper's categories: the mean of their subsets' accuracies.",
                             {"Category", "Subsets", "Accuracy"},
                             {}};
    for (const char* c : {"Replace", "Swap", "Add"}) {
      const auto it = by_category.find(c);
      if (it == by_category.end()) continue;
      double sum = 0;
      for (double a : it->second)
        sum += a;
      categories.rows.push_back({c, std::to_string(it->second.size()),
                                 fixed(sum / static_cast<double>(it->second.size()) * 100)});
    }
    summary.sections.push_back(std::move(subsets));
    summary.sections.push_back(std::move(categories));
    summary.details = {{"per_item", per}, {"chance", kChance * 100}};
    summary.items = std::move(views);
    return summary;
  }
};

}  // namespace

std::unique_ptr<Benchmark> make_sugarcrepe_benchmark() {
  return std::make_unique<SugarCrepeBenchmark>();
}

}  // namespace winokit
