// Sharded runs and `winokit merge` (see shard.hpp): a model wrapper that records its slice of
// every call in a shard and replays the merged calls in merge.
#include "shard.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common.hpp"
#include "winokit/core/error.hpp"
#include "winokit/core/hash.hpp"
#include "winokit/eval/model_scorer.hpp"
#include "winokit/io/files.hpp"
#include "winokit/version.hpp"

namespace winokit::cli {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr int kPartFormat = 1;
// The placeholder a shard hands back for units other shards compute: finite, so the command's
// checks pass (its outputs are not written in a shard).
constexpr float kPlaceholderFloat = 1.0f;
constexpr double kPlaceholderDouble = 0.0;

// One model call: its kind ("images", "texts", "pairs"), a signature of the request, its items
// (one result of `item_bytes` each) and its work units (an item's unit is unit_of[item]; each
// unit is computed by one shard).
struct Call {
  std::string kind, signature;
  std::size_t items = 0, item_bytes = 0, units = 0;
  std::size_t lo = 0, hi = 0;            // a shard's slice of the units
  std::string bytes;                     // shard: results of its items, in item order
  std::vector<std::string> shard_bytes;  // replay: each shard's results, shard by shard
  EmbedStats stats;
};

enum class Mode { Off, Shard, Replay };

struct State {
  Mode mode = Mode::Off;
  int index = 0, count = 1;
  std::string part;
  std::vector<std::string> argv;  // this process's command line
  std::vector<Call> calls;        // shard: recorded; replay: to hand out in order
  std::size_t next = 0;           // replay: the next call
  json models = json::array();    // shard: describe() of each model opened; replay: recorded
  std::size_t models_seen = 0;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  std::mutex mutex;
};

State& state() {
  static State s;
  return s;
}

std::string hex_of(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 0xF]);
  }
  return out;
}

std::string bytes_of_hex(const std::string& hex, const std::string& where) {
  auto digit = [&](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    throw InputError({where, 0, "data"}, "not hexadecimal");
  };
  if (hex.size() % 2 != 0) throw InputError({where, 0, "data"}, "odd number of hex digits");
  std::string out(hex.size() / 2, '\0');
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<char>(digit(hex[2 * i]) * 16 + digit(hex[2 * i + 1]));
  return out;
}

json stats_json(const EmbedStats& s) {
  return {{"images_computed", s.images_computed}, {"images_cached", s.images_cached},
          {"texts_computed", s.texts_computed},   {"texts_cached", s.texts_cached},
          {"pairs_computed", s.pairs_computed},   {"pairs_cached", s.pairs_cached},
          {"cache_corrupt", s.cache_corrupt},     {"image_seconds", s.image_seconds},
          {"text_seconds", s.text_seconds},       {"pair_seconds", s.pair_seconds},
          {"cache_warning", s.cache_warning}};
}

EmbedStats stats_of(const json& j) {
  EmbedStats s;
  s.images_computed = j.at("images_computed").get<std::size_t>();
  s.images_cached = j.at("images_cached").get<std::size_t>();
  s.texts_computed = j.at("texts_computed").get<std::size_t>();
  s.texts_cached = j.at("texts_cached").get<std::size_t>();
  s.pairs_computed = j.at("pairs_computed").get<std::size_t>();
  s.pairs_cached = j.at("pairs_cached").get<std::size_t>();
  s.cache_corrupt = j.at("cache_corrupt").get<std::size_t>();
  s.image_seconds = j.at("image_seconds").get<double>();
  s.text_seconds = j.at("text_seconds").get<double>();
  s.pair_seconds = j.at("pair_seconds").get<double>();
  s.cache_warning = j.at("cache_warning").get<std::string>();
  return s;
}

void add_stats(EmbedStats& to, const EmbedStats& s) {
  to.images_computed += s.images_computed;
  to.images_cached += s.images_cached;
  to.texts_computed += s.texts_computed;
  to.texts_cached += s.texts_cached;
  to.pairs_computed += s.pairs_computed;
  to.pairs_cached += s.pairs_cached;
  to.cache_corrupt += s.cache_corrupt;
  to.image_seconds += s.image_seconds;
  to.text_seconds += s.text_seconds;
  to.pair_seconds += s.pair_seconds;
  if (to.cache_warning.empty()) to.cache_warning = s.cache_warning;
}

// Shard I's slice of n units: [I * n / N, (I + 1) * n / N).
std::pair<std::size_t, std::size_t> slice(std::size_t n, int index, int count) {
  const auto i = static_cast<std::size_t>(index), c = static_cast<std::size_t>(count);
  return {i * n / c, (i + 1) * n / c};
}

// What a model's description must agree on across shards and merge: everything but the
// machine it ran on (its CPU, and the thread count --threads 0 gives there).
json comparable(json describe) {
  if (describe.is_object()) {
    describe.erase("compute");
    describe.erase("threads");
  }
  return describe;
}

// The command line without --shard and --part (the same for every shard).
std::vector<std::string> without_shard_flags(const std::vector<std::string>& argv) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == "--shard" || a == "--part") {
      ++i;
      continue;
    }
    if (a.rfind("--shard=", 0) == 0 || a.rfind("--part=", 0) == 0) continue;
    out.push_back(a);
  }
  return out;
}

// The SHA-256 of each file the command line names (a folder: its examples.jsonl, if any):
// the data the shards read, which merge checks again.
json input_hashes(const std::vector<std::string>& argv) {
  json out = json::object();
  for (std::size_t i = 1; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a.empty() || a[0] == '-') continue;
    std::error_code ec;
    fs::path file = a;
    if (fs::is_directory(file, ec)) file /= "examples.jsonl";
    if (!fs::is_regular_file(file, ec)) continue;
    // Outputs are not inputs (an earlier run's would differ after merge); the model is checked
    // by its description (weights_sha256), not hashed again here.
    if (i > 0 &&
        (argv[i - 1] == "--json" || argv[i - 1] == "--csv" || argv[i - 1] == "--html" ||
         argv[i - 1] == "--markdown" || argv[i - 1] == "--out" || argv[i - 1] == "--per-example" ||
         argv[i - 1] == "--scores-out" || argv[i - 1] == "--matrix-out" ||
         argv[i - 1] == "--model" || argv[i - 1] == "--tokenizer" || argv[i - 1] == "--cache-dir"))
      continue;
    try {
      out[file.string()] = sha256_file(file);
    } catch (const IoError&) {
      // unreadable: the command itself reports it
    }
  }
  return out;
}

std::pair<int, int> parse_shard(const std::string& spec) {
  const auto slash = spec.find('/');
  auto number = [&](const std::string& text, const char* what) {
    if (text.empty() || text.size() > 6 ||
        text.find_first_not_of("0123456789") != std::string::npos)
      throw UsageError("--shard " + spec + ": " + what + " is not a number",
                       "give --shard I/N with 0 <= I < N, or --shard env/N");
    return std::stoi(text);
  };
  if (slash == std::string::npos)
    throw UsageError("--shard " + spec + ": expected I/N (shard I of N, I from 0) or env/N");
  const int count = number(spec.substr(slash + 1), "N");
  std::string index_text = spec.substr(0, slash);
  if (index_text == "env") {
    index_text.clear();
    for (const char* var : {"SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX", "WINOKIT_SHARD_INDEX"}) {
      if (const char* v = std::getenv(var); v != nullptr && *v) {
        index_text = v;
        break;
      }
    }
    if (index_text.empty())
      throw UsageError("--shard env/" + std::to_string(count) +
                           ": none of SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX, "
                           "WINOKIT_SHARD_INDEX is set",
                       "run it as a Slurm array task or a Kubernetes Indexed Job, or give I/N");
  }
  const int index = number(index_text, "I");
  if (count < 1 || index >= count)
    throw UsageError("--shard " + spec + ": shard " + std::to_string(index) + " of " +
                         std::to_string(count) + " does not exist",
                     "shards are numbered 0 .. N-1");
  return {index, count};
}

// The items of `unit_of` whose unit is in [lo, hi), in item order.
std::vector<std::size_t> items_in(const std::vector<std::size_t>& unit_of, std::size_t lo,
                                  std::size_t hi) {
  std::vector<std::size_t> out;
  for (std::size_t k = 0; k < unit_of.size(); ++k)
    if (unit_of[k] >= lo && unit_of[k] < hi) out.push_back(k);
  return out;
}

// Runs one model call in a shard (its units' items computed and recorded) or in merge (the
// recorded results of every shard): returns the results of every item, `item_bytes` each.
// `unit_of[item]` is the item's unit (units numbered 0 .. units-1).
std::string run_call(
    const std::string& kind, const std::string& signature, const std::vector<std::size_t>& unit_of,
    std::size_t units, std::size_t item_bytes, const std::string& placeholder, EmbedStats* stats,
    const std::function<std::string(const std::vector<std::size_t>&, EmbedStats*)>& compute) {
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  const std::size_t n = unit_of.size();
  std::string full;
  full.reserve(n * item_bytes);
  for (std::size_t k = 0; k < n; ++k)
    full += placeholder;
  auto scatter = [&](const std::vector<std::size_t>& items, const std::string& bytes) {
    for (std::size_t j = 0; j < items.size(); ++j)
      full.replace(items[j] * item_bytes, item_bytes, bytes, j * item_bytes, item_bytes);
  };
  if (st.mode == Mode::Replay) {
    if (st.next >= st.calls.size())
      throw InputError({"merge", 0, "calls"},
                       "the command makes more model calls than the parts recorded (" +
                           std::to_string(st.calls.size()) + ")",
                       "the data or the command changed since the shards ran");
    const Call& c = st.calls[st.next];
    if (c.kind != kind || c.signature != signature || c.items != n || c.units != units ||
        c.item_bytes != item_bytes) {
      throw InputError({"merge", 0, "calls"},
                       "model call " + std::to_string(st.next) + " is " + kind + " x " +
                           std::to_string(n) + " now, but the parts recorded " + c.kind + " x " +
                           std::to_string(c.items) +
                           (c.signature != signature ? " of other inputs" : ""),
                       "the data or the command changed since the shards ran");
    }
    for (int i = 0; i < st.count; ++i) {
      const auto [lo, hi] = slice(units, i, st.count);
      const std::vector<std::size_t> items = items_in(unit_of, lo, hi);
      const std::string& bytes = c.shard_bytes[static_cast<std::size_t>(i)];
      if (bytes.size() != items.size() * item_bytes)
        throw InputError({"merge", 0, "calls"},
                         "shard " + std::to_string(i) + "'s results of model call " +
                             std::to_string(st.next) + " have the wrong size",
                         "the part is damaged");
      scatter(items, bytes);
    }
    ++st.next;
    if (stats) add_stats(*stats, c.stats);
    return full;
  }
  Call c;
  c.kind = kind;
  c.signature = signature;
  c.items = n;
  c.item_bytes = item_bytes;
  c.units = units;
  std::tie(c.lo, c.hi) = slice(units, st.index, st.count);
  const std::vector<std::size_t> items = items_in(unit_of, c.lo, c.hi);
  if (!items.empty()) c.bytes = compute(items, &c.stats);
  if (c.bytes.size() != items.size() * item_bytes) throw Error("shard: wrong result size");
  if (stats) add_stats(*stats, c.stats);
  scatter(items, c.bytes);
  st.calls.push_back(std::move(c));
  return full;
}

std::vector<std::size_t> identity_units(std::size_t n) {
  std::vector<std::size_t> out(n);
  for (std::size_t k = 0; k < n; ++k)
    out[k] = k;
  return out;
}

// A cross-encoder's units: the pairs that share a caption or an image (connected components),
// so each image and caption is encoded by one shard; numbered in order of first pair. When one
// component holds more than a shard's share (a full caption x image matrix), the units are the
// images instead (each image encoded once; a caption then may be encoded by several shards).
std::vector<std::size_t> pair_units(const std::vector<PairIndex>& pairs, std::size_t captions,
                                    std::size_t images, int count, std::size_t* units) {
  std::vector<std::size_t> parent(captions + images);
  for (std::size_t k = 0; k < parent.size(); ++k)
    parent[k] = k;
  auto find = [&](std::size_t x) {
    while (parent[x] != x)
      x = parent[x] = parent[parent[x]];
    return x;
  };
  for (const auto& [c, i] : pairs)
    parent[find(c)] = find(captions + i);
  std::map<std::size_t, std::size_t> number, size;
  std::vector<std::size_t> unit_of(pairs.size());
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    const std::size_t root = find(pairs[k].first);
    unit_of[k] = number.emplace(root, number.size()).first->second;
    ++size[root];
  }
  std::size_t largest = 0;
  for (const auto& [root, n] : size)
    largest = std::max(largest, n);
  const auto c = static_cast<std::size_t>(count);
  if (count > 1 && largest > (pairs.size() + c - 1) / c) {
    number.clear();
    for (std::size_t k = 0; k < pairs.size(); ++k)
      unit_of[k] = number.emplace(pairs[k].second, number.size()).first->second;
  }
  *units = number.size();
  return unit_of;
}

template <typename T>
std::string raw_bytes(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}
template <typename T>
std::vector<T> from_raw(const std::string& bytes) {
  std::vector<T> v(bytes.size() / sizeof(T));
  std::memcpy(v.data(), bytes.data(), v.size() * sizeof(T));
  return v;
}

std::string names_signature(const std::vector<ImageRequest>& images) {
  std::string s = "images\n";
  for (const auto& im : images)
    s += im.name + '\0';
  return sha256_hex(s);
}
std::string texts_signature(const std::vector<std::string>& texts) {
  std::string s = "texts\n";
  for (const auto& t : texts)
    s += t + '\0';
  return sha256_hex(s);
}

// The wrapped model: every call goes through run_call.
class ShardModel final : public VlModel, public DualEncoder {
 public:
  explicit ShardModel(std::unique_ptr<VlModel> inner)
      : inner_(std::move(inner)), dual_(inner_->dual_encoder()) {}
  std::string family() const override { return inner_->family(); }
  std::string name() const override { return inner_->name(); }
  std::vector<Ability> abilities() const override { return inner_->abilities(); }
  std::vector<std::string> heads() const override { return inner_->heads(); }
  std::string head() const override { return inner_->head(); }
  std::string retrieval_head() const override { return inner_->retrieval_head(); }
  std::string score_name() const override { return inner_->score_name(); }
  nlohmann::json describe() const override { return inner_->describe(); }
  nlohmann::json engine_bench(const EngineBenchOptions& options) const override {
    return inner_->engine_bench(options);
  }
  AlignmentMethod alignment_method() const override { return inner_->alignment_method(); }
  std::vector<AlignmentMaps> align(const ImageBytes& image,
                                   const std::vector<std::string>& captions) const override {
    return inner_->align(image, captions);
  }
  const DualEncoder* dual_encoder() const override { return dual_ ? this : nullptr; }

  std::vector<double> score_pairs(const std::vector<ImageRequest>& images,
                                  const std::vector<std::string>& captions,
                                  const std::vector<PairIndex>& pairs,
                                  EmbedStats* stats) const override {
    // A dual encoder with one score (no heads to choose) scores through its embeddings: its
    // units are then the images and the captions, each computed by one shard.
    if (dual_ != nullptr && inner_->heads().empty())
      return dual_encoder_pair_scores(*this, images, captions, pairs, stats);
    std::string sig = "pairs\n" + names_signature(images) + texts_signature(captions);
    for (const auto& [c, i] : pairs)
      sig += std::to_string(c) + "," + std::to_string(i) + ";";
    const std::string placeholder(reinterpret_cast<const char*>(&kPlaceholderDouble),
                                  sizeof(double));
    std::size_t units = 0;
    const std::vector<std::size_t> unit_of =
        pair_units(pairs, captions.size(), images.size(), state().count, &units);
    const std::string bytes =
        run_call("pairs", sha256_hex(sig), unit_of, units, sizeof(double), placeholder, stats,
                 [&](const std::vector<std::size_t>& items, EmbedStats* s) {
                   std::vector<PairIndex> part;
                   for (std::size_t k : items)
                     part.push_back(pairs[k]);
                   return raw_bytes(inner_->score_pairs(images, captions, part, s));
                 });
    return from_raw<double>(bytes);
  }

  int embed_dim() const override { return dual_->embed_dim(); }
  std::vector<float> embed_images(const std::vector<ImageRequest>& images, EmbedStats* stats,
                                  const EncodeOptions& encode, TowerOutput* full) const override {
    refuse_states(encode, full);
    return embed("images", names_signature(images), images.size(), stats,
                 [&](const std::vector<std::size_t>& items, EmbedStats* s) {
                   std::vector<ImageRequest> part;
                   for (std::size_t k : items)
                     part.push_back(images[k]);
                   return dual_->embed_images(part, s);
                 });
  }
  std::vector<float> embed_texts(const std::vector<std::string>& texts, EmbedStats* stats,
                                 const EncodeOptions& encode, TowerOutput* full) const override {
    refuse_states(encode, full);
    return embed("texts", texts_signature(texts), texts.size(), stats,
                 [&](const std::vector<std::size_t>& items, EmbedStats* s) {
                   std::vector<std::string> part;
                   for (std::size_t k : items)
                     part.push_back(texts[k]);
                   return dual_->embed_texts(part, s);
                 });
  }
  double score(const float* text, const float* image) const override {
    return dual_->score(text, image);
  }

 private:
  static void refuse_states(const EncodeOptions& encode, const TowerOutput* full) {
    if (full != nullptr || encode.hidden_states || encode.token_states || encode.pooled_states)
      throw UsageError("--shard does not split per-layer states (embed --hidden-states, probe)",
                       "run it without --shard");
  }
  std::vector<float> embed(const std::string& kind, const std::string& sig, std::size_t n,
                           EmbedStats* stats,
                           const std::function<std::vector<float>(const std::vector<std::size_t>&,
                                                                  EmbedStats*)>& compute) const {
    const auto dim = static_cast<std::size_t>(dual_->embed_dim());
    std::string placeholder;
    for (std::size_t d = 0; d < dim; ++d)
      placeholder.append(reinterpret_cast<const char*>(&kPlaceholderFloat), sizeof(float));
    const std::string bytes =
        run_call(kind, sig, identity_units(n), n, dim * sizeof(float), placeholder, stats,
                 [&](const std::vector<std::size_t>& items, EmbedStats* s) {
                   return raw_bytes(compute(items, s));
                 });
    return from_raw<float>(bytes);
  }

  std::unique_ptr<VlModel> inner_;
  const DualEncoder* dual_;
};

// The commands whose model calls a shard splits (the names their open() calls give).
bool shardable(const std::string& command) {
  for (const char* c :
       {"eval", "run", "winogavil", "retrieval", "variants", "embed", "perplexity", "probe"})
    if (command.rfind(c, 0) == 0) return command != "embed --hidden-states";
  return command.empty();  // retrieval opens its models with the plain open()
}

}  // namespace

void set_command_line(int argc, char** argv) {
  State& st = state();
  st.argv.assign(argv, argv + argc);
}

void ShardFlags::add_to(CLI::App& app) {
  app.add_option("--shard", shard,
                 "Run shard I of N (I from 0): compute a slice of the work and write a part "
                 "file for `winokit merge`; env/N takes I from $SLURM_ARRAY_TASK_ID or "
                 "$JOB_COMPLETION_INDEX (docs/cluster.md)");
  app.add_option("--part", part,
                 "With --shard: the part file to write (default winokit-part-I-of-N.json)");
}

bool shard_active() {
  return state().mode == Mode::Shard;
}

void check_shard_model(const ShardFlags& flags, const std::string& model) {
  if (!flags.shard.empty() && model.empty())
    throw UsageError("--shard splits a model's work: give --model DIR",
                     "a run from a scores file is quick in one process");
}
bool replay_active() {
  return state().mode == Mode::Replay;
}
std::string shard_label() {
  const State& st = state();
  if (st.mode != Mode::Shard) return {};
  return "shard " + std::to_string(st.index) + "/" + std::to_string(st.count) + ": ";
}

std::unique_ptr<VlModel> wrap_model(std::unique_ptr<VlModel> model, const ShardFlags& flags,
                                    const std::string& command) {
  State& st = state();
  if (st.mode == Mode::Replay) {
    if (st.models_seen >= st.models.size())
      throw InputError({"merge", 0, "models"},
                       "the command opens more models than the parts "
                       "recorded");
    const json& recorded = st.models[st.models_seen++];
    if (comparable(model->describe()) != comparable(recorded)) {
      throw InputError({"merge", 0, "model"},
                       "the model " + model->name() +
                           " is not the one the shards ran (its description differs: weights, "
                           "config or options)",
                       "merge with the same checkpoint the shards used");
    }
    return std::make_unique<ShardModel>(std::move(model));
  }
  if (flags.shard.empty()) {
    if (!flags.part.empty()) throw UsageError("--part needs --shard I/N");
    return model;
  }
  begin_shard(flags, command);
  st.models.push_back(model->describe());
  return std::make_unique<ShardModel>(std::move(model));
}

bool begin_shard(const ShardFlags& flags, const std::string& command) {
  State& st = state();
  if (st.mode == Mode::Replay) return true;
  if (flags.shard.empty()) {
    if (!flags.part.empty()) throw UsageError("--part needs --shard I/N");
    return st.mode == Mode::Shard;
  }
  if (!shardable(command))
    throw UsageError("winokit " + command + " does not take --shard",
                     "--shard splits eval, run, winogavil, retrieval, variants, embed, "
                     "perplexity and probe");
  const auto [index, count] = parse_shard(flags.shard);
  if (st.mode == Mode::Shard && (index != st.index || count != st.count))
    throw Error("shard: two models with different shards");
  st.mode = Mode::Shard;
  st.index = index;
  st.count = count;
  st.part = flags.part.empty()
                ? "winokit-part-" + std::to_string(index) + "-of-" + std::to_string(count) + ".json"
                : flags.part;
  return true;
}

std::string shard_units(
    const std::string& kind, const std::string& signature, std::size_t n, std::size_t item_bytes,
    EmbedStats* stats,
    const std::function<std::string(std::size_t, std::size_t, EmbedStats*)>& compute) {
  return run_call(kind, signature, identity_units(n), n, item_bytes, std::string(item_bytes, '\0'),
                  stats, [&](const std::vector<std::size_t>& items, EmbedStats* s) {
                    return compute(items.front(), items.back() + 1, s);
                  });
}

void finish_shard() {
  State& st = state();
  if (st.mode != Mode::Shard) return;
  json calls = json::array();
  EmbedStats total;
  for (const Call& c : st.calls) {
    calls.push_back({{"kind", c.kind},
                     {"signature", c.signature},
                     {"items", c.items},
                     {"item_bytes", c.item_bytes},
                     {"units", c.units},
                     {"lo", c.lo},
                     {"hi", c.hi},
                     {"stats", stats_json(c.stats)},
                     {"data", hex_of(c.bytes)}});
    add_stats(total, c.stats);
  }
  char cwd[4096] = {};
  const std::string here = ::getcwd(cwd, sizeof cwd) ? cwd : "";
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - st.start).count();
  const std::vector<std::string> command = without_shard_flags(st.argv);
  const json part = {{"winokit_part", kPartFormat},
                     {"winokit", kVersion},
                     {"command", command},
                     {"shard", {{"index", st.index}, {"count", st.count}}},
                     {"inputs", input_hashes(command)},
                     {"models", st.models},
                     {"byte_order", "little-endian floats and doubles, as hex"},
                     {"host", host},
                     {"cwd", here},
                     {"wall_seconds", secs},
                     {"calls", calls}};
  write_file_atomic(st.part, part.dump() + "\n");
  std::cerr << "winokit: shard " << st.index << "/" << st.count << ": wrote " << st.part << " ("
            << st.calls.size() << " model calls; computed " << total.images_computed << " images, "
            << total.texts_computed << " captions, " << total.pairs_computed
            << " pairs; from the cache " << total.images_cached << " images, " << total.texts_cached
            << " captions, " << total.pairs_cached << " pairs)\n";
}

namespace {

struct MergeFlags {
  std::vector<std::string> parts;
  std::string out_dir;
};

std::string list_of(const std::set<int>& s) {
  std::string out;
  for (int i : s)
    out += (out.empty() ? "" : ", ") + std::to_string(i);
  return out;
}

// The output flags every command shares: with -o DIR, their paths are taken inside DIR.
bool is_output_flag(const std::string& flag) {
  for (const char* f : {"--json", "--csv", "--html", "--markdown", "--out", "--per-example",
                        "--scores-out", "--matrix-out"})
    if (flag == f) return true;
  return false;
}

std::vector<std::string> into_folder(const std::vector<std::string>& argv, const fs::path& dir) {
  std::vector<std::string> out;
  auto moved = [&](const std::string& p) {
    const fs::path path(p);
    return (path.is_absolute() ? dir / path.filename() : dir / path).string();
  };
  for (std::size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    const auto eq = a.find('=');
    if (eq != std::string::npos && is_output_flag(a.substr(0, eq))) {
      out.push_back(a.substr(0, eq + 1) + moved(a.substr(eq + 1)));
    } else if (is_output_flag(a) && i + 1 < argv.size()) {
      out.push_back(a);
      out.push_back(moved(argv[++i]));
    } else {
      out.push_back(a);
    }
  }
  return out;
}

int run_merge(const MergeFlags& f) {
  const auto start = std::chrono::steady_clock::now();
  struct Part {
    std::string file;
    json j;
  };
  std::vector<Part> parts;
  for (const auto& file : f.parts) {
    json j;
    try {
      j = json::parse(read_file(file));
    } catch (const json::exception& e) {
      throw InputError({file, 0, ""}, std::string("not a part file (") + e.what() + ")",
                       "give the files that `--shard I/N` wrote");
    }
    if (!j.is_object() || j.value("winokit_part", 0) != kPartFormat)
      throw InputError({file, 0, "winokit_part"},
                       "not a winokit part file (format " + std::to_string(kPartFormat) + ")");
    parts.push_back({file, std::move(j)});
  }
  if (parts.empty()) throw UsageError("merge needs at least one part file");
  const Part& first = parts.front();
  const int count = first.j.at("shard").at("count").get<int>();
  std::map<int, std::string> seen;
  for (const Part& p : parts) {
    auto differs = [&](const char* field, const std::string& what) {
      if (p.j.at(field) != first.j.at(field))
        throw InputError({p.file, 0, field},
                         what + " differs from " + first.file + "'s: the parts are not of one run",
                         "merge the parts of one command line, model and data");
    };
    differs("winokit", "the winokit version");
    differs("command", "the command line (without --shard and --part)");
    differs("inputs", "the data (the SHA-256 of an input file)");
    if (p.j.at("shard").at("count").get<int>() != count)
      throw InputError({p.file, 0, "shard"},
                       "is shard " + std::to_string(p.j["shard"]["index"].get<int>()) + " of " +
                           std::to_string(p.j["shard"]["count"].get<int>()) + ", " + first.file +
                           " is of " + std::to_string(count) + " shards");
    const json& models = p.j.at("models");
    if (models.size() != first.j.at("models").size())
      throw InputError({p.file, 0, "models"}, "opened another number of models than " + first.file);
    for (std::size_t m = 0; m < models.size(); ++m)
      if (comparable(models[m]) != comparable(first.j["models"][m]))
        throw InputError({p.file, 0, "models"},
                         "ran another model than " + first.file + " (weights, config or options)");
    const int index = p.j["shard"]["index"].get<int>();
    if (!seen.emplace(index, p.file).second)
      throw InputError({p.file, 0, "shard"},
                       "shard " + std::to_string(index) + " of " + std::to_string(count) +
                           " is given twice: " + seen[index] + " and " + p.file);
  }
  std::set<int> missing;
  for (int i = 0; i < count; ++i)
    if (!seen.count(i)) missing.insert(i);
  if (!missing.empty()) {
    std::set<int> given;
    for (const auto& [i, file] : seen)
      given.insert(i);
    throw UsageError(std::string(missing.size() == 1 ? "shard " : "shards ") + list_of(missing) +
                         " of " + std::to_string(count) + (missing.size() == 1 ? " is" : " are") +
                         " missing (given: " + list_of(given) + ")",
                     "merge needs every shard's part exactly once");
  }
  // The inputs must still be what the shards read.
  const std::vector<std::string> command = first.j.at("command").get<std::vector<std::string>>();
  const json now = input_hashes(command);
  for (const auto& [file, digest] : first.j.at("inputs").items()) {
    if (!now.contains(file))
      throw IoError(file + ": the shards read it, but it is not there now",
                    "run merge where the shards ran (the same relative paths)");
    if (now[file] != digest)
      throw InputError({file, 0, ""}, "changed since the shards ran (its SHA-256 differs)");
  }
  // The calls: the same in every part; each shard's slice where it belongs.
  std::vector<Part*> by_index(static_cast<std::size_t>(count));
  for (Part& p : parts)
    by_index[static_cast<std::size_t>(p.j["shard"]["index"].get<int>())] = &p;
  const json& calls0 = first.j.at("calls");
  std::vector<Call> calls(calls0.size());
  std::size_t images = 0, texts = 0, pairs = 0;
  for (std::size_t k = 0; k < calls.size(); ++k) {
    Call& c = calls[k];
    c.kind = calls0[k].at("kind").get<std::string>();
    c.signature = calls0[k].at("signature").get<std::string>();
    c.items = calls0[k].at("items").get<std::size_t>();
    c.item_bytes = calls0[k].at("item_bytes").get<std::size_t>();
    c.units = calls0[k].at("units").get<std::size_t>();
    for (int i = 0; i < count; ++i) {
      const Part& p = *by_index[static_cast<std::size_t>(i)];
      const json& calls_i = p.j.at("calls");
      if (calls_i.size() != calls.size())
        throw InputError({p.file, 0, "calls"},
                         "recorded " + std::to_string(calls_i.size()) + " model calls, " +
                             first.file + " " + std::to_string(calls.size()),
                         "the parts are not of one run");
      const json& ci = calls_i[k];
      if (ci.at("kind") != c.kind || ci.at("signature") != c.signature ||
          ci.at("items") != c.items || ci.at("item_bytes") != c.item_bytes ||
          ci.at("units") != c.units)
        throw InputError(
            {p.file, 0, "calls"},
            "model call " + std::to_string(k) + " had other inputs than in " + first.file,
            "the parts are not of one run");
      const auto [lo, hi] = slice(c.units, i, count);
      std::string bytes = bytes_of_hex(ci.at("data").get<std::string>(), p.file);
      if (ci.at("lo") != lo || ci.at("hi") != hi ||
          bytes.size() % std::max<std::size_t>(1, c.item_bytes) != 0)
        throw InputError({p.file, 0, "calls"},
                         "model call " + std::to_string(k) + " does not hold shard " +
                             std::to_string(i) + "'s slice",
                         "the part is damaged");
      c.shard_bytes.push_back(std::move(bytes));
      add_stats(c.stats, stats_of(ci.at("stats")));
    }
    (c.kind == "images" ? images : c.kind == "texts" ? texts : pairs) += c.items;
  }
  State& st = state();
  st.mode = Mode::Replay;
  st.index = 0;
  st.count = count;
  st.calls = std::move(calls);
  st.next = 0;
  st.models = first.j.at("models");
  st.models_seen = 0;
  std::vector<std::string> args = command;
  if (!f.out_dir.empty()) args = into_folder(args, f.out_dir);
  std::string shown;
  for (std::size_t i = 1; i < args.size(); ++i)
    shown += (i > 1 ? " " : "") + args[i];
  std::cerr << "winokit: merge: " << count << (count == 1 ? " part" : " parts") << " of `winokit "
            << shown << "`: " << st.calls.size() << " model calls (" << images << " images, "
            << texts << " captions, " << pairs << " pairs)\n";
  const int rc = run_winokit(args);
  const std::size_t used = st.next, recorded = st.calls.size();
  st.mode = Mode::Off;
  if (rc != 0) return rc;
  if (used != recorded)
    throw InputError({"merge", 0, "calls"},
                     "the command made " + std::to_string(used) + " model calls, the parts hold " +
                         std::to_string(recorded),
                     "the data or the command changed since the shards ran");
  char secs[32];
  std::snprintf(secs, sizeof secs, "%.2f",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  std::cerr << "winokit: merge: merged shards 0-" << count - 1 << " of " << count << " in " << secs
            << " s\n";
  return 0;
}

}  // namespace

void add_merge(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<MergeFlags>();
  CLI::App* cmd = app.add_subcommand(
      "merge", "Merge the part files of a sharded run (--shard I/N) into the command's outputs");
  cmd->add_option("parts", flags->parts, "Part files, one per shard 0..N-1")->required();
  cmd->add_option("-o,--out-dir", flags->out_dir,
                  "Write the outputs inside this folder (default: the paths of the command line, "
                  "from the current folder)");
  cmd->callback([flags, &exit_code] { exit_code = guarded([&] { return run_merge(*flags); }); });
}

}  // namespace winokit::cli
