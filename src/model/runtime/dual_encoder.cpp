#include "model/runtime/dual_encoder.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <thread>

#include "model/kernels/parallel.hpp"
#include "model/runtime/run_checks.hpp"
#include "winokit/core/error.hpp"
#include "winokit/core/hash.hpp"
#include "winokit/io/files.hpp"
#include "winokit/io/safetensors.hpp"
#include "winokit/model/embedding_cache.hpp"

namespace winokit::detail {

namespace fs = std::filesystem;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void check_working_memory(double bytes, int batch) {
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

void check_finite(const float* values, std::size_t n, const std::string& source,
                  const std::string& what) {
  for (std::size_t k = 0; k < n; ++k) {
    if (!std::isfinite(values[k])) {
      throw InputError({source, 0, ""},
                       "the model's embedding of " + what + " is not finite (NaN or infinity)",
                       "the checkpoint's weights or configuration are broken");
    }
  }
}

fs::path DualRunOptions::cache_root() const {
  return cache_dir.empty() ? default_cache_dir() : cache_dir;
}

fs::path DualRunOptions::hash_index() const {
  return cache_root() / "file-hashes";
}

namespace {

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

bool wants_states(const EncodeOptions& encode) {
  return encode.hidden_states || encode.token_states || encode.pooled_states;
}

// The image's SHA-256: remembered for plain files, else from its bytes.
std::string image_digest(const ImageRequest& request, const fs::path& index_dir) {
  if (request.file) {
    if (auto file = request.file()) return remembered_sha256_file(*file, index_dir);
  }
  return sha256_hex(request.read().bytes);
}

void add_cache_stats(EmbedStats& stats, const EmbeddingCache& cache) {
  stats.cache_corrupt += cache.corrupt();
  if (!cache.warning().empty()) stats.cache_warning = cache.warning();
}

}  // namespace

std::vector<float> run_image_embeddings(const DualTowers& towers, const DualRunOptions& options,
                                        const std::vector<ImageRequest>& requests,
                                        EmbedStats* stats, const EncodeOptions& encode,
                                        TowerOutput* full) {
  const auto start = std::chrono::steady_clock::now();
  towers.check_image_settings();
  const std::size_t dim = static_cast<std::size_t>(towers.embed_dim());
  const std::string pp_json = towers.preprocess_json();
  // Caching is for plain embeddings; hidden or token states are always computed.
  const bool cacheable = options.use_cache && !wants_states(encode);
  EmbeddingCache cache(options.cache_root(), towers.cache_signature());
  const fs::path hash_index = options.hash_index();
  std::vector<float> out(requests.size() * dim);
  std::vector<std::size_t> misses;
  std::vector<std::string> keys(requests.size());
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (cacheable) {
      // Only the key is kept: the bytes are read again when decoded, so memory stays flat.
      keys[i] = cache.image_key_from_digest(image_digest(requests[i], hash_index), pp_json);
      if (auto hit = cache.get(keys[i], dim)) {
        std::copy(hit->begin(), hit->end(), out.begin() + static_cast<std::ptrdiff_t>(i * dim));
        continue;
      }
    }
    misses.push_back(i);
  }
  const std::size_t batch = static_cast<std::size_t>(std::max(1, options.batch_size));
  const std::size_t image_floats = towers.image_floats();
  if (!misses.empty()) {
    check_working_memory(towers.image_batch_bytes(static_cast<int>(batch)),
                         static_cast<int>(batch));
  }
  if (full != nullptr) {
    *full = TowerOutput{};
    full->count = static_cast<int>(misses.size());
  }
  // Decoding and preprocessing run on the same OpenMP pool as the model (no second pool to
  // oversubscribe the cores): each batch's images are decoded in parallel, then encoded.
  // Reading the next batch's bytes (I/O: files or the zip) overlaps with the model on a helper
  // thread, which uses no compute.
  std::vector<std::size_t> batch_sizes;
  std::vector<ImageBytes> next_bytes;
  auto read_batch = [&](std::size_t b) {
    std::vector<ImageBytes> bytes;
    const std::size_t end = std::min(misses.size(), b + batch);
    for (std::size_t s = b; s < end; ++s)
      bytes.push_back(requests[misses[s]].read());
    return bytes;
  };
  std::size_t done = 0;
  if (!misses.empty()) next_bytes = read_batch(0);
  for (std::size_t b = 0; b < misses.size(); b += batch) {
    std::vector<ImageBytes> bytes = std::move(next_bytes);
    next_bytes.clear();
    std::exception_ptr read_failure;
    std::thread reader;
    if (b + batch < misses.size()) {
      reader = std::thread([&, following = b + batch] {
        try {
          next_bytes = read_batch(following);
        } catch (...) {
          read_failure = std::current_exception();
        }
      });
    }
    auto join = [&] {
      if (reader.joinable()) reader.join();
    };
    const int n = static_cast<int>(bytes.size());
    std::vector<float> pixels(static_cast<std::size_t>(n) * image_floats);
    const std::exception_ptr failure = for_each_item(n, true, [&](int j) {
      const std::vector<float> px =
          towers.preprocess(decode_image(bytes[static_cast<std::size_t>(j)]));
      std::copy(px.begin(), px.end(),
                pixels.begin() + static_cast<std::ptrdiff_t>(j * image_floats));
    });
    bytes.clear();
    if (failure || read_failure) {
      join();
      std::rethrow_exception(failure ? failure : read_failure);
    }
    TowerOutput t;
    try {
      t = towers.encode_images(pixels.data(), n, encode);
    } catch (...) {
      join();
      throw;
    }
    join();
    if (read_failure) std::rethrow_exception(read_failure);
    for (int j = 0; j < n; ++j) {
      const std::size_t i = misses[b + static_cast<std::size_t>(j)];
      check_finite(&t.embeds[static_cast<std::size_t>(j) * dim], dim, towers.source(),
                   "image " + requests[i].name);
    }
    for (int j = 0; j < n; ++j) {
      const std::size_t i = misses[b + static_cast<std::size_t>(j)];
      const auto first = t.embeds.begin() + static_cast<std::ptrdiff_t>(j * dim);
      std::copy(first, first + static_cast<std::ptrdiff_t>(dim),
                out.begin() + static_cast<std::ptrdiff_t>(i * dim));
      if (cacheable)
        cache.put(keys[i], std::vector<float>(first, first + static_cast<std::ptrdiff_t>(dim)));
    }
    if (full != nullptr) {
      append_states(*full, t);  // per-layer states are [levels, n, width] per batch: merged below
      batch_sizes.push_back(static_cast<std::size_t>(n));
    }
    done += static_cast<std::size_t>(n);
    if (options.on_progress) options.on_progress("images", done, misses.size());
  }
  if (full != nullptr)
    merge_all_batches(*full, batch_sizes, towers.image_levels(), towers.image_width());
  if (stats != nullptr) {
    stats->images_computed += misses.size();
    stats->images_cached += requests.size() - misses.size();
    stats->image_seconds += seconds_since(start);
    add_cache_stats(*stats, cache);
  }
  return out;
}

std::vector<float> run_text_embeddings(const DualTowers& towers, const DualRunOptions& options,
                                       const std::vector<std::string>& captions, EmbedStats* stats,
                                       const EncodeOptions& encode, TowerOutput* full) {
  const auto start = std::chrono::steady_clock::now();
  const std::size_t dim = static_cast<std::size_t>(towers.embed_dim());
  const bool cacheable = options.use_cache && !wants_states(encode);
  EmbeddingCache cache(options.cache_root(), towers.cache_signature());
  std::vector<float> out(captions.size() * dim);
  std::vector<std::size_t> misses;
  std::vector<TextTokens> tokens(captions.size());
  for (std::size_t i = 0; i < captions.size(); ++i) {
    if (cacheable) {
      if (auto hit = cache.get(cache.text_key(captions[i]), dim)) {
        std::copy(hit->begin(), hit->end(), out.begin() + static_cast<std::ptrdiff_t>(i * dim));
        continue;
      }
    }
    tokens[i] = towers.tokenize(captions[i]);
    misses.push_back(i);
  }
  const TextBatching batching = towers.text_batching(std::max(1, options.batch_size));
  // Shortest first: batches of similar length waste no positions. Results do not depend on the
  // batch composition; states over the whole request keep the request's order.
  std::vector<std::size_t> order = misses;
  if (batching.shortest_first && full == nullptr) {
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return tokens[a].ids.size() < tokens[b].ids.size();
    });
  }
  if (full != nullptr) *full = TowerOutput{};
  std::vector<std::size_t> batch_sizes;
  std::size_t b = 0;
  while (b < order.size()) {
    std::size_t end = b;
    std::size_t longest = 0;
    while (end < order.size()) {
      const std::size_t len = std::max(longest, tokens[order[end]].ids.size());
      const std::size_t items = end - b + 1;
      if (end > b && (items * len > batching.max_rows || items > batching.max_items)) break;
      longest = len;
      ++end;
    }
    std::vector<TextTokens> chunk;
    for (std::size_t k = b; k < end; ++k)
      chunk.push_back(std::move(tokens[order[k]]));
    const TowerOutput t = towers.encode_texts(chunk, encode);
    for (std::size_t k = b; k < end; ++k) {
      check_finite(&t.embeds[(k - b) * dim], dim, towers.source(),
                   "caption \"" + captions[order[k]] + "\"");
    }
    for (std::size_t k = b; k < end; ++k) {
      const std::size_t i = order[k];
      const auto first = t.embeds.begin() + static_cast<std::ptrdiff_t>((k - b) * dim);
      std::copy(first, first + static_cast<std::ptrdiff_t>(dim),
                out.begin() + static_cast<std::ptrdiff_t>(i * dim));
      if (cacheable) {
        cache.put(cache.text_key(captions[i]),
                  std::vector<float>(first, first + static_cast<std::ptrdiff_t>(dim)));
      }
    }
    if (full != nullptr) {
      full->count += t.count;
      append_states(*full, t);  // per-layer states are [levels, n, width] per batch: merged below
      batch_sizes.push_back(chunk.size());
    }
    if (options.on_progress) options.on_progress("captions", end, order.size());
    b = end;
  }
  if (full != nullptr)
    merge_all_batches(*full, batch_sizes, towers.text_levels(), towers.text_width());
  if (stats != nullptr) {
    stats->texts_computed += misses.size();
    stats->texts_cached += captions.size() - misses.size();
    stats->text_seconds += seconds_since(start);
    add_cache_stats(*stats, cache);
  }
  return out;
}

}  // namespace winokit::detail
