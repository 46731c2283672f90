// VALSE as a registered benchmark: an item is one image with its caption and its foil (texts
// [caption, foil]), over the official valid set (mturk.caption >= 2, as lxmert_valse_eval.py).
// The metric for a model that scores pairs is the paper's pairwise accuracy acc_r: the caption
// scores strictly above the foil (the official `cross_score[0, 1] > cross_score[1, 1]`: a tie is
// wrong). The paper's p_c, p_f and acc need a binary image-text match decision, which a
// contrastive score has not; they are not computed. Reported per piece with a seeded bootstrap
// interval and the ties, per instrument, and as the mean of the pieces.
#include <cstdio>
#include <map>
#include <memory>

#include "winokit/core/error.hpp"
#include "winokit/data/valse.hpp"
#include "winokit/eval/benchmark.hpp"

namespace winokit {

namespace {

std::string fixed(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", v);
  return b;
}

struct ValseNative {
  std::shared_ptr<ValseDataset> data;
  std::vector<std::size_t> valid;  // the dataset items scored, in order
};

class ValseBenchmark final : public Benchmark {
 public:
  std::string name() const override { return "valse"; }
  std::string title() const override { return "VALSE (Parcalabescu et al., ACL 2022)"; }
  std::string description() const override {
    return "1 image x its caption and a foil, 11 linguistic pieces; pairwise accuracy acc_r "
           "over the valid set";
  }

  BenchmarkData load(const BenchmarkLoadOptions& o) const override {
    auto ds = std::make_shared<ValseDataset>(load_valse(o.data, o.images));
    ValseNative native{ds, {}};
    for (std::size_t i = 0; i < ds->items.size(); ++i)
      if (ds->items[i].valid) native.valid.push_back(i);
    if (o.need_images) {
      std::vector<std::filesystem::path> files;
      for (std::size_t i : native.valid)
        files.push_back(ds->items[i].image);
      require_image_files(files, ds->images.string());
    }
    BenchmarkData data;
    data.benchmark = name();
    data.file = ds->root;
    data.sha256 = ds->sha256;
    for (std::size_t i : native.valid) {
      const ValseItem& it = ds->items[i];
      BenchmarkItem item;
      item.id = it.piece + "/" + it.key;
      item.texts = {it.caption, it.foil};
      const std::string image_name = valse_image_folder(it.piece) + "/" + it.image_file;
      item.images.push_back(o.need_images ? image_file_request(it.image.string(), image_name)
                                          : unread_image(image_name));
      data.items.push_back(std::move(item));
    }
    data.native = std::make_shared<ValseNative>(std::move(native));
    return data;
  }

  BenchmarkSummary evaluate(const BenchmarkData& data, const std::vector<ItemScores>& scores,
                            const BenchmarkOptions& o) const override {
    const auto& native = *std::any_cast<std::shared_ptr<ValseNative>>(data.native);
    const ValseDataset& ds = *native.data;
    if (scores.size() != native.valid.size()) throw UsageError("valse: one score pair per item");
    struct Piece {
      std::vector<std::uint8_t> right;
      std::size_t ties = 0, total = 0;
    };
    std::map<std::string, Piece> by;
    for (const ValseItem& it : ds.items)
      ++by[it.piece].total;
    nlohmann::json per = nlohmann::json::array();
    std::vector<ItemOutcome> views;
    for (std::size_t k = 0; k < native.valid.size(); ++k) {
      const ValseItem& it = ds.items[native.valid[k]];
      if (scores[k].size() != 2) {
        throw UsageError("valse: item " + data.items[k].id + " needs 2 scores (caption, foil)");
      }
      const double caption = scores[k][0], foil = scores[k][1];
      const bool right = caption > foil;  // acc_r: a tie is wrong
      views.push_back({it.piece,
                       {1, 0},
                       {true_text_check("caption over its foil", scores[k], {1, 0}, 2, 1)},
                       {},
                       scores[k]});
      Piece& p = by[it.piece];
      p.right.push_back(right ? 1 : 0);
      p.ties += caption == foil ? 1 : 0;
      per.push_back({{"id", data.items[k].id},
                     {"piece", it.piece},
                     {"image", data.items[k].images[0].name},
                     {"caption", it.caption},
                     {"foil", it.foil},
                     {"caption_score", caption},
                     {"foil_score", foil},
                     {"correct", right}});
    }
    BenchmarkSummary summary;
    ReportSection table{
        "Pairwise accuracy acc_r per piece",
        "acc_r: the caption scores strictly above its foil (a tie is wrong, as the official "
        "`>`), over the valid items (at least 2 of 3 annotators chose the caption, not the "
        "foil: mturk.caption >= 2). p_c, p_f and acc need a binary match decision, which a "
        "score of a pair is not, and are not computed. Interval: seeded bootstrap percentile.",
        {"Piece", "Instrument", "Items", "Valid N", "acc_r", "Interval", "Ties"},
        {}};
    ReportSection instruments{"acc_r per instrument",
                              "The mean of the instrument's pieces' acc_r.",
                              {"Instrument", "Pieces", "acc_r"},
                              {}};
    std::map<std::string, std::vector<double>> by_instrument;
    std::vector<std::string> instrument_order;
    double sum = 0;
    std::size_t pieces = 0, n = 0;
    for (const std::string& name : valse_pieces()) {
      const auto it = by.find(name);
      if (it == by.end()) continue;
      const Piece& p = it->second;
      if (p.right.empty()) {
        table.rows.push_back(
            {name, valse_instrument(name), std::to_string(p.total), "0", "-", "-", "0"});
        continue;
      }
      const BenchmarkMetric m = accuracy_metric(name, p.right, o, "valse/" + name);
      summary.metrics.push_back(m);
      table.rows.push_back({name, valse_instrument(name), std::to_string(p.total),
                            std::to_string(p.right.size()), fixed(m.percent),
                            m.low ? "[" + fixed(*m.low) + ", " + fixed(*m.high) + "]" : "-",
                            std::to_string(p.ties)});
      const std::string instrument = valse_instrument(name);
      if (by_instrument.find(instrument) == by_instrument.end())
        instrument_order.push_back(instrument);
      by_instrument[instrument].push_back(m.percent);
      sum += m.percent;
      ++pieces;
      n += p.right.size();
    }
    if (pieces > 0) {
      summary.metrics.push_back({"mean of pieces",
                                 sum / static_cast<double>(pieces),
                                 n,
                                 {},
                                 {},
                                 "macro average of the pieces' acc_r"});
    }
    for (const std::string& instrument : instrument_order) {
      const std::vector<double>& v = by_instrument.at(instrument);
      double s = 0;
      for (double a : v)
        s += a;
      instruments.rows.push_back(
          {instrument, std::to_string(v.size()), fixed(s / static_cast<double>(v.size()))});
    }
    summary.sections.push_back(std::move(table));
    summary.sections.push_back(std::move(instruments));
    summary.details = {{"per_item", per}};
    summary.items = std::move(views);
    return summary;
  }
};

}  // namespace

std::unique_ptr<Benchmark> make_valse_benchmark() {
  return std::make_unique<ValseBenchmark>();
}

}  // namespace winokit
