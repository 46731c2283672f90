#include "model/runtime/embedding_runtime.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <thread>

#include "model/kernels/parallel.hpp"
#include "winokit/core/error.hpp"
#include "winokit/core/hash.hpp"
#include "winokit/io/files.hpp"
#include "winokit/io/image_decode.hpp"
#include "winokit/io/safetensors.hpp"
#include "winokit/model/compute.hpp"
#include "winokit/model/preprocess.hpp"

namespace winokit {

namespace fs = std::filesystem;

namespace {

// The SHA-256s of weight and image files, remembered in the cache folder (remembered_sha256_file).
constexpr const char* kFileHashIndex = "file-hashes";

fs::path cache_root(const ClipRunOptions& options) {
  return options.cache_dir.empty() ? default_cache_dir() : options.cache_dir;
}

}  // namespace

ClipRuntime ClipRuntime::load(const fs::path& dir, ClipRunOptions options) {
  ClipRuntime rt;
  // The weights' hash (the cache key) is remembered in the cache folder, so that a run whose
  // embeddings are all cached reads neither the weights nor their hash.
  rt.model = std::make_shared<ClipModel>(
      ClipModel::load(dir, options.use_cache ? cache_root(options) / kFileHashIndex : fs::path{}));
  fs::path tok = options.tokenizer.value_or(dir);
  if (!options.tokenizer && fs::is_regular_file(dir)) {
    // OpenAI's .pt files hold no tokenizer: openai/CLIP ships it as a separate file.
    tok = dir.parent_path() / "bpe_simple_vocab_16e6.txt.gz";
    if (!fs::is_regular_file(tok)) {
      throw UsageError(dir.string() + " holds no tokenizer, and there is no " + tok.string(),
                       "pass --tokenizer bpe_simple_vocab_16e6.txt.gz (openai/CLIP's "
                       "clip/bpe_simple_vocab_16e6.txt.gz) or a folder with vocab.json + "
                       "merges.txt, or put that file beside the .pt");
    }
  }
  if (fs::is_directory(tok)) {
    rt.tokenizer = std::make_shared<ClipTokenizer>(ClipTokenizer::from_directory(tok));
  } else if (tok.extension() == ".gz") {
    rt.tokenizer = std::make_shared<ClipTokenizer>(ClipTokenizer::from_openai(tok));
  } else {
    throw UsageError("--tokenizer: expected a folder or bpe_simple_vocab_16e6.txt.gz, got " +
                     tok.string());
  }
  rt.options = std::move(options);
  rt.source = dir.string();
  return rt;
}

ClipRuntime ClipRuntime::random(const ClipConfig& config, std::uint64_t seed,
                                std::shared_ptr<ClipTokenizer> tokenizer, ClipRunOptions options) {
  ClipRuntime rt;
  rt.model = std::make_shared<ClipModel>(ClipModel::random(config, seed));
  rt.tokenizer = std::move(tokenizer);
  rt.options = std::move(options);
  rt.source = "random weights (seed " + std::to_string(seed) + ")";
  return rt;
}

PreprocessConfig ClipRuntime::preprocess() const {
  PreprocessConfig p = model->config().preprocess;
  if (options.pipeline) p.pipeline = *options.pipeline;
  return p;
}

nlohmann::json ClipRuntime::describe() const {
  const ClipConfig& c = model->config();
  return {{"kind", "clip"},
          {"model", source},
          {"weights_sha256", model->weights_id()},
          {"layout", to_string(c.layout)},
          {"vision",
           {{"width", c.vision.width},
            {"layers", c.vision.layers},
            {"heads", c.vision.heads},
            {"patch", c.patch},
            {"image_size", c.image_size}}},
          {"text", {{"width", c.text.width}, {"layers", c.text.layers}, {"heads", c.text.heads}}},
          {"embed_dim", c.embed_dim},
          {"activation", c.vision.act == Activation::QuickGelu ? "quick_gelu" : "gelu"},
          {"preprocess", preprocess().to_json()},
          {"precision", "float32"},
          {"compute", compute_record()},
          {"threads", compute_threads()},
          {"batch_size", options.batch_size}};
}

ImageRequest image_file_request(const std::string& path, std::string name) {
  if (name.empty()) name = path;
  return {name,
          [path, name] {
            ImageBytes b;
            b.name = name;
            b.source = path;
            b.bytes = read_file(path);
            b.format = sniff_image_format(b.bytes);
            return b;
          },
          [path]() -> std::optional<fs::path> { return fs::path(path); }};
}

double clip_score(const float* text, const float* image, int dim, double logit_scale_exp) {
  double tt = 0, ii = 0, ti = 0;
  for (int k = 0; k < dim; ++k) {
    tt += static_cast<double>(text[k]) * text[k];
    ii += static_cast<double>(image[k]) * image[k];
    ti += static_cast<double>(text[k]) * image[k];
  }
  return logit_scale_exp * ti / (std::sqrt(tt) * std::sqrt(ii));
}

namespace {

// Refuses a batch whose working memory would not fit, before allocating any of it.
void check_batch_memory(const ClipConfig& cfg, int batch) {
  const double rows = static_cast<double>(batch) * cfg.vision_tokens();
  const double w = cfg.vision.width, heads = cfg.vision.heads;
  // Activations: x, normed, qkv, attention output, MLP hidden, attention probabilities, im2col,
  // pixels; float32.
  const double bytes = 4.0 * (rows * (w * 6 + cfg.vision.mlp) +
                              batch * heads * cfg.vision_tokens() * cfg.vision_tokens() +
                              2.0 * batch * 3.0 * cfg.image_size * cfg.image_size);
  const double physical = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) *
                          static_cast<double>(::sysconf(_SC_PAGE_SIZE));
  constexpr double kShare = 0.75;  // leave room for the weights and the rest of the system
  if (physical > 0 && bytes > kShare * physical) {
    char msg[256];
    std::snprintf(msg, sizeof msg,
                  "--batch-size %d needs about %.1f GB of working memory; this machine has %.1f GB",
                  batch, bytes / 1e9, physical / 1e9);
    throw UsageError(msg, "lower --batch-size");
  }
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// A model whose outputs are NaN or infinite (NaN weights, a broken checkpoint) must not yield a
// results file of nulls: the first offending input is named.
void check_finite(const ClipRuntime& rt, const float* values, std::size_t dim,
                  const std::string& what) {
  for (std::size_t k = 0; k < dim; ++k) {
    if (!std::isfinite(values[k])) {
      throw InputError({rt.source, 0, ""},
                       "the model's embedding of " + what + " is not finite (NaN or infinity)",
                       "the checkpoint's weights or configuration are broken");
    }
  }
}

// Per-layer states arrive per batch as [levels, n_b, width] blocks, one after the other; this
// re-orders them into [levels, count, width] (count = the sum of the batch sizes).
void merge_batches(std::vector<float>& states, const std::vector<std::size_t>& batch_sizes,
                   int levels, int width) {
  if (states.empty() || batch_sizes.size() < 2) return;
  std::size_t count = 0;
  for (std::size_t nb : batch_sizes)
    count += nb;
  const std::size_t w = static_cast<std::size_t>(width);
  std::vector<float> merged(states.size());
  std::size_t offset = 0, first = 0;
  for (std::size_t nb : batch_sizes) {
    for (int l = 0; l < levels; ++l) {
      std::memcpy(&merged[(static_cast<std::size_t>(l) * count + first) * w],
                  &states[offset + static_cast<std::size_t>(l) * nb * w], sizeof(float) * nb * w);
    }
    offset += static_cast<std::size_t>(levels) * nb * w;
    first += nb;
  }
  states.swap(merged);
}

// Appends a batch's states to the whole request's (merged by merge_batches at the end).
void append_states(TowerOutput& full, const TowerOutput& t) {
  full.embeds.insert(full.embeds.end(), t.embeds.begin(), t.embeds.end());
  full.tokens.insert(full.tokens.end(), t.tokens.begin(), t.tokens.end());
  full.token_count = t.token_count;
  full.hidden.insert(full.hidden.end(), t.hidden.begin(), t.hidden.end());
  full.hidden_mean.insert(full.hidden_mean.end(), t.hidden_mean.begin(), t.hidden_mean.end());
  full.hidden_max.insert(full.hidden_max.end(), t.hidden_max.begin(), t.hidden_max.end());
}

void merge_all_batches(TowerOutput& full, const std::vector<std::size_t>& batch_sizes, int levels,
                       int width) {
  full.levels = levels;
  full.width = width;
  merge_batches(full.hidden, batch_sizes, levels, width);
  merge_batches(full.hidden_mean, batch_sizes, levels, width);
  merge_batches(full.hidden_max, batch_sizes, levels, width);
}

EmbeddingCache make_cache(const ClipRuntime& rt) {
  // Keyed by the weights and by what computes them (a new kernel version may round
  // differently: never mix its embeddings with an older version's).
  return EmbeddingCache(cache_root(rt.options),
                        rt.model->weights_id() + "\n" + rt.model->compute_signature());
}

// The image's SHA-256: remembered for plain files, else from its bytes.
std::string image_digest(const ImageRequest& request, const fs::path& index_dir) {
  if (request.file) {
    if (auto file = request.file()) return remembered_sha256_file(*file, index_dir);
  }
  return sha256_hex(request.read().bytes);
}

}  // namespace

std::vector<float> embed_images(const ClipRuntime& rt, const std::vector<ImageRequest>& requests,
                                EmbedStats* stats, const EncodeOptions& encode, TowerOutput* full) {
  const auto start = std::chrono::steady_clock::now();
  const ClipConfig& cfg = rt.model->config();
  const int dim = cfg.embed_dim;
  const PreprocessConfig pp = rt.preprocess();
  const std::string pp_json = pp.to_json().dump();
  // Caching is for plain embeddings; hidden or token states are always computed.
  const bool cacheable = rt.options.use_cache && !encode.hidden_states && !encode.token_states &&
                         !encode.pooled_states;
  EmbeddingCache cache = make_cache(rt);
  const fs::path hash_index = cache_root(rt.options) / kFileHashIndex;
  std::vector<float> out(requests.size() * static_cast<std::size_t>(dim));
  std::vector<std::size_t> misses;
  std::vector<std::string> keys(requests.size());
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (cacheable) {
      // Only the key is kept: the bytes are read again when decoded, so memory stays flat.
      keys[i] = cache.image_key_from_digest(image_digest(requests[i], hash_index), pp_json);
      if (auto hit = cache.get(keys[i], static_cast<std::size_t>(dim))) {
        std::copy(hit->begin(), hit->end(), out.begin() + static_cast<std::ptrdiff_t>(i * dim));
        continue;
      }
    }
    misses.push_back(i);
  }
  const int batch = std::max(1, rt.options.batch_size);
  const std::size_t side = static_cast<std::size_t>(cfg.image_size);
  const std::size_t image_floats = 3 * side * side;
  check_batch_memory(cfg, batch);
  if (pp.crop != cfg.image_size) {
    throw UsageError("the preprocessing crop (" + std::to_string(pp.crop) +
                     ") differs from the model's image size (" + std::to_string(cfg.image_size) +
                     ")");
  }
  if (full != nullptr) {
    *full = TowerOutput{};
    full->count = static_cast<int>(misses.size());
  }
  // Decoding and preprocessing run on the same OpenMP pool as the model (no second pool to
  // oversubscribe the cores): each batch's images are decoded in parallel, then encoded.
  // Reading the next batch's bytes (I/O: files or the zip) overlaps with the model on a helper
  // thread, which uses no compute.
  std::vector<std::string> errors(misses.size());
  std::vector<std::size_t> batch_sizes;
  std::vector<ImageBytes> next_bytes;
  auto read_batch = [&](std::size_t b) {
    std::vector<ImageBytes> bytes;
    const std::size_t end = std::min(misses.size(), b + static_cast<std::size_t>(batch));
    for (std::size_t s = b; s < end; ++s)
      bytes.push_back(requests[misses[s]].read());
    return bytes;
  };
  std::size_t done = 0;
  if (!misses.empty()) next_bytes = read_batch(0);
  for (std::size_t b = 0; b < misses.size(); b += static_cast<std::size_t>(batch)) {
    std::vector<ImageBytes> bytes = std::move(next_bytes);
    std::exception_ptr read_failure;
    std::thread reader;
    const std::size_t following = b + static_cast<std::size_t>(batch);
    if (following < misses.size()) {
      reader = std::thread([&] {
        try {
          next_bytes = read_batch(following);
        } catch (...) {
          read_failure = std::current_exception();
        }
      });
    }
    const int n = static_cast<int>(bytes.size());
    std::vector<float> pixels(static_cast<std::size_t>(n) * image_floats);
    const std::exception_ptr failure = detail::for_each_item(n, true, [&](int j) {
      std::vector<float> px = preprocess(decode_image(bytes[static_cast<std::size_t>(j)]), pp);
      std::copy(px.begin(), px.end(),
                pixels.begin() + static_cast<std::ptrdiff_t>(j * image_floats));
    });
    bytes.clear();
    if (failure || read_failure) {
      if (reader.joinable()) reader.join();
      std::rethrow_exception(failure ? failure : read_failure);
    }
    TowerOutput t;
    try {
      t = rt.model->encode_images(pixels.data(), n, encode);
    } catch (...) {
      if (reader.joinable()) reader.join();
      throw;
    }
    if (reader.joinable()) reader.join();
    if (read_failure) std::rethrow_exception(read_failure);
    for (int j = 0; j < n; ++j) {
      const std::size_t i = misses[b + static_cast<std::size_t>(j)];
      check_finite(rt, &t.embeds[static_cast<std::size_t>(j) * dim], static_cast<std::size_t>(dim),
                   "image " + requests[i].name);
    }
    for (int j = 0; j < n; ++j) {
      const std::size_t i = misses[b + static_cast<std::size_t>(j)];
      std::copy(t.embeds.begin() + j * dim, t.embeds.begin() + (j + 1) * dim,
                out.begin() + static_cast<std::ptrdiff_t>(i * dim));
      if (cacheable) {
        cache.put(keys[i],
                  std::vector<float>(t.embeds.begin() + j * dim, t.embeds.begin() + (j + 1) * dim));
      }
    }
    if (full != nullptr) {
      append_states(*full, t);  // per-layer states are [levels, n, width] per batch: merged below
      batch_sizes.push_back(static_cast<std::size_t>(n));
    }
    done += static_cast<std::size_t>(n);
    if (rt.options.on_progress) rt.options.on_progress("images", done, misses.size());
  }
  if (full != nullptr)
    merge_all_batches(*full, batch_sizes, cfg.vision.layers + 1, cfg.vision.width);
  if (stats != nullptr) {
    stats->images_computed += misses.size();
    stats->images_cached += requests.size() - misses.size();
    stats->cache_corrupt += cache.corrupt();
    stats->image_seconds += seconds_since(start);
    if (!cache.warning().empty()) stats->cache_warning = cache.warning();
  }
  return out;
}

std::vector<float> embed_texts(const ClipRuntime& rt, const std::vector<std::string>& captions,
                               EmbedStats* stats, const EncodeOptions& encode, TowerOutput* full) {
  const auto start = std::chrono::steady_clock::now();
  const ClipConfig& cfg = rt.model->config();
  const int dim = cfg.embed_dim;
  const bool cacheable = rt.options.use_cache && !encode.hidden_states && !encode.token_states &&
                         !encode.pooled_states;
  EmbeddingCache cache = make_cache(rt);
  std::vector<float> out(captions.size() * static_cast<std::size_t>(dim));
  std::vector<std::size_t> misses;
  std::vector<std::vector<int>> ids(captions.size());
  for (std::size_t i = 0; i < captions.size(); ++i) {
    if (cacheable) {
      if (auto hit = cache.get(cache.text_key(captions[i]), static_cast<std::size_t>(dim))) {
        std::copy(hit->begin(), hit->end(), out.begin() + static_cast<std::ptrdiff_t>(i * dim));
        continue;
      }
    }
    ids[i] = rt.tokenizer->encode(captions[i], cfg.context_length);
    misses.push_back(i);
  }
  // Shortest first: batches of similar length waste no positions. Results do not depend on
  // the batch composition.
  std::vector<std::size_t> order = misses;
  if (full == nullptr) {
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return ids[a].size() < ids[b].size(); });
  }
  // Batches fill a budget of token rows (shortest captions first, so little padding).
  constexpr int kTextRows = 2048;
  if (full != nullptr) *full = TowerOutput{};
  std::vector<std::size_t> batch_sizes;
  std::size_t b = 0;
  while (b < order.size()) {
    std::size_t end = b;
    std::size_t longest = 0;
    while (end < order.size()) {
      const std::size_t len = std::max(longest, ids[order[end]].size());
      if (end > b && (end - b + 1) * len > static_cast<std::size_t>(kTextRows)) break;
      longest = len;
      ++end;
    }
    std::vector<std::vector<int>> chunk;
    for (std::size_t k = b; k < end; ++k)
      chunk.push_back(ids[order[k]]);
    TowerOutput t = rt.model->encode_texts(chunk, encode);
    for (std::size_t k = b; k < end; ++k) {
      check_finite(rt, &t.embeds[(k - b) * static_cast<std::size_t>(dim)],
                   static_cast<std::size_t>(dim), "caption \"" + captions[order[k]] + "\"");
    }
    for (std::size_t k = b; k < end; ++k) {
      const std::size_t i = order[k];
      const auto first = t.embeds.begin() + static_cast<std::ptrdiff_t>((k - b) * dim);
      std::copy(first, first + dim, out.begin() + static_cast<std::ptrdiff_t>(i * dim));
      if (cacheable) cache.put(cache.text_key(captions[i]), std::vector<float>(first, first + dim));
    }
    if (full != nullptr) {
      full->count += t.count;
      append_states(*full, t);  // per-layer states are [levels, n, width] per batch: merged below
      batch_sizes.push_back(chunk.size());
    }
    if (rt.options.on_progress) rt.options.on_progress("captions", end, order.size());
    b = end;
  }
  if (full != nullptr) merge_all_batches(*full, batch_sizes, cfg.text.layers + 1, cfg.text.width);
  if (stats != nullptr) {
    stats->texts_computed += misses.size();
    stats->texts_cached += captions.size() - misses.size();
    stats->cache_corrupt += cache.corrupt();
    stats->text_seconds += seconds_since(start);
    if (!cache.warning().empty()) stats->cache_warning = cache.warning();
  }
  return out;
}

}  // namespace winokit
