// ARO's COCO-Order / Flickr30k-Order as a registered benchmark: an item is one image with its
// caption and its reorderings (the caption first). winokit's accuracy is strict: the caption
// scores above every reordering (a tie is wrong). The official evaluate_scores counts
// np.argmax == 0 (Precision@1), whose first maximum is the caption, so there a tie is right:
// both are reported, with the ties.
#include <cstdio>
#include <memory>

#include "winokit/core/error.hpp"
#include "winokit/data/aro_order.hpp"
#include "winokit/eval/benchmark.hpp"

namespace winokit {

namespace {

std::string fixed(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", v);
  return b;
}

class AroOrderBenchmark final : public Benchmark {
 public:
  std::string name() const override { return "aro-order"; }
  std::string title() const override {
    return "ARO: COCO-Order and Flickr30k-Order (Yuksekgonul et al., ICLR 2023)";
  }
  std::string description() const override {
    return "1 image x its caption and 4 reorderings (the official test cases as JSON); "
           "Precision@1, strict and official";
  }

  BenchmarkData load(const BenchmarkLoadOptions& o) const override {
    auto ds = std::make_shared<AroOrderDataset>(load_aro_order(o.data, o.images));
    if (o.need_images) {
      std::vector<std::filesystem::path> files;
      for (const auto& it : ds->items)
        files.push_back(ds->images / it.image);
      require_image_files(files, ds->images.string());
    }
    BenchmarkData data;
    data.benchmark = name();
    data.file = ds->file;
    data.sha256 = ds->sha256;
    for (const auto& it : ds->items) {
      BenchmarkItem item;
      item.id = std::to_string(it.index);
      item.texts = it.captions;
      item.images.push_back(o.need_images
                                ? image_file_request((ds->images / it.image).string(), it.image)
                                : unread_image(it.image));
      data.items.push_back(std::move(item));
    }
    data.native = ds;
    return data;
  }

  BenchmarkSummary evaluate(const BenchmarkData& data, const std::vector<ItemScores>& scores,
                            const BenchmarkOptions& o) const override {
    const auto& ds = *std::any_cast<std::shared_ptr<AroOrderDataset>>(data.native);
    if (scores.size() != ds.items.size()) throw UsageError("aro-order: one score row per item");
    std::vector<std::uint8_t> strict, official;
    std::size_t ties = 0;
    nlohmann::json per = nlohmann::json::array();
    std::vector<ItemOutcome> views;
    for (std::size_t i = 0; i < ds.items.size(); ++i) {
      const ItemScores& s = scores[i];
      if (s.size() != ds.items[i].captions.size()) {
        throw UsageError("aro-order: item " + data.items[i].id + " needs " +
                         std::to_string(ds.items[i].captions.size()) + " scores");
      }
      double best_other = s[1];
      for (std::size_t k = 2; k < s.size(); ++k)
        best_other = std::max(best_other, s[k]);
      const bool right = s[0] > best_other;
      const bool argmax = s[0] >= best_other;  // np.argmax: the first maximum is the caption
      std::vector<std::uint8_t> truth(s.size(), 0);
      truth[0] = 1;
      ItemCheck check = true_text_check("caption over every reordering", s, truth, s.size(), 1);
      views.push_back(
          {ds.subset,
           std::move(truth),
           {std::move(check)},
           argmax != right ? "right by the official np.argmax (a tie with the caption)" : "",
           s});
      strict.push_back(right ? 1 : 0);
      official.push_back(argmax ? 1 : 0);
      ties += s[0] == best_other ? 1 : 0;
      per.push_back({{"id", data.items[i].id},
                     {"image", ds.items[i].image},
                     {"caption", ds.items[i].captions[0]},
                     {"scores", s},
                     {"correct", right},
                     {"correct_official", argmax}});
    }
    BenchmarkSummary summary;
    const BenchmarkMetric m = accuracy_metric(ds.subset, strict, o, "aro-order/" + ds.subset);
    const BenchmarkMetric a =
        accuracy_metric(ds.subset + " (official)", official, o, "aro-order/" + ds.subset);
    summary.metrics.push_back(m);
    summary.metrics.push_back(a);
    summary.sections.push_back(
        {"Precision@1",
         "Strict: the caption scores above every reordering (a tie is wrong); official: "
         "evaluate_scores' np.argmax == 0, whose first maximum is the caption (a tie is right). "
         "Interval: seeded bootstrap percentile.",
         {"Subset", "N", "Precision@1", "Interval", "Precision@1 (official)", "Ties"},
         {{ds.subset, std::to_string(strict.size()), fixed(m.percent),
           m.low ? "[" + fixed(*m.low) + ", " + fixed(*m.high) + "]" : "-", fixed(a.percent),
           std::to_string(ties)}}});
    summary.details = {{"per_item", per}, {"ties", ties}};
    summary.items = std::move(views);
    return summary;
  }
};

}  // namespace

std::unique_ptr<Benchmark> make_aro_order_benchmark() {
  return std::make_unique<AroOrderBenchmark>();
}

}  // namespace winokit
