// MMVP-VLM as a registered benchmark: an item is one pair of images with their two statements
// (texts "a photo of " + statement, as evaluate_vlm.py; images [qid1.jpg, qid2.jpg]). The
// official script asks, for each statement, which image it fits (the softmax over the two images
// above 0.5 for the first: the higher score), the truth being the first image for an odd
// question id and the second for an even one; a pair is solved when both statements pick their
// image. winokit's convention is strict (the statement's image scores strictly above the other:
// a tie is wrong); the official `img1 if p > 0.5 else img2` sends a tie to the second image, so
// there a tie is right for a statement whose image is the second and wrong otherwise: both are
// reported, with the ties. The figures are per pattern (15 pairs each, by position as the
// script) and their mean.
#include <cstdio>
#include <map>
#include <memory>

#include "winokit/core/error.hpp"
#include "winokit/data/mmvp.hpp"
#include "winokit/eval/benchmark.hpp"

namespace winokit {

namespace {

std::string fixed(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", v);
  return b;
}

struct PairOutcome {
  bool strict = false, official = false;
  std::size_t ties = 0;  // statements whose two scores are equal
};

// scores: [text 0 x (image 0, image 1), text 1 x (image 0, image 1)].
PairOutcome pair_outcome(const ItemScores& s, long long qid1, long long qid2) {
  PairOutcome o;
  o.strict = o.official = true;
  const long long qids[2] = {qid1, qid2};
  for (int t = 0; t < 2; ++t) {
    const double on_first = s[t * 2], on_second = s[t * 2 + 1];
    const bool truth_first = qids[t] % 2 != 0;     // gt = "img1" if qid % 2 == 1 else "img2"
    const bool pred_first = on_first > on_second;  // "img1" if probs[0][0] > 0.5 else "img2"
    o.official = o.official && pred_first == truth_first;
    o.strict = o.strict && (truth_first ? on_first > on_second : on_second > on_first);
    o.ties += on_first == on_second ? 1 : 0;
  }
  return o;
}

class MmvpBenchmark final : public Benchmark {
 public:
  std::string name() const override { return "mmvp-vlm"; }
  std::string title() const override {
    return "MMVP-VLM (Tong et al., CVPR 2024, \"Eyes Wide Shut?\")";
  }
  std::string description() const override {
    return "2 images x their 2 statements; pair accuracy per visual pattern (9 x 15 pairs)";
  }

  BenchmarkData load(const BenchmarkLoadOptions& o) const override {
    auto ds = std::make_shared<MmvpDataset>(load_mmvp_vlm(o.data, o.images));
    if (o.need_images) {
      std::vector<std::filesystem::path> files;
      for (const auto& p : ds->pairs) {
        files.push_back(p.image1);
        files.push_back(p.image2);
      }
      require_image_files(files, ds->images.string());
    }
    BenchmarkData data;
    data.benchmark = name();
    data.file = ds->csv;
    data.sha256 = ds->sha256;
    for (const auto& p : ds->pairs) {
      BenchmarkItem item;
      item.id = std::to_string(p.qid1) + "-" + std::to_string(p.qid2);
      item.texts = {"a photo of " + p.statement1, "a photo of " + p.statement2};
      for (const auto* image : {&p.image1, &p.image2}) {
        const std::string image_name = p.type + "/" + image->filename().string();
        item.images.push_back(o.need_images ? image_file_request(image->string(), image_name)
                                            : unread_image(image_name));
      }
      data.items.push_back(std::move(item));
    }
    data.native = ds;
    return data;
  }

  BenchmarkSummary evaluate(const BenchmarkData& data, const std::vector<ItemScores>& scores,
                            const BenchmarkOptions& o) const override {
    const auto& ds = *std::any_cast<std::shared_ptr<MmvpDataset>>(data.native);
    if (scores.size() != ds.pairs.size()) throw UsageError("mmvp-vlm: one score row per pair");
    struct Category {
      std::vector<std::uint8_t> strict, official;
      std::size_t ties = 0;
    };
    std::map<std::string, Category> by;
    std::vector<std::uint8_t> all_strict;
    std::size_t all_official = 0, all_ties = 0;
    nlohmann::json per = nlohmann::json::array();
    std::vector<ItemOutcome> views;
    for (std::size_t i = 0; i < ds.pairs.size(); ++i) {
      const MmvpPair& p = ds.pairs[i];
      if (scores[i].size() != 4) {
        throw UsageError("mmvp-vlm: pair " + data.items[i].id +
                         " needs 4 scores (2 statements x 2 images)");
      }
      const PairOutcome r = pair_outcome(scores[i], p.qid1, p.qid2);
      {
        // Statement t is true of the first image for an odd question id, else of the second.
        const std::size_t own[2] = {p.qid1 % 2 != 0 ? 0u : 1u, p.qid2 % 2 != 0 ? 0u : 1u};
        std::vector<std::uint8_t> truth(4, 0);
        std::vector<ScoreComparison> c;
        for (std::size_t t = 0; t < 2; ++t) {
          truth[t * 2 + own[t]] = 1;
          c.push_back({t, own[t], t, 1 - own[t]});
        }
        views.push_back(
            {p.category,
             std::move(truth),
             {item_check("pair: each statement picks its own image", scores[i], 2, std::move(c))},
             r.official != r.strict ? std::string("official (a tie picks the second image): ") +
                                          (r.official ? "solved" : "not solved")
                                    : "",
             scores[i]});
      }
      Category& c = by[p.category];
      c.strict.push_back(r.strict ? 1 : 0);
      c.official.push_back(r.official ? 1 : 0);
      c.ties += r.ties;
      all_strict.push_back(r.strict ? 1 : 0);
      all_official += r.official ? 1 : 0;
      all_ties += r.ties;
      per.push_back({{"id", data.items[i].id},
                     {"category", p.category},
                     {"type", p.type},
                     {"statement1", p.statement1},
                     {"statement2", p.statement2},
                     {"scores", scores[i]},
                     {"correct", r.strict},
                     {"correct_official", r.official}});
    }
    BenchmarkSummary summary;
    ReportSection table{
        "Pair accuracy per visual pattern",
        "A pair is solved when each statement scores its own image (the first for an odd "
        "question id, the second for an even one) strictly above the other (a tie is wrong). "
        "Official: evaluate_vlm.py's `img1 if p > 0.5 else img2`, where a tie picks the second "
        "image. Patterns by position (15 pairs each), as the script; Interval: seeded bootstrap "
        "percentile; Ties: statements whose two scores are equal.",
        {"Pattern", "N", "Pair accuracy", "Interval", "Pair accuracy (official)", "Ties"},
        {}};
    double mean_strict = 0, mean_official = 0;
    for (const std::string& name : mmvp_categories()) {
      const Category& c = by.at(name);
      const BenchmarkMetric m = accuracy_metric(name, c.strict, o, "mmvp-vlm/" + name);
      std::size_t official = 0;
      for (auto v : c.official)
        official += v;
      const double official_pct =
          100.0 * static_cast<double>(official) / static_cast<double>(c.official.size());
      mean_strict += m.percent;
      mean_official += official_pct;
      summary.metrics.push_back(m);
      table.rows.push_back({name, std::to_string(c.strict.size()), fixed(m.percent),
                            m.low ? "[" + fixed(*m.low) + ", " + fixed(*m.high) + "]" : "-",
                            fixed(official_pct), std::to_string(c.ties)});
    }
    const double n_categories = static_cast<double>(mmvp_categories().size());
    BenchmarkMetric average = accuracy_metric("average", all_strict, o, "mmvp-vlm/average");
    average.percent = mean_strict / n_categories;  // equal-sized patterns: the pooled accuracy
    summary.metrics.push_back(average);
    summary.metrics.push_back({"average (official)",
                               mean_official / n_categories,
                               ds.pairs.size(),
                               {},
                               {},
                               "mean of the patterns, a tie as the "
                               "official script"});
    table.rows.push_back(
        {"average", std::to_string(ds.pairs.size()), fixed(average.percent),
         average.low ? "[" + fixed(*average.low) + ", " + fixed(*average.high) + "]" : "-",
         fixed(mean_official / n_categories), std::to_string(all_ties)});
    summary.sections.push_back(std::move(table));
    summary.items = std::move(views);
    summary.details = {{"per_item", per},
                       {"average_percent", average.percent},
                       {"average_official_percent", mean_official / n_categories},
                       {"official_pairs_solved", all_official},
                       {"ties", all_ties}};
    return summary;
  }
};

}  // namespace

std::unique_ptr<Benchmark> make_mmvp_benchmark() {
  return std::make_unique<MmvpBenchmark>();
}

}  // namespace winokit
