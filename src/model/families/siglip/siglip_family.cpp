// SigLIP behind the one model interface (vl_model.hpp): a dual encoder whose embeddings go
// through the embedding cache (keyed by the weights, the kernels, the tokenizer and the
// preprocessing), with batching, read-ahead of the next batch's images and progress, as CLIP's
// runtime (embedding_runtime.cpp).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <thread>

#include "model/families/siglip/siglip_model.hpp"
#include "model/kernels/parallel.hpp"
#include "winokit/core/error.hpp"
#include "winokit/core/hash.hpp"
#include "winokit/io/image_decode.hpp"
#include "winokit/io/safetensors.hpp"
#include "winokit/model/compute.hpp"
#include "winokit/model/embedding_cache.hpp"

namespace winokit {

namespace fs = std::filesystem;

namespace {

// The SHA-256s of weight and image files, remembered in the cache folder (as CLIP's runtime).
constexpr const char* kFileHashIndex = "file-hashes";
constexpr const char* kScoreFormula =
    "exp(logit_scale) * cos(text, image) + logit_bias (a logit; P(match) = sigmoid(score))";

// Refuses a batch whose working memory would not fit, before allocating any of it (as CLIP's
// runtime does).
void check_batch_memory(const SiglipConfig& cfg, int batch) {
  const double tokens = cfg.patches();
  const double rows = static_cast<double>(batch) * tokens;
  const double w = cfg.vision.hidden;
  // Activations: x, normed, qkv, context, the MLP's hidden, the post-LN copy and the head's
  // keys and values; im2col patches and pixels; float32.
  const double bytes =
      4.0 * (rows * (w * 9 + cfg.vision.mlp) + rows * cfg.channels * cfg.patch * cfg.patch +
             static_cast<double>(batch) * 3.0 * cfg.image_size * cfg.image_size);
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

class SiglipVlModel final : public VlModel, public DualEncoder {
 public:
  SiglipVlModel(const fs::path& checkpoint, const ModelOptions& options)
      : checkpoint_(checkpoint),
        options_(options),
        model_(SiglipModel::load(checkpoint,
                                 options.use_cache ? cache_root() / kFileHashIndex : fs::path{})),
        tokenizer_(SiglipTokenizer::from_directory(checkpoint)) {
    if (tokenizer_.max_length() != model_.config().max_positions) {
      throw InputError({(checkpoint / "tokenizer_config.json").string(), 0, "model_max_length"},
                       "pads to " + std::to_string(tokenizer_.max_length()) +
                           " ids, but the text tower pools position " +
                           std::to_string(model_.config().max_positions - 1) +
                           " (max_position_embeddings " +
                           std::to_string(model_.config().max_positions) + ")");
    }
    pp_json_ = model_.config().preprocess.to_json().dump();
  }

  // ---- VlModel ----
  std::string family() const override { return "siglip"; }
  std::string name() const override { return checkpoint_name(checkpoint_); }
  std::vector<Ability> abilities() const override {
    return {Ability::PairScores, Ability::Embeddings};
  }
  std::string score_name() const override { return "exp(logit_scale) * cos + logit_bias"; }
  nlohmann::json describe() const override {
    const SiglipConfig& c = model_.config();
    return {{"kind", "siglip"},
            {"family", "siglip"},
            {"model", checkpoint_.string()},
            {"weights_sha256", model_.weights_id()},
            {"config", c.to_json()},
            {"tokenizer", tokenizer_.to_json()},
            {"preprocess", c.preprocess.to_json()},
            {"score", kScoreFormula},
            {"logit_scale", model_.logit_scale()},
            {"logit_bias", model_.logit_bias()},
            {"embeddings", "pooled features before normalisation (get_image/text_features)"},
            {"precision", "float32"},
            {"compute", compute_record()},
            {"threads", compute_threads()},
            {"batch_size", options_.batch_size}};
  }
  std::vector<double> score_pairs(const std::vector<ImageRequest>& images,
                                  const std::vector<std::string>& captions,
                                  const std::vector<PairIndex>& pairs,
                                  EmbedStats* stats) const override {
    return dual_encoder_pair_scores(*this, images, captions, pairs, stats);
  }
  const DualEncoder* dual_encoder() const override { return this; }
  std::unique_ptr<PreparedImages> prepare_images(
      const std::vector<ImageRequest>& images) const override {
    return prepare_embedded_images(*this, images);
  }

  // ---- DualEncoder ----
  int embed_dim() const override { return model_.config().embed_dim(); }
  double score(const float* text, const float* image) const override {
    return model_.score(text, image);
  }
  std::vector<float> embed_images(const std::vector<ImageRequest>& images, EmbedStats* stats,
                                  const EncodeOptions& encode, TowerOutput* full) const override;
  std::vector<float> embed_texts(const std::vector<std::string>& texts, EmbedStats* stats,
                                 const EncodeOptions& encode, TowerOutput* full) const override;

 private:
  fs::path cache_root() const {
    return options_.cache_dir.empty() ? default_cache_dir() : options_.cache_dir;
  }
  // Keyed by the weights and by what computes the embeddings: the kernels' version and the
  // tokenizer (its spiece.model and settings, the mask among them). The preprocessing is in
  // every image key.
  EmbeddingCache make_cache() const {
    return EmbeddingCache(cache_root(), model_.weights_id() + "\n" + model_.compute_signature() +
                                            "\nsiglip\n" + tokenizer_.to_json().dump());
  }
  // SigLIP has no Ability::States: per-layer or per-token states are refused.
  static void refuse_states(const EncodeOptions& encode, const TowerOutput* full) {
    if (encode.hidden_states || encode.token_states || encode.pooled_states || full != nullptr) {
      throw UsageError("SigLIP does not expose its towers' states (no probes or maps for it)");
    }
  }
  void check_finite(const float* v, const std::string& what) const {
    for (int k = 0; k < embed_dim(); ++k) {
      if (!std::isfinite(v[k])) {
        throw InputError({checkpoint_.string(), 0, ""},
                         "the model's embedding of " + what + " is not finite (NaN or infinity)",
                         "the checkpoint's weights or configuration are broken");
      }
    }
  }

  fs::path checkpoint_;
  ModelOptions options_;
  SiglipModel model_;
  SiglipTokenizer tokenizer_;
  std::string pp_json_;
};

std::vector<float> SiglipVlModel::embed_images(const std::vector<ImageRequest>& requests,
                                               EmbedStats* stats, const EncodeOptions& encode,
                                               TowerOutput* full) const {
  refuse_states(encode, full);
  const auto start = std::chrono::steady_clock::now();
  const SiglipConfig& cfg = model_.config();
  const std::size_t dim = static_cast<std::size_t>(embed_dim());
  const bool cacheable = options_.use_cache;
  EmbeddingCache cache = make_cache();
  const fs::path hash_index = cache_root() / kFileHashIndex;
  std::vector<float> out(requests.size() * dim);
  std::vector<std::size_t> misses;
  std::vector<std::string> keys(requests.size());
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (cacheable) {
      std::string digest;
      if (requests[i].file) {
        if (auto file = requests[i].file()) digest = remembered_sha256_file(*file, hash_index);
      }
      if (digest.empty()) digest = sha256_hex(requests[i].read().bytes);
      keys[i] = cache.image_key_from_digest(digest, pp_json_);
      if (auto hit = cache.get(keys[i], dim)) {
        std::copy(hit->begin(), hit->end(), out.begin() + static_cast<std::ptrdiff_t>(i * dim));
        continue;
      }
    }
    misses.push_back(i);
  }
  const std::size_t batch = static_cast<std::size_t>(std::max(1, options_.batch_size));
  if (!misses.empty()) check_batch_memory(cfg, static_cast<int>(batch));
  const std::size_t image_floats =
      3 * static_cast<std::size_t>(cfg.image_size) * static_cast<std::size_t>(cfg.image_size);
  auto read_batch = [&](std::size_t b) {
    std::vector<ImageBytes> bytes;
    const std::size_t end = std::min(misses.size(), b + batch);
    for (std::size_t s = b; s < end; ++s)
      bytes.push_back(requests[misses[s]].read());
    return bytes;
  };
  // The next batch's bytes are read (I/O only) on a helper thread while the model runs; decoding
  // and preprocessing run on the compute pool.
  std::vector<ImageBytes> next_bytes;
  if (!misses.empty()) next_bytes = read_batch(0);
  std::size_t done = 0;
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
    const std::exception_ptr failure = detail::for_each_item(n, true, [&](int j) {
      const std::vector<float> px =
          siglip_preprocess(decode_image(bytes[static_cast<std::size_t>(j)]), cfg.preprocess);
      std::copy(px.begin(), px.end(),
                pixels.begin() + static_cast<std::ptrdiff_t>(j * image_floats));
    });
    bytes.clear();
    if (failure) {
      join();
      std::rethrow_exception(failure);
    }
    std::vector<float> emb;
    try {
      emb = model_.encode_images(pixels.data(), n);
    } catch (...) {
      join();
      throw;
    }
    join();
    if (read_failure) std::rethrow_exception(read_failure);
    for (int j = 0; j < n; ++j) {
      const std::size_t i = misses[b + static_cast<std::size_t>(j)];
      const float* e = &emb[static_cast<std::size_t>(j) * dim];
      check_finite(e, "image " + requests[i].name);
      std::copy(e, e + dim, out.begin() + static_cast<std::ptrdiff_t>(i * dim));
      if (cacheable) cache.put(keys[i], std::vector<float>(e, e + dim));
    }
    done += static_cast<std::size_t>(n);
    if (options_.on_progress) options_.on_progress("images", done, misses.size());
  }
  if (stats != nullptr) {
    stats->images_computed += misses.size();
    stats->images_cached += requests.size() - misses.size();
    stats->cache_corrupt += cache.corrupt();
    stats->image_seconds += seconds_since(start);
    if (!cache.warning().empty()) stats->cache_warning = cache.warning();
  }
  return out;
}

std::vector<float> SiglipVlModel::embed_texts(const std::vector<std::string>& captions,
                                              EmbedStats* stats, const EncodeOptions& encode,
                                              TowerOutput* full) const {
  refuse_states(encode, full);
  const auto start = std::chrono::steady_clock::now();
  const std::size_t dim = static_cast<std::size_t>(embed_dim());
  const bool cacheable = options_.use_cache;
  EmbeddingCache cache = make_cache();
  std::vector<float> out(captions.size() * dim);
  std::vector<std::size_t> misses;
  for (std::size_t i = 0; i < captions.size(); ++i) {
    if (cacheable) {
      if (auto hit = cache.get(cache.text_key(captions[i]), dim)) {
        std::copy(hit->begin(), hit->end(), out.begin() + static_cast<std::ptrdiff_t>(i * dim));
        continue;
      }
    }
    misses.push_back(i);
  }
  // Every caption is max_length ids (padded): batches of batch_size captions.
  const std::size_t batch = static_cast<std::size_t>(std::max(1, options_.batch_size));
  for (std::size_t b = 0; b < misses.size(); b += batch) {
    const std::size_t end = std::min(misses.size(), b + batch);
    std::vector<SiglipTokens> tokens;
    for (std::size_t k = b; k < end; ++k)
      tokens.push_back(tokenizer_.encode(captions[misses[k]]));
    const std::vector<float> emb = model_.encode_texts(tokens, tokenizer_.uses_attention_mask());
    for (std::size_t k = b; k < end; ++k) {
      const std::size_t i = misses[k];
      const float* e = &emb[(k - b) * dim];
      check_finite(e, "caption \"" + captions[i] + "\"");
      std::copy(e, e + dim, out.begin() + static_cast<std::ptrdiff_t>(i * dim));
      if (cacheable) cache.put(cache.text_key(captions[i]), std::vector<float>(e, e + dim));
    }
    if (options_.on_progress) options_.on_progress("captions", end, misses.size());
  }
  if (stats != nullptr) {
    stats->texts_computed += misses.size();
    stats->texts_cached += captions.size() - misses.size();
    stats->cache_corrupt += cache.corrupt();
    stats->text_seconds += seconds_since(start);
    if (!cache.warning().empty()) stats->cache_warning = cache.warning();
  }
  return out;
}

}  // namespace

bool is_siglip_checkpoint(const fs::path& checkpoint) {
  std::error_code ec;
  if (!fs::is_directory(checkpoint, ec)) return false;
  return checkpoint_model_type(checkpoint) == "siglip";
}

std::unique_ptr<VlModel> open_siglip(const fs::path& checkpoint, const ModelOptions& options) {
  if (!options.head.empty()) {
    throw UsageError(
        "--head does not apply to SigLIP (it has one head: " + std::string(kScoreFormula) + ")");
  }
  return std::make_unique<SiglipVlModel>(checkpoint, options);
}

}  // namespace winokit
