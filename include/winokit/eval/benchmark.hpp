// Benchmarks as tasks: what every benchmark provides, and the registry the CLI reads.
//
// A benchmark loads its data into items; each item pairs some texts with some images (a
// Winoground example: 2 captions x 2 images; a WinoGAViL instance: 1 cue x 5-12 candidates).
// A model (or a scores file) gives one score per (text, image) pair of every item, the unit
// scored; the benchmark's metrics turn those matrices into a summary: headline metrics with
// their N and interval, breakdowns, and report sections that every report format renders
// (winokit/report/sections.hpp). `winokit run NAME` works for every registered benchmark, and
// `winokit benchmarks` / `winokit --help` list them.
//
//   const winokit::Benchmark& b = winokit::find_benchmark("winoground");  // UsageError lists names
//   winokit::BenchmarkData data = b.load({.data = "winoground/"});
//   std::vector<winokit::ItemScores> s = winokit::score_items(data, *model);  // or b.load_scores
//   winokit::BenchmarkSummary summary = b.evaluate(data, s, {.seed = 0});
//
// Adding a benchmark: its loader in data/, its metrics in eval/, a class implementing Benchmark
// (src/eval/<name>_benchmark.cpp) and one line in builtin_benchmarks() (src/eval/benchmark.cpp);
// see CONTRIBUTING.md, "Add a benchmark".
#pragma once

#include <any>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "winokit/io/image_decode.hpp"
#include "winokit/model/vl_model.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(eval);

namespace winokit {

// One unit a model scores: every text against every image.
struct BenchmarkItem {
  std::string id;
  std::vector<std::string> texts;
  std::vector<ImageRequest> images;  // read lazily, from the benchmark's image store
};

struct BenchmarkData {
  std::string benchmark;  // the registry name
  std::filesystem::path file;
  std::string sha256;  // of the file the items came from
  std::vector<BenchmarkItem> items;
  std::any native;  // the benchmark's own dataset type (WinogroundDataset, AssociationDataset)
  std::shared_ptr<const void> keep_alive;  // what the image requests read from
};

// Scores of one item, [texts x images] row-major: scores[t * images + i] = s(text t, image i).
using ItemScores = std::vector<double>;

struct BenchmarkLoadOptions {
  std::filesystem::path data;    // the benchmark's file or folder
  std::filesystem::path images;  // its images, when not where the benchmark looks by default
  std::string prompt_template;   // benchmarks that turn a word into a text (WinoGAViL's cue)
  // False when the scores come from a file: the items' images are named, never read, and a
  // benchmark does not ask for (or check) its image folder.
  bool need_images = true;
};

struct BenchmarkOptions {
  std::uint64_t seed = 0;
  std::size_t bootstrap_resamples = 10000;
  double confidence = 0.95;
};

// A report section in a format-neutral shape: a title, a note, and a table. Markdown, JSON and
// HTML writers render it (winokit/report/sections.hpp).
struct ReportSection {
  std::string title, note;
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
};

struct BenchmarkMetric {
  std::string name;  // "group score", "Jaccard"
  double percent = 0;
  std::size_t n = 0;
  std::optional<double> low, high;  // interval, when the metric has one
  std::string method;               // how the interval was computed
};

// One comparison an item's outcome rests on: s(text, image) must score strictly above
// s(other_text, other_image) (a tie fails it).
struct ScoreComparison {
  std::size_t text = 0, image = 0;
  std::size_t other_text = 0, other_image = 0;
};

// A named outcome of an item ("right", "text score", "pair"): right exactly when every one of
// its comparisons holds (item_check computes it, so the two never disagree).
struct ItemCheck {
  std::string name;
  bool right = false;
  std::vector<ScoreComparison> comparisons;
};

// An item as every benchmark describes it to the example browser and to `compare`, whatever
// its own per-item JSON holds: which text is true of which image, the subset it belongs to, and
// its outcomes, the first being the headline one (the item counts as right or wrong by it).
struct ItemOutcome {
  std::string subset;               // what the browser filters by ("" for none)
  std::vector<std::uint8_t> truth;  // [texts x images] row-major: 1 where text t is true of image i
  std::vector<ItemCheck> checks;    // at least one; checks[0] is the headline outcome
  std::string note;                 // one line for the reader (an official tie convention, Jaccard)
  ItemScores scores;                // the item's scores as evaluated, [texts x images]
};

// A check of `scores` ([texts x images], `images` columns): right when every comparison holds.
ItemCheck item_check(const std::string& name, const ItemScores& scores, std::size_t images,
                     std::vector<ScoreComparison> comparisons);
// The checks of an item whose true text for each image is the one in `truth` (1 image, or as
// many as texts): `name` is right when, for each image, its true text scores strictly above
// every other text (SugarCrepe, What'sUp, ARO, VALSE, ARO-Order: one image, one true text).
ItemCheck true_text_check(const std::string& name, const ItemScores& scores,
                          const std::vector<std::uint8_t>& truth, std::size_t texts,
                          std::size_t images);

// The checks of a Winoground-style item, texts [c0, c1] x images [i0, i1] with c_k true of i_k:
// "group score" (all four comparisons), "text score" (each image scores its own caption
// higher), "image score" (each caption scores its own image higher). Winoground, EqBen.
std::vector<ItemCheck> winoground_style_checks(const ItemScores& scores);

struct BenchmarkSummary {
  std::vector<BenchmarkMetric> metrics;  // headline figures
  std::vector<ReportSection> sections;   // breakdowns
  nlohmann::json details;                // the benchmark's full result, in its JSON layout
  // One per item, aligned with BenchmarkData::items: what the HTML report's example browser
  // shows and what `compare` pairs across runs. Every built-in benchmark fills it.
  std::vector<ItemOutcome> items;
};

class Benchmark {
 public:
  virtual ~Benchmark() = default;
  virtual std::string name() const = 0;         // registry key: "winoground"
  virtual std::string title() const = 0;        // "Winoground (Thrush et al., CVPR 2022)"
  virtual std::string description() const = 0;  // one line: the unit scored and the metrics
  virtual BenchmarkData load(const BenchmarkLoadOptions& options) const = 0;
  // Scores from a file. The default reads winokit's generic layout, one JSON object a line:
  // {"id": "...", "scores": [[s(text 0, image 0), s(text 0, image 1), ...], ...]}; a benchmark
  // may accept its official layouts too.
  virtual std::vector<ItemScores> load_scores(const BenchmarkData& data,
                                              const std::filesystem::path& file) const;
  virtual BenchmarkSummary evaluate(const BenchmarkData& data,
                                    const std::vector<ItemScores>& scores,
                                    const BenchmarkOptions& options) const = 0;
};

// Scores every (text, image) pair of every item with any model (VlModel::score_pairs: each
// distinct text and image encoded once, through the caches).
std::vector<ItemScores> score_items(const BenchmarkData& data, const VlModel& model,
                                    EmbedStats* stats = nullptr);

// IoError when any of `files` is not a regular file: "N image(s) not found in WHERE: the first
// 10 names and M more" (each distinct file once, in order). For a benchmark's load().
void require_image_files(const std::vector<std::filesystem::path>& files, const std::string& where);
// An image request that refuses to read (a scores-file run names images, never reads them).
ImageRequest unread_image(const std::string& name);
// A box to crop an image to, in pixels: PIL's Image.crop((x, y, x + w, y + h)).
struct CropBox {
  double x = 0, y = 0, w = 0, h = 0;
};
// `image` (any mode) converted to RGB and cropped as PIL's image.convert('RGB').crop((x, y, x +
// w, y + h)): each edge rounded half to even (Python's round), pixels outside the image black.
// UsageError for a box of no area after rounding.
DecodedImage crop_image(const DecodedImage& image, const CropBox& box);
// An image request for a crop of the image file `path`: read, decoded, cropped (crop_image) and
// handed to the model as a lossless PNG, so every model family sees the crop's exact pixels.
// Its name is "NAME@x,y,w,h" (the cache key comes from the PNG's bytes).
ImageRequest cropped_image_request(const std::filesystem::path& path, const std::string& name,
                                   const CropBox& box);
// An image request for a .npy frame (uint8, height x width x 3, BGR: EqBen's YouCook2 frames,
// read as `Image.fromarray(np.load(f)[:, :, [2, 1, 0]], 'RGB')`), handed to the model as a
// lossless RGB PNG. InputError naming the file for another shape or dtype.
ImageRequest npy_bgr_image_request(const std::filesystem::path& path, const std::string& name);
// Accuracy figures of items whose outcome is a 0/1 each: the headline metric with a seeded
// bootstrap percentile interval (`seed_name` derives the seed).
BenchmarkMetric accuracy_metric(const std::string& name, const std::vector<std::uint8_t>& right,
                                const BenchmarkOptions& options, const std::string& seed_name);

// The registered benchmarks, in registration order.
const std::vector<std::unique_ptr<Benchmark>>& benchmarks();
// UsageError naming the known benchmarks (and the closest one) when `name` is not registered.
const Benchmark& find_benchmark(const std::string& name);
std::vector<std::string> benchmark_names();

// The built-in benchmarks' factories (one per benchmark, listed once in benchmark.cpp).
std::unique_ptr<Benchmark> make_winoground_benchmark();
std::unique_ptr<Benchmark> make_winogavil_benchmark();
std::unique_ptr<Benchmark> make_sugarcrepe_benchmark();
std::unique_ptr<Benchmark> make_whatsup_benchmark();
std::unique_ptr<Benchmark> make_aro_benchmark();
std::unique_ptr<Benchmark> make_aro_order_benchmark();
std::unique_ptr<Benchmark> make_mmvp_benchmark();
std::unique_ptr<Benchmark> make_valse_benchmark();
std::unique_ptr<Benchmark> make_eqben_benchmark();

}  // namespace winokit
