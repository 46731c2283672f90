// EqBen's released subset as a registered benchmark: an item is a Winoground-style pair, images
// [image0, image1] x captions [caption0, caption1], scored with Winoground's text, image and
// group scores as the official eqben_acc.cal_wino_score computes them (text: c0_i0 > c1_i0 and
// c1_i1 > c0_i1; image: c0_i0 > c0_i1 and c1_i1 > c1_i0; group: both; strict, so a tie is wrong
// there as in winokit). Reported overall with seeded bootstrap intervals and per source (the
// first folder of image0: eqbenag, eqbenyoucook2, ...), as the full set's evaluation groups them.
#include <cstdio>
#include <map>
#include <memory>

#include "winokit/core/error.hpp"
#include "winokit/data/eqben.hpp"
#include "winokit/eval/benchmark.hpp"

namespace winokit {

namespace {

std::string fixed(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", v);
  return b;
}

std::string percent(const std::vector<std::uint8_t>& v) {
  std::size_t k = 0;
  for (auto x : v)
    k += x;
  return v.empty() ? "-" : fixed(100.0 * static_cast<double>(k) / static_cast<double>(v.size()));
}

bool is_npy(const std::string& name) {
  return name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0;
}

class EqBenBenchmark final : public Benchmark {
 public:
  std::string name() const override { return "eqben"; }
  std::string title() const override { return "EqBen (Wang et al., ICCV 2023), released subset"; }
  std::string description() const override {
    return "2 captions x 2 images with a visual-minimal change; text, image and group scores "
           "(ties wrong)";
  }

  BenchmarkData load(const BenchmarkLoadOptions& o) const override {
    auto ds = std::make_shared<EqBenDataset>(load_eqben(o.data, o.images));
    if (o.need_images) {
      std::vector<std::filesystem::path> files;
      for (const auto& it : ds->items) {
        files.push_back(ds->images / it.image0);
        files.push_back(ds->images / it.image1);
      }
      require_image_files(files, ds->images.string());
    }
    BenchmarkData data;
    data.benchmark = name();
    data.file = ds->file;
    data.sha256 = ds->sha256;
    for (const auto& it : ds->items) {
      BenchmarkItem item;
      item.id = std::to_string(it.index);
      item.texts = {it.caption0, it.caption1};
      for (const std::string* image : {&it.image0, &it.image1}) {
        const std::filesystem::path file = ds->images / *image;
        if (!o.need_images) {
          item.images.push_back(unread_image(*image));
        } else if (is_npy(*image)) {
          item.images.push_back(npy_bgr_image_request(file, *image));
        } else {
          item.images.push_back(image_file_request(file.string(), *image));
        }
      }
      data.items.push_back(std::move(item));
    }
    data.native = ds;
    return data;
  }

  BenchmarkSummary evaluate(const BenchmarkData& data, const std::vector<ItemScores>& scores,
                            const BenchmarkOptions& o) const override {
    const auto& ds = *std::any_cast<std::shared_ptr<EqBenDataset>>(data.native);
    if (scores.size() != ds.items.size()) throw UsageError("eqben: one score row per item");
    struct Scores {
      std::vector<std::uint8_t> text, image, group;
    };
    Scores all;
    std::map<std::string, Scores> by_source;
    std::vector<std::string> source_order;
    nlohmann::json per = nlohmann::json::array();
    std::vector<ItemOutcome> views;
    for (std::size_t i = 0; i < ds.items.size(); ++i) {
      const EqBenItem& it = ds.items[i];
      if (scores[i].size() != 4) {
        throw UsageError("eqben: item " + data.items[i].id +
                         " needs 4 scores (2 captions x 2 images)");
      }
      const double c0i0 = scores[i][0], c0i1 = scores[i][1], c1i0 = scores[i][2],
                   c1i1 = scores[i][3];
      const bool text = c0i0 > c1i0 && c1i1 > c0i1;
      const bool image = c0i0 > c0i1 && c1i1 > c1i0;
      const bool group = text && image;
      views.push_back({it.source, {1, 0, 0, 1}, winoground_style_checks(scores[i]), {}, scores[i]});
      if (by_source.find(it.source) == by_source.end()) source_order.push_back(it.source);
      for (Scores* s : {&all, &by_source[it.source]}) {
        s->text.push_back(text ? 1 : 0);
        s->image.push_back(image ? 1 : 0);
        s->group.push_back(group ? 1 : 0);
      }
      per.push_back({{"id", data.items[i].id},
                     {"source", it.source},
                     {"image0", it.image0},
                     {"image1", it.image1},
                     {"caption0", it.caption0},
                     {"caption1", it.caption1},
                     {"c0_i0", c0i0},
                     {"c0_i1", c0i1},
                     {"c1_i0", c1i0},
                     {"c1_i1", c1i1},
                     {"text", text},
                     {"image", image},
                     {"group", group}});
    }
    BenchmarkSummary summary;
    summary.metrics.push_back(accuracy_metric("text score", all.text, o, "eqben/text"));
    summary.metrics.push_back(accuracy_metric("image score", all.image, o, "eqben/image"));
    summary.metrics.push_back(accuracy_metric("group score", all.group, o, "eqben/group"));
    ReportSection sources{
        "Scores per source",
        "Text: each caption scores its own image above the other caption (c0_i0 > c1_i0, "
        "c1_i1 > c0_i1); image: each image scores its own caption above the other image's; "
        "group: both; strict (a tie is wrong), as eqben_acc.cal_wino_score. Source: image0's "
        "first folder.",
        {"Source", "N", "Text", "Image", "Group"},
        {}};
    for (const std::string& s : source_order) {
      const Scores& x = by_source.at(s);
      sources.rows.push_back({s.empty() ? "-" : s, std::to_string(x.text.size()), percent(x.text),
                              percent(x.image), percent(x.group)});
    }
    summary.sections.push_back(std::move(sources));
    summary.details = {{"per_item", per}};
    summary.items = std::move(views);
    return summary;
  }
};

}  // namespace

std::unique_ptr<Benchmark> make_eqben_benchmark() {
  return std::make_unique<EqBenBenchmark>();
}

}  // namespace winokit
