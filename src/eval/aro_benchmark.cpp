// ARO's Visual Genome Relation and Attribution as a registered benchmark: an item is one image
// cropped to the item's box (as the official __getitem__) with two captions, in the official
// order [false caption, true caption]; the item is right when the true caption scores strictly
// above the false one. That is the official convention too: evaluate_scores takes np.argmax over
// [false, true] and counts index 1, and np.argmax's first maximum is the false caption, so a tie
// is wrong there as well. The official figures are macro accuracies: VG-Relation the mean of its
// relations' accuracies with the notebook's symmetric relations dropped, VG-Attribution the mean
// of its attribute pairs' accuracies over pairs of at least 25 items. The plain accuracy over
// all items is reported beside them, with a seeded bootstrap interval.
#include <cstdio>
#include <map>
#include <memory>
#include <set>

#include "winokit/core/error.hpp"
#include "winokit/data/aro.hpp"
#include "winokit/eval/benchmark.hpp"

namespace winokit {

namespace {

std::string fixed(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", v);
  return b;
}

// Whether a group counts in the official macro accuracy.
bool kept(const std::string& subset, const std::string& group, std::size_t n) {
  if (subset == "vg_relation") {
    static const std::set<std::string> symmetric(aro_symmetric_relations().begin(),
                                                 aro_symmetric_relations().end());
    return symmetric.count(group) == 0;
  }
  return n >= kAroMinAttributeCount;
}

class AroBenchmark final : public Benchmark {
 public:
  std::string name() const override { return "aro"; }
  std::string title() const override {
    return "ARO: VG-Relation and VG-Attribution (Yuksekgonul et al., ICLR 2023)";
  }
  std::string description() const override {
    return "1 Visual Genome crop x its true and false caption; macro accuracy per relation / "
           "attribute pair";
  }

  BenchmarkData load(const BenchmarkLoadOptions& o) const override {
    auto ds = std::make_shared<AroDataset>(load_aro(o.data, o.images));
    if (o.need_images) {
      std::vector<std::filesystem::path> files;
      for (const auto& item : ds->items)
        files.push_back(item.image);
      require_image_files(files, ds->images.string());
    }
    BenchmarkData data;
    data.benchmark = name();
    data.file = ds->root;
    data.sha256 = ds->sha256;
    for (const auto& it : ds->items) {
      BenchmarkItem item;
      item.id = it.subset + "/" + std::to_string(it.index);
      item.texts = {it.false_caption, it.true_caption};  // the official order
      const CropBox box{it.bbox_x, it.bbox_y, it.bbox_w, it.bbox_h};
      ImageRequest crop = cropped_image_request(it.image, it.image_path, box);
      item.images.push_back(o.need_images ? std::move(crop) : unread_image(crop.name));
      data.items.push_back(std::move(item));
    }
    data.native = ds;
    return data;
  }

  BenchmarkSummary evaluate(const BenchmarkData& data, const std::vector<ItemScores>& scores,
                            const BenchmarkOptions& o) const override {
    const auto& ds = *std::any_cast<std::shared_ptr<AroDataset>>(data.native);
    if (scores.size() != ds.items.size()) throw UsageError("aro: one score pair per item");
    struct Group {
      std::size_t right = 0, n = 0;
    };
    struct Subset {
      std::vector<std::uint8_t> right;
      std::size_t ties = 0;
      std::map<std::string, Group> groups;
    };
    std::map<std::string, Subset> by;
    nlohmann::json per = nlohmann::json::array();
    std::vector<ItemOutcome> views;
    for (std::size_t i = 0; i < ds.items.size(); ++i) {
      const AroItem& item = ds.items[i];
      if (scores[i].size() != 2) {
        throw UsageError("aro: item " + data.items[i].id +
                         " needs 2 scores (false caption, true caption)");
      }
      const double false_score = scores[i][0], true_score = scores[i][1];
      const bool right = true_score > false_score;  // argmax over [false, true] == 1
      views.push_back(
          {item.subset,
           {0, 1},
           {true_text_check("true caption over the false one", scores[i], {0, 1}, 2, 1)},
           (item.subset == "vg_relation" ? "relation: " : "attribute pair: ") + item.group,
           scores[i]});
      Subset& s = by[item.subset];
      s.right.push_back(right ? 1 : 0);
      s.ties += true_score == false_score ? 1 : 0;
      Group& g = s.groups[item.group];
      g.right += right ? 1 : 0;
      ++g.n;
      per.push_back({{"id", data.items[i].id},
                     {"subset", item.subset},
                     {"image", data.items[i].images[0].name},
                     {"group", item.group},
                     {"true_caption", item.true_caption},
                     {"false_caption", item.false_caption},
                     {"true_score", true_score},
                     {"false_score", false_score},
                     {"correct", right}});
    }
    BenchmarkSummary summary;
    ReportSection table{
        "Accuracy per subset",
        "An item is right when its true caption scores strictly above its false one (a tie is "
        "wrong, as the official np.argmax over [false, true]). Macro: the official figure, the "
        "mean of the groups' accuracies over the groups kept (VG-Relation: the official "
        "notebook's symmetric relations dropped; VG-Attribution: attribute pairs of at least 25 "
        "items). Accuracy: over all items, with a seeded bootstrap percentile interval.",
        {"Subset", "N", "Groups", "Groups kept", "Items kept", "Macro accuracy", "Accuracy",
         "Interval", "Ties"},
        {}};
    ReportSection groups{"Accuracy per relation and attribute pair",
                         "Groups as the official evaluate_scores forms them; Macro: whether the "
                         "group counts in the subset's macro accuracy.",
                         {"Subset", "Group", "N", "Accuracy", "Macro"},
                         {}};
    nlohmann::json details = nlohmann::json::object();
    for (const std::string& name : aro_subsets()) {
      const auto it = by.find(name);
      if (it == by.end()) continue;
      const Subset& s = it->second;
      double sum = 0;
      std::size_t kept_groups = 0, kept_items = 0;
      for (const auto& [group, g] : s.groups) {
        const bool in = kept(name, group, g.n);
        const double acc = static_cast<double>(g.right) / static_cast<double>(g.n);
        if (in) {
          sum += acc;
          ++kept_groups;
          kept_items += g.n;
        }
        groups.rows.push_back(
            {name, group, std::to_string(g.n), fixed(acc * 100), in ? "yes" : "no"});
      }
      const BenchmarkMetric all = accuracy_metric(name, s.right, o, "aro/" + name);
      BenchmarkMetric macro{name + " macro accuracy", 0, kept_items, {}, {}, ""};
      if (kept_groups > 0) {
        macro.percent = sum / static_cast<double>(kept_groups) * 100;
        macro.method = "mean of the accuracies of " + std::to_string(kept_groups) +
                       (name == "vg_relation" ? " relations" : " attribute pairs");
      } else {
        macro.method = "no group kept";
      }
      summary.metrics.push_back(macro);
      summary.metrics.push_back(all);
      table.rows.push_back({name, std::to_string(s.right.size()), std::to_string(s.groups.size()),
                            std::to_string(kept_groups), std::to_string(kept_items),
                            kept_groups > 0 ? fixed(macro.percent) : "-", fixed(all.percent),
                            all.low ? "[" + fixed(*all.low) + ", " + fixed(*all.high) + "]" : "-",
                            std::to_string(s.ties)});
      details[name] = {{"macro_accuracy_percent",
                        kept_groups > 0 ? nlohmann::json(macro.percent) : nlohmann::json()},
                       {"groups_kept", kept_groups},
                       {"accuracy_percent", all.percent},
                       {"ties", s.ties}};
    }
    summary.sections.push_back(std::move(table));
    summary.sections.push_back(std::move(groups));
    summary.details = {{"subsets", details}, {"per_item", per}};
    summary.items = std::move(views);
    return summary;
  }
};

}  // namespace

std::unique_ptr<Benchmark> make_aro_benchmark() {
  return std::make_unique<AroBenchmark>();
}

}  // namespace winokit
