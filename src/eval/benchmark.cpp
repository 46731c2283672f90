#include "winokit/eval/benchmark.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "winokit/core/error.hpp"
#include "winokit/core/rng.hpp"
#include "winokit/core/text.hpp"
#include "winokit/eval/stats.hpp"
#include "winokit/io/files.hpp"
#include "winokit/io/npy.hpp"
#include "winokit/io/png_writer.hpp"
#include "winokit/model/preprocess.hpp"

namespace winokit {

namespace {

// The built-in benchmarks: adding one is one line here (and its factory).
std::vector<std::unique_ptr<Benchmark>> builtin_benchmarks() {
  std::vector<std::unique_ptr<Benchmark>> list;
  list.push_back(make_winoground_benchmark());
  list.push_back(make_winogavil_benchmark());
  list.push_back(make_sugarcrepe_benchmark());
  list.push_back(make_whatsup_benchmark());
  list.push_back(make_aro_benchmark());
  list.push_back(make_aro_order_benchmark());
  list.push_back(make_mmvp_benchmark());
  list.push_back(make_valse_benchmark());
  list.push_back(make_eqben_benchmark());
  return list;
}

}  // namespace

const std::vector<std::unique_ptr<Benchmark>>& benchmarks() {
  static const std::vector<std::unique_ptr<Benchmark>> list = builtin_benchmarks();
  return list;
}

std::vector<std::string> benchmark_names() {
  std::vector<std::string> names;
  for (const auto& b : benchmarks())
    names.push_back(b->name());
  return names;
}

const Benchmark& find_benchmark(const std::string& name) {
  for (const auto& b : benchmarks()) {
    if (b->name() == name) return *b;
  }
  std::string known;
  for (const auto& n : benchmark_names())
    known += (known.empty() ? "" : ", ") + n;
  throw UsageError("unknown benchmark '" + name + "' (known: " + known + ")");
}

std::vector<ItemScores> Benchmark::load_scores(const BenchmarkData& data,
                                               const std::filesystem::path& file) const {
  const std::string text = read_text_file(file);
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < data.items.size(); ++i)
    index.emplace(data.items[i].id, i);
  std::vector<std::optional<ItemScores>> found(data.items.size());
  std::size_t line_no = 0, begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    const std::string line(trim(std::string_view(text).substr(begin, end - begin)));
    begin = end + 1;
    ++line_no;
    if (line.empty()) continue;
    const Location where{file.string(), line_no, ""};
    nlohmann::json row = nlohmann::json::parse(line, nullptr, false);
    if (row.is_discarded() || !row.is_object()) throw InputError(where, "not a JSON object");
    if (!row.contains("id")) throw InputError({where.file, line_no, "id"}, "missing");
    const std::string id = row["id"].is_string() ? row["id"].get<std::string>() : row["id"].dump();
    auto it = index.find(id);
    if (it == index.end()) {
      throw InputError(
          {where.file, line_no, "id"},
          "'" + id + "' is not an item of " + data.benchmark + " in " + data.file.string());
    }
    if (found[it->second]) throw InputError({where.file, line_no, "id"}, "'" + id + "' repeated");
    const BenchmarkItem& item = data.items[it->second];
    const nlohmann::json& m = row.value("scores", nlohmann::json());
    const Location field{where.file, line_no, "scores"};
    if (!m.is_array() || m.size() != item.texts.size()) {
      throw InputError(field, "expected " + std::to_string(item.texts.size()) +
                                  " rows (one per text) of " + std::to_string(item.images.size()) +
                                  " scores (one per image)");
    }
    ItemScores s;
    for (const auto& r : m) {
      if (!r.is_array() || r.size() != item.images.size()) {
        throw InputError(field, "expected rows of " + std::to_string(item.images.size()) +
                                    " scores (one per image)");
      }
      for (const auto& v : r) {
        if (!v.is_number() || !std::isfinite(v.get<double>())) {
          throw InputError(field, "scores must be finite numbers");
        }
        s.push_back(v.get<double>());
      }
    }
    found[it->second] = std::move(s);
  }
  std::vector<ItemScores> out;
  for (std::size_t i = 0; i < found.size(); ++i) {
    if (!found[i]) {
      throw InputError({file.string(), 0, "id"}, "no scores for item '" + data.items[i].id + "'",
                       "every item of the benchmark needs one line");
    }
    out.push_back(std::move(*found[i]));
  }
  return out;
}

void require_image_files(const std::vector<std::filesystem::path>& files,
                         const std::string& where) {
  constexpr std::size_t kListed = 10;
  std::vector<std::string> missing;
  std::map<std::filesystem::path, bool> seen;
  for (const auto& f : files) {
    std::error_code ec;
    if (seen.emplace(f, true).second && !std::filesystem::is_regular_file(f, ec))
      missing.push_back(f.filename().string());
  }
  if (missing.empty()) return;
  std::string list;
  for (std::size_t k = 0; k < missing.size() && k < kListed; ++k)
    list += (k ? ", " : "") + missing[k];
  if (missing.size() > kListed)
    list += " and " + std::to_string(missing.size() - kListed) + " more";
  throw IoError(std::to_string(missing.size()) + " image(s) not found in " + where + ": " + list);
}

ImageRequest unread_image(const std::string& name) {
  return {name,
          [name]() -> ImageBytes {
            throw UsageError("image '" + name + "' is needed: a model run reads the images");
          },
          {}};
}

DecodedImage crop_image(const DecodedImage& image, const CropBox& box) {
  const DecodedImage rgb = to_rgb(image);
  // Python's round: half to even (nearbyint under the default rounding mode).
  const auto edge = [](double v) { return static_cast<long long>(std::nearbyint(v)); };
  const long long x0 = edge(box.x), y0 = edge(box.y), x1 = edge(box.x + box.w),
                  y1 = edge(box.y + box.h);
  if (x1 <= x0 || y1 <= y0 || x1 - x0 > (1 << 20) || y1 - y0 > (1 << 20)) {
    throw UsageError("cannot crop to the box (" + std::to_string(x0) + ", " + std::to_string(y0) +
                     ", " + std::to_string(x1) + ", " + std::to_string(y1) +
                     "): it has no area or is too large");
  }
  DecodedImage out;
  out.mode = PixelMode::RGB;
  out.width = static_cast<int>(x1 - x0);
  out.height = static_cast<int>(y1 - y0);
  out.pixels.assign(static_cast<std::size_t>(out.width) * out.height * 3, 0);
  for (long long y = std::max(y0, 0LL); y < std::min<long long>(y1, rgb.height); ++y) {
    for (long long x = std::max(x0, 0LL); x < std::min<long long>(x1, rgb.width); ++x) {
      const std::size_t from = (static_cast<std::size_t>(y) * rgb.width + x) * 3;
      const std::size_t to = (static_cast<std::size_t>(y - y0) * out.width + (x - x0)) * 3;
      for (int c = 0; c < 3; ++c)
        out.pixels[to + c] = rgb.pixels[from + c];
    }
  }
  return out;
}

ImageRequest cropped_image_request(const std::filesystem::path& path, const std::string& name,
                                   const CropBox& box) {
  char b[128];
  std::snprintf(b, sizeof b, "@%g,%g,%g,%g", box.x, box.y, box.w, box.h);
  const std::string full = name + b;
  const std::size_t name_size = name.size();
  return {full,
          [path, full, box, name_size] {
            ImageBytes in;
            in.name = full;
            in.source = path.string();
            in.bytes = read_file(path);
            in.format = sniff_image_format(in.bytes);
            const DecodedImage crop = crop_image(decode_image(in), box);
            ImageBytes out;
            out.name = full;
            out.source = path.string() + full.substr(name_size);
            out.bytes = encode_png_rgb8(crop.pixels, crop.width, crop.height);
            out.format = ImageFormat::Png;
            return out;
          },
          {}};
}

ImageRequest npy_bgr_image_request(const std::filesystem::path& path, const std::string& name) {
  return {
      name,
      [path, name] {
        const NpyArray a = read_npy(path);
        if (a.shape.size() != 3 || a.shape[2] != 3 || a.shape[0] <= 0 || a.shape[1] <= 0) {
          throw InputError({path.string(), 0, "shape"},
                           "expected a frame of height x width x 3 (BGR)");
        }
        const int h = static_cast<int>(a.shape[0]), w = static_cast<int>(a.shape[1]);
        std::vector<std::uint8_t> rgb(a.values.size());
        for (std::size_t p = 0; p + 2 < a.values.size(); p += 3) {
          for (int c = 0; c < 3; ++c) {
            const float v = a.values[p + 2 - static_cast<std::size_t>(c)];  // [2, 1, 0]
            if (!(v >= 0 && v <= 255) || v != std::floor(v)) {
              throw InputError({path.string(), 0, "data"}, "expected uint8 pixel values (0-255)");
            }
            rgb[p + static_cast<std::size_t>(c)] = static_cast<std::uint8_t>(v);
          }
        }
        ImageBytes out;
        out.name = name;
        out.source = path.string();
        out.bytes = encode_png_rgb8(rgb, w, h);
        out.format = ImageFormat::Png;
        return out;
      },
      {}};
}

ItemCheck item_check(const std::string& name, const ItemScores& scores, std::size_t images,
                     std::vector<ScoreComparison> comparisons) {
  ItemCheck c{name, true, std::move(comparisons)};
  for (const ScoreComparison& k : c.comparisons) {
    const std::size_t a = k.text * images + k.image, b = k.other_text * images + k.other_image;
    if (a >= scores.size() || b >= scores.size()) {
      throw UsageError("check '" + name + "' compares a score outside the item's " +
                       std::to_string(scores.size()) + " scores");
    }
    c.right = c.right && scores[a] > scores[b];
  }
  return c;
}

ItemCheck true_text_check(const std::string& name, const ItemScores& scores,
                          const std::vector<std::uint8_t>& truth, std::size_t texts,
                          std::size_t images) {
  std::vector<ScoreComparison> comparisons;
  for (std::size_t i = 0; i < images; ++i) {
    for (std::size_t t = 0; t < texts; ++t) {
      if (!truth[t * images + i]) continue;
      for (std::size_t other = 0; other < texts; ++other) {
        if (!truth[other * images + i]) comparisons.push_back({t, i, other, i});
      }
    }
  }
  return item_check(name, scores, images, std::move(comparisons));
}

std::vector<ItemCheck> winoground_style_checks(const ItemScores& scores) {
  const std::vector<ScoreComparison> text = {{0, 0, 1, 0}, {1, 1, 0, 1}};
  const std::vector<ScoreComparison> image = {{0, 0, 0, 1}, {1, 1, 1, 0}};
  std::vector<ScoreComparison> group = text;
  group.insert(group.end(), image.begin(), image.end());
  return {item_check("group score", scores, 2, group), item_check("text score", scores, 2, text),
          item_check("image score", scores, 2, image)};
}

BenchmarkMetric accuracy_metric(const std::string& name, const std::vector<std::uint8_t>& right,
                                const BenchmarkOptions& o, const std::string& seed_name) {
  std::size_t k = 0;
  for (auto r : right)
    k += r;
  BenchmarkMetric m{
      name,
      right.empty() ? 0.0 : 100.0 * static_cast<double>(k) / static_cast<double>(right.size()),
      right.size(),
      {},
      {},
      {}};
  const BootstrapIntervals b = bootstrap_proportions(right, 1, o.bootstrap_resamples, o.confidence,
                                                     derive_seed(o.seed, seed_name));
  if (b.percentile[0].valid()) {
    m.low = b.percentile[0].low * 100;
    m.high = b.percentile[0].high * 100;
    m.method = "seeded bootstrap percentile";
  }
  return m;
}

std::vector<ItemScores> score_items(const BenchmarkData& data, const VlModel& model,
                                    EmbedStats* stats) {
  std::vector<std::string> texts;
  std::vector<ImageRequest> images;
  std::map<std::string, std::size_t> text_index, image_index;
  std::map<PairIndex, std::size_t> pair_slot;
  std::vector<PairIndex> pairs;
  for (const auto& item : data.items) {
    for (const auto& t : item.texts) {
      if (text_index.emplace(t, texts.size()).second) texts.push_back(t);
    }
    for (const auto& im : item.images) {
      if (image_index.emplace(im.name, images.size()).second) images.push_back(im);
    }
    for (const auto& t : item.texts)
      for (const auto& im : item.images) {
        const PairIndex p{text_index.at(t), image_index.at(im.name)};
        if (pair_slot.emplace(p, pairs.size()).second) pairs.push_back(p);
      }
  }
  const std::vector<double> s = model.score_pairs(images, texts, pairs, stats);
  require_finite(model, s, [&](std::size_t k) {
    return "text '" + texts[pairs[k].first] + "' with image " + images[pairs[k].second].name;
  });
  std::vector<ItemScores> out;
  out.reserve(data.items.size());
  for (const auto& item : data.items) {
    ItemScores row;
    for (const auto& t : item.texts)
      for (const auto& im : item.images)
        row.push_back(s[pair_slot.at({text_index.at(t), image_index.at(im.name)})]);
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace winokit
