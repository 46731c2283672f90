#include "winokit/data/synth.hpp"

#include <zip.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "winokit/core/error.hpp"
#include "winokit/core/rng.hpp"
#include "winokit/core/text.hpp"
#include "winokit/io/files.hpp"
#include "winokit/io/png_writer.hpp"

namespace winokit {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const std::vector<std::string> kShapes = {"circle", "square", "triangle"};
const std::vector<std::string> kColors = {"red", "green", "blue", "yellow", "purple", "pink"};
const std::vector<std::string> kSizes = {"big", "small"};
const std::vector<std::string> kNumbers = {"zero", "one", "two", "three", "four"};
const std::map<std::string, std::array<std::uint8_t, 3>> kRgb = {
    {"red", {220, 40, 40}},     {"green", {40, 170, 60}},   {"blue", {40, 80, 220}},
    {"yellow", {240, 210, 40}}, {"purple", {140, 60, 180}}, {"pink", {240, 130, 180}}};
const std::set<std::string> kFunctionWords = {"a", "the", "and", "is", "of"};

// Radii as fractions of the image width.
constexpr double kPlainRadius = 0.13;
constexpr double kBigRadius = 0.17;
constexpr double kSmallRadius = 0.09;
constexpr double kCountRadius = 0.07;
constexpr double kInnerFraction = 0.33;
constexpr double kSmallThreshold = 0.12;  // radius/width below this reads as "small"

bool contains(const std::vector<std::string>& v, const std::string& w) {
  return std::find(v.begin(), v.end(), w) != v.end();
}

// ---- relations between objects (centres and radii) ----
bool is_inside(const SceneObject& a, const SceneObject& b) {
  return a.r < b.r && std::hypot(a.x - b.x, a.y - b.y) + a.r <= b.r + 1e-9;
}
bool holds(const std::string& rel, const SceneObject& a, const SceneObject& b) {
  if (rel == "inside") return is_inside(a, b);
  if (is_inside(a, b) || is_inside(b, a)) return false;
  if (rel == "left") return a.x < b.x;
  if (rel == "right") return a.x > b.x;
  if (rel == "above") return a.y < b.y;
  if (rel == "below") return a.y > b.y;
  return false;
}

// ---- the caption grammar ----
struct NounPhrase {
  std::string shape;
  std::string color;  // empty: any
  std::string size;   // empty: any
  int count = -1;     // >= 0 for "two circles"
};

bool matches(const NounPhrase& np, const SceneObject& o) {
  return o.shape == np.shape && (np.color.empty() || o.color == np.color) &&
         (np.size.empty() || o.size == np.size);
}

class Parser {
 public:
  Parser(const std::string& caption) : caption_(caption), words_(split_whitespace(caption)) {
    for (auto& w : words_)
      w = to_lower_ascii(w);
  }
  bool done() const { return pos_ >= words_.size(); }
  const std::string& peek() const {
    static const std::string kEnd;
    return done() ? kEnd : words_[pos_];
  }
  std::string take() {
    if (done()) fail("unexpected end");
    return words_[pos_++];
  }
  void expect(const std::string& w) {
    if (take() != w) fail("expected '" + w + "'");
  }
  [[noreturn]] void fail(const std::string& why) const {
    throw UsageError("caption '" + caption_ + "' is outside the synthetic grammar: " + why,
                     "the oracle and bag-of-words scorers work on `winokit synth` datasets only");
  }
  NounPhrase noun_phrase() {
    NounPhrase np;
    std::string w = take();
    if (auto n = std::find(kNumbers.begin(), kNumbers.end(), w); n != kNumbers.end()) {
      np.count = static_cast<int>(n - kNumbers.begin());
      std::string plural = take();
      if (plural.size() < 2 || plural.back() != 's') fail("expected a plural shape");
      np.shape = plural.substr(0, plural.size() - 1);
      if (!contains(kShapes, np.shape)) fail("unknown shape '" + plural + "'");
      return np;
    }
    if (w != "a") fail("expected 'a' or a number word");
    if (contains(kSizes, peek())) np.size = take();
    if (contains(kColors, peek())) np.color = take();
    np.shape = take();
    if (!contains(kShapes, np.shape)) fail("unknown shape '" + np.shape + "'");
    return np;
  }

 private:
  std::string caption_;
  std::vector<std::string> words_;
  std::size_t pos_ = 0;
};

double np_truth(const NounPhrase& np, const Scene& scene) {
  if (np.count >= 0) {
    auto n = std::count_if(scene.objects.begin(), scene.objects.end(),
                           [&](const SceneObject& o) { return o.shape == np.shape; });
    return n == np.count ? 1.0 : 0.0;
  }
  return std::any_of(scene.objects.begin(), scene.objects.end(),
                     [&](const SceneObject& o) { return matches(np, o); })
             ? 1.0
             : 0.0;
}

std::string relation_word(Parser& p) {
  std::string w = p.take();
  if (w == "left" || w == "right") {
    p.expect("of");
    return w;
  }
  if (w == "above" || w == "below" || w == "inside") return w;
  p.fail("expected a relation (left of, right of, above, below, inside)");
}

}  // namespace

double scene_truth(const std::string& caption, const Scene& scene) {
  Parser p(caption);
  if (p.peek() == "the") {
    // the S is ADJ and the S is ADJ
    double satisfied = 0;
    int claims = 0;
    while (!p.done()) {
      if (claims > 0) p.expect("and");
      p.expect("the");
      std::string shape = p.take();
      if (!contains(kShapes, shape)) p.fail("unknown shape '" + shape + "'");
      p.expect("is");
      std::string adj = p.take();
      bool is_color = contains(kColors, adj);
      if (!is_color && !contains(kSizes, adj)) p.fail("unknown attribute '" + adj + "'");
      bool ok = std::any_of(scene.objects.begin(), scene.objects.end(), [&](const auto& o) {
        return o.shape == shape && (is_color ? o.color : o.size) == adj;
      });
      satisfied += ok ? 1.0 : 0.0;
      ++claims;
    }
    return satisfied / claims;
  }
  NounPhrase first = p.noun_phrase();
  std::string connector = p.peek();
  if (connector == "and") {
    p.take();
    NounPhrase second = p.noun_phrase();
    if (!p.done()) p.fail("trailing words");
    return (np_truth(first, scene) + np_truth(second, scene)) / 2.0;
  }
  if (connector == "is") p.take();
  std::string rel = relation_word(p);
  NounPhrase second = p.noun_phrase();
  if (!p.done()) p.fail("trailing words");
  bool related = false;
  for (const auto& a : scene.objects) {
    for (const auto& b : scene.objects) {
      if (&a != &b && matches(first, a) && matches(second, b) && holds(rel, a, b)) related = true;
    }
  }
  return (np_truth(first, scene) + np_truth(second, scene) + (related ? 1.0 : 0.0)) / 3.0;
}

std::vector<std::string> scene_words(const Scene& scene) {
  std::set<std::string> words(kFunctionWords.begin(), kFunctionWords.end());
  std::map<std::string, int> counts;
  for (const auto& o : scene.objects) {
    words.insert(o.shape);
    words.insert(o.shape + "s");
    words.insert(o.color);
    words.insert(o.size);
    ++counts[o.shape];
  }
  for (const auto& [shape, n] : counts) {
    if (n < static_cast<int>(kNumbers.size())) words.insert(kNumbers[static_cast<std::size_t>(n)]);
  }
  for (const auto& a : scene.objects) {
    for (const auto& b : scene.objects) {
      if (&a == &b) continue;
      for (const char* rel : {"left", "right", "above", "below", "inside"}) {
        if (holds(rel, a, b)) words.insert(rel);
      }
    }
  }
  return {words.begin(), words.end()};
}

json scene_to_json(const Scene& scene) {
  json objects = json::array();
  for (const auto& o : scene.objects) {
    objects.push_back({{"shape", o.shape},
                       {"color", o.color},
                       {"size", o.size},
                       {"x", o.x},
                       {"y", o.y},
                       {"r", o.r}});
  }
  return {{"width", scene.width},
          {"height", scene.height},
          {"background", {scene.background[0], scene.background[1], scene.background[2]}},
          {"objects", objects}};
}

Scene scene_from_json(const json& j, const Location& where) {
  try {
    Scene s;
    s.width = j.at("width").get<int>();
    s.height = j.at("height").get<int>();
    auto bg = j.at("background");
    for (std::size_t c = 0; c < 3; ++c)
      s.background[c] = bg.at(c).get<std::uint8_t>();
    for (const auto& o : j.at("objects")) {
      s.objects.push_back({o.at("shape").get<std::string>(), o.at("color").get<std::string>(),
                           o.at("size").get<std::string>(), o.at("x").get<double>(),
                           o.at("y").get<double>(), o.at("r").get<double>()});
    }
    return s;
  } catch (const json::exception& e) {
    throw InputError(where, std::string("malformed scene description: ") + e.what());
  }
}

// ---- rendering ----
namespace {
bool covers(const SceneObject& o, double px, double py) {
  double dx = px - o.x, dy = py - o.y;
  if (o.shape == "circle") return dx * dx + dy * dy <= o.r * o.r;
  if (o.shape == "square") {
    constexpr double kHalfSide = 0.88;  // a square of the same visual weight as the circle
    return std::abs(dx) <= o.r * kHalfSide && std::abs(dy) <= o.r * kHalfSide;
  }
  // Upward triangle: apex at (x, y - r), base at y + 0.8 r spanning x +- r.
  constexpr double kBase = 0.8;
  double top = o.y - o.r, bottom = o.y + o.r * kBase;
  if (py < top || py > bottom) return false;
  double half = o.r * (py - top) / (bottom - top);
  return std::abs(dx) <= half;
}

std::vector<std::uint8_t> render_scene_rgb(const Scene& scene) {
  std::vector<std::uint8_t> rgb(static_cast<std::size_t>(scene.width) * scene.height * 3);
  for (int y = 0; y < scene.height; ++y) {
    for (int x = 0; x < scene.width; ++x) {
      std::array<std::uint8_t, 3> c = scene.background;
      for (const auto& o : scene.objects) {  // later objects are drawn on top
        if (covers(o, x + 0.5, y + 0.5)) c = kRgb.at(o.color);
      }
      std::size_t at = (static_cast<std::size_t>(y) * scene.width + x) * 3;
      rgb[at] = c[0];
      rgb[at + 1] = c[1];
      rgb[at + 2] = c[2];
    }
  }
  return rgb;
}
}  // namespace

// ---- generation ----
namespace {

struct Pair {
  std::string kind, tag, collapsed;
  int preds = 1;
  std::array<std::string, 2> captions;
  std::array<Scene, 2> scenes;
};

class Generator {
 public:
  Generator(const SynthOptions& o, std::uint64_t seed) : opt_(o), rng_(seed) {}

  const std::string& pick(const std::vector<std::string>& v) { return v[rng_.below(size(v))]; }
  std::pair<std::string, std::string> two(const std::vector<std::string>& v) {
    std::size_t a = rng_.below(size(v));
    std::size_t b = (a + 1 + rng_.below(size(v) - 1)) % v.size();
    return {v[a], v[b]};
  }
  double jitter(double amount) { return (rng_.uniform() * 2.0 - 1.0) * amount * W(); }
  double W() const { return opt_.image_size; }

  SceneObject object(const std::string& shape, const std::string& color, double radius_frac,
                     double fx, double fy) {
    double r = radius_frac * W();
    return {shape,
            color,
            radius_frac < kSmallThreshold ? "small" : "big",
            fx * W() + jitter(0.03),
            fy * W() + jitter(0.03),
            r};
  }

  Scene blank(const std::array<std::uint8_t, 3>& bg) {
    Scene s;
    s.width = s.height = opt_.image_size;
    s.background = bg;
    return s;
  }
  std::array<std::uint8_t, 3> background() {
    constexpr std::uint32_t kLow = 200, kSpread = 50;  // light, so every colour stands out
    return {static_cast<std::uint8_t>(kLow + rng_.below(kSpread)),
            static_cast<std::uint8_t>(kLow + rng_.below(kSpread)),
            static_cast<std::uint8_t>(kLow + rng_.below(kSpread))};
  }

  // Two objects side by side (horizontal) or stacked (vertical); order given by `first_a`.
  void place_two(Scene& s, SceneObject a, SceneObject b, bool vertical) {
    constexpr double kNear = 0.28, kFar = 0.72, kMid = 0.5;
    if (vertical) {
      a.x = kMid * W() + jitter(0.05);
      a.y = kNear * W() + jitter(0.03);
      b.x = kMid * W() + jitter(0.05);
      b.y = kFar * W() + jitter(0.03);
    } else {
      a.x = kNear * W() + jitter(0.03);
      a.y = kMid * W() + jitter(0.05);
      b.x = kFar * W() + jitter(0.03);
      b.y = kMid * W() + jitter(0.05);
    }
    s.objects = {a, b};
  }

  Pair make(const std::string& kind, const std::array<std::uint8_t, 3>& bg0,
            const std::array<std::uint8_t, 3>& bg1) {
    Pair p;
    p.kind = kind;
    p.scenes = {blank(bg0), blank(bg1)};
    auto [s1, s2] = two(kShapes);
    auto [c1, c2] = two(kColors);
    bool swap_sides = rng_.below(2) == 1;
    if (kind == "color_swap" || kind == "predicate_swap") {
      for (int k = 0; k < 2; ++k) {
        auto a = object(s1, k == 0 ? c1 : c2, kPlainRadius, 0, 0);
        auto b = object(s2, k == 0 ? c2 : c1, kPlainRadius, 0, 0);
        swap_sides ? place_two(p.scenes[k], b, a, false) : place_two(p.scenes[k], a, b, false);
      }
      if (kind == "color_swap") {
        p.captions = {"a " + c1 + " " + s1 + " and a " + c2 + " " + s2,
                      "a " + c2 + " " + s1 + " and a " + c1 + " " + s2};
        p.tag = "Adjective-Color";
      } else {
        p.captions = {"the " + s1 + " is " + c1 + " and the " + s2 + " is " + c2,
                      "the " + s1 + " is " + c2 + " and the " + s2 + " is " + c1};
        p.tag = "Adjective-Color";
        p.preds = 2;
      }
      p.collapsed = "Relation";
    } else if (kind == "size_swap") {
      for (int k = 0; k < 2; ++k) {
        auto a = object(s1, c1, k == 0 ? kBigRadius : kSmallRadius, 0, 0);
        auto b = object(s2, c2, k == 0 ? kSmallRadius : kBigRadius, 0, 0);
        swap_sides ? place_two(p.scenes[k], b, a, false) : place_two(p.scenes[k], a, b, false);
      }
      p.captions = {"a big " + s1 + " and a small " + s2, "a small " + s1 + " and a big " + s2};
      p.tag = "Adjective-Size";
      p.collapsed = "Relation";
    } else if (kind == "spatial_swap" || kind == "phrase_swap") {
      bool vertical = kind == "phrase_swap" || rng_.below(2) == 1;
      for (int k = 0; k < 2; ++k) {
        auto a = object(s1, c1, kPlainRadius, 0, 0);
        auto b = object(s2, c2, kPlainRadius, 0, 0);
        k == 0 ? place_two(p.scenes[k], a, b, vertical) : place_two(p.scenes[k], b, a, vertical);
      }
      std::string rel = vertical ? "above" : "left of";
      if (kind == "spatial_swap") {
        p.captions = {"a " + s1 + " is " + rel + " a " + s2, "a " + s2 + " is " + rel + " a " + s1};
        p.tag = "Noun";
        p.collapsed = "Object";
      } else {
        p.captions = {"a " + c1 + " " + s1 + " is " + rel + " a " + c2 + " " + s2,
                      "a " + c2 + " " + s2 + " is " + rel + " a " + c1 + " " + s1};
        p.tag = "Noun Phrase";
        p.collapsed = "Both";
      }
    } else if (kind == "inside_swap") {
      for (int k = 0; k < 2; ++k) {
        const std::string& outer = k == 0 ? s2 : s1;
        const std::string& inner = k == 0 ? s1 : s2;
        double cx = 0.5 + (rng_.uniform() - 0.5) * 0.1;
        double cy = 0.5 + (rng_.uniform() - 0.5) * 0.1;
        SceneObject o{outer, k == 0 ? c2 : c1, "big", cx * W(), cy * W(), 0.3 * W()};
        // The triangle's widest inscribed circle sits below its centre.
        double dy = outer == "triangle" ? 0.25 * o.r : 0.0;
        SceneObject i{inner, k == 0 ? c1 : c2, "small", o.x, o.y + dy, kInnerFraction * 0.9 * o.r};
        p.scenes[k].objects = {o, i};
      }
      p.captions = {"a " + s1 + " is inside a " + s2, "a " + s2 + " is inside a " + s1};
      p.tag = "Noun";
      p.collapsed = "Object";
    } else {  // count_swap
      // Two distinct counts from {2, 3, 4}.
      std::size_t n1 = 2 + rng_.below(3);
      std::size_t n2 = 2 + (n1 - 2 + 1 + rng_.below(2)) % 3;
      for (int k = 0; k < 2; ++k) {
        std::size_t a = k == 0 ? n1 : n2, b = k == 0 ? n2 : n1;
        // Cells of a 4 x 3 grid, shuffled.
        constexpr int kCols = 4, kRows = 3;
        std::vector<int> cells(kCols * kRows);
        for (int c = 0; c < kCols * kRows; ++c)
          cells[static_cast<std::size_t>(c)] = c;
        shuffle(cells, rng_);
        for (std::size_t m = 0; m < a + b; ++m) {
          int cell = cells[m];
          double fx = (cell % kCols + 0.5) / kCols, fy = (cell / kCols + 0.5) / kRows;
          p.scenes[k].objects.push_back(
              object(m < a ? s1 : s2, m < a ? c1 : c2, kCountRadius, fx, fy));
        }
      }
      p.captions = {kNumbers[n1] + " " + s1 + "s and " + kNumbers[n2] + " " + s2 + "s",
                    kNumbers[n2] + " " + s1 + "s and " + kNumbers[n1] + " " + s2 + "s"};
      p.tag = "Numeral";
      p.collapsed = "Relation";
    }
    return p;
  }

  Rng& rng() { return rng_; }

 private:
  static std::uint32_t size(const std::vector<std::string>& v) {
    return static_cast<std::uint32_t>(v.size());
  }
  SynthOptions opt_;
  Rng rng_;
};

}  // namespace

SynthDataset generate_synthetic(const SynthOptions& options) {
  constexpr int kMinImageSize = 64, kMaxImageSize = 2048;
  if (options.count == 0) throw UsageError("synth: --count must be at least 1");
  if (options.image_size < kMinImageSize || options.image_size > kMaxImageSize) {
    throw UsageError("synth: --image-size must be between 64 and 2048");
  }
  static const std::vector<std::string> kKinds = {"color_swap",  "size_swap",  "spatial_swap",
                                                  "inside_swap", "count_swap", "predicate_swap",
                                                  "phrase_swap"};
  SynthDataset out;
  out.images_png.resize(options.count);
  for (std::size_t i = 0; i < options.count; ++i) {
    // One stream per example: example i is the same whatever the count.
    Generator gen(options, derive_seed(options.seed, "synth/" + std::to_string(i)));
    const std::string& kind = kKinds[i % kKinds.size()];
    bool series = gen.rng().below(2) == 1;
    auto bg0 = gen.background();
    auto bg1 = series ? bg0 : gen.background();
    Pair p = gen.make(kind, bg0, bg1);
    WinogroundExample ex;
    ex.id = std::to_string(i);
    ex.line = i + 1;
    ex.captions = p.captions;
    ex.images = {"ex_" + ex.id + "_img_0", "ex_" + ex.id + "_img_1"};
    ex.tag = p.tag;
    ex.secondary_tag_raw = series ? "Series" : "";
    if (series) ex.secondary_tags = {"Series"};
    ex.num_main_preds = p.preds;
    ex.collapsed_tag = p.collapsed;
    ex.extra = {{"kind", p.kind},
                {"scenes", json::array({scene_to_json(p.scenes[0]), scene_to_json(p.scenes[1])})}};
    json line = {{"id", static_cast<long long>(i)},
                 {"caption_0", ex.captions[0]},
                 {"caption_1", ex.captions[1]},
                 {"image_0", ex.images[0]},
                 {"image_1", ex.images[1]},
                 {"tag", ex.tag},
                 {"secondary_tag", ex.secondary_tag_raw},
                 {"num_main_preds", p.preds},
                 {"collapsed_tag", ex.collapsed_tag},
                 {"kind", p.kind},
                 {"scenes", ex.extra["scenes"]}};
    out.examples_jsonl += line.dump() + "\n";
    for (int k = 0; k < 2; ++k) {
      out.images_png[i][static_cast<std::size_t>(k)] =
          encode_png_rgb8(render_scene_rgb(p.scenes[static_cast<std::size_t>(k)]),
                          options.image_size, options.image_size);
    }
    out.dataset.index_by_id.emplace(ex.id, out.dataset.examples.size());
    out.dataset.examples.push_back(std::move(ex));
  }
  return out;
}

void write_synthetic(const SynthDataset& synth, const fs::path& dir, bool zip, bool force) {
  std::error_code ec;
  if (fs::exists(dir / "examples.jsonl") && !force) {
    throw IoError((dir / "examples.jsonl").string() + ": already exists",
                  "pass --force to replace the dataset");
  }
  fs::create_directories(dir, ec);
  if (ec) throw IoError(dir.string() + ": cannot create directory: " + ec.message());
  const auto& examples = synth.dataset.examples;
  if (zip) {
    fs::path tmp = dir / ".images.zip.tmp";
    fs::remove(tmp, ec);
    int err = 0;
    zip_t* archive = zip_open(tmp.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
    if (archive == nullptr) throw IoError(tmp.string() + ": cannot create zip archive");
    for (std::size_t i = 0; i < examples.size(); ++i) {
      for (std::size_t k = 0; k < 2; ++k) {
        const std::string& png = synth.images_png[i][k];
        zip_source_t* src = zip_source_buffer(archive, png.data(), png.size(), 0);
        std::string member = "images/" + examples[i].images[k] + ".png";
        if (src == nullptr || zip_file_add(archive, member.c_str(), src, ZIP_FL_OVERWRITE) < 0) {
          if (src != nullptr) zip_source_free(src);
          zip_discard(archive);
          throw IoError(tmp.string() + ": cannot add " + member);
        }
      }
    }
    if (zip_close(archive) != 0) {
      std::string message = zip_strerror(archive);
      zip_discard(archive);
      throw IoError(tmp.string() + ": cannot write zip archive: " + message);
    }
    fs::rename(tmp, dir / "images.zip", ec);
    if (ec) throw IoError((dir / "images.zip").string() + ": " + ec.message());
  } else {
    fs::create_directories(dir / "images", ec);
    if (ec) throw IoError((dir / "images").string() + ": cannot create directory");
    for (std::size_t i = 0; i < examples.size(); ++i) {
      for (std::size_t k = 0; k < 2; ++k) {
        write_file_atomic(dir / "images" / (examples[i].images[k] + ".png"),
                          synth.images_png[i][k]);
      }
    }
  }
  // The examples file goes last: a dataset is complete once it exists.
  write_file_atomic(dir / "examples.jsonl", synth.examples_jsonl);
}

}  // namespace winokit
