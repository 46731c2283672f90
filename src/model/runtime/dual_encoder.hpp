// The dual-encoder runtime: everything between a family's two towers and DualEncoder's
// embed_images / embed_texts. A family supplies its preprocessing, its tokenizer, its two
// forwards, its cache signature and its memory estimate (DualTowers); the runtime does the rest
// the same way for every family:
//   - the embedding cache (keyed by the family's signature; an image by its file's SHA-256,
//     remembered in the cache folder, and the preprocessing; a caption by its text);
//   - images: the next batch's bytes read on a helper thread while the model runs, decoding and
//     preprocessing on the compute pool, batches of batch_size, the working-memory check;
//   - captions: batches by a budget of token rows, shortest first (or in order, fixed size);
//   - non-finite embeddings refused naming the input; progress; statistics; per-layer states
//     gathered across batches as [levels, n, width].
//
//   class MyTowers final : public detail::DualTowers { ... };
//   std::vector<float> e = detail::run_image_embeddings(towers, options, requests, stats);
//
// Internal to src/model.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "winokit/io/image_decode.hpp"
#include "winokit/model/vl_model.hpp"

namespace winokit::detail {

// A caption's ids, and its attention mask where the tower takes one (empty: every id is real).
struct TextTokens {
  std::vector<int> ids;
  std::vector<int> mask;
};

// How captions are cut into batches: at most `max_rows` token rows (the longest caption times
// the batch's size) and `max_items` captions per batch, the shortest first when
// `shortest_first` (captions of one length waste no positions). Results never depend on it.
struct TextBatching {
  bool shortest_first = true;
  std::size_t max_rows = std::numeric_limits<std::size_t>::max();
  std::size_t max_items = std::numeric_limits<std::size_t>::max();
};

class DualTowers {
 public:
  virtual ~DualTowers() = default;
  virtual int embed_dim() const = 0;
  // Named in errors about the model's outputs (the checkpoint).
  virtual std::string source() const = 0;
  // Keys the cache: must change with the weights, the kernels and anything else that changes an
  // embedding (the tokenizer's settings).
  virtual std::string cache_signature() const = 0;

  // ---- images ----
  // Called before a request's images are read: refuses settings that cannot work (UsageError).
  virtual void check_image_settings() const {}
  // The preprocessing as JSON: part of every image's cache key.
  virtual std::string preprocess_json() const = 0;
  virtual std::size_t image_floats() const = 0;  // one preprocessed image
  virtual std::vector<float> preprocess(const DecodedImage& image) const = 0;
  // Working memory of a batch of `batch` images, in bytes (refused over 3/4 of the machine's).
  virtual double image_batch_bytes(int batch) const = 0;
  virtual TowerOutput encode_images(const float* pixels, int count,
                                    const EncodeOptions& encode) const = 0;
  // The shape of the image tower's per-layer states: levels (layers + 1) and width.
  virtual int image_levels() const { return 0; }
  virtual int image_width() const { return 0; }

  // ---- captions ----
  virtual TextTokens tokenize(const std::string& caption) const = 0;
  virtual TextBatching text_batching(int batch_size) const = 0;
  virtual TowerOutput encode_texts(const std::vector<TextTokens>& captions,
                                   const EncodeOptions& encode) const = 0;
  virtual int text_levels() const { return 0; }
  virtual int text_width() const { return 0; }
};

struct DualRunOptions {
  int batch_size = 32;  // images per forward
  bool use_cache = true;
  std::filesystem::path cache_dir;  // empty: default_cache_dir()
  std::function<void(const std::string&, std::size_t, std::size_t)> on_progress;

  std::filesystem::path cache_root() const;
  // Where the SHA-256s of weight and image files are remembered (remembered_sha256_file).
  std::filesystem::path hash_index() const;
};

// [n, embed_dim] embeddings in request order (DualEncoder::embed_images / embed_texts). When
// `encode` asks for states, every input is computed (none read from the cache) and `full`
// receives them over the whole request.
std::vector<float> run_image_embeddings(const DualTowers& towers, const DualRunOptions& options,
                                        const std::vector<ImageRequest>& requests,
                                        EmbedStats* stats = nullptr,
                                        const EncodeOptions& encode = {},
                                        TowerOutput* full = nullptr);
std::vector<float> run_text_embeddings(const DualTowers& towers, const DualRunOptions& options,
                                       const std::vector<std::string>& captions,
                                       EmbedStats* stats = nullptr,
                                       const EncodeOptions& encode = {},
                                       TowerOutput* full = nullptr);

}  // namespace winokit::detail
