// An on-disk cache of embeddings keyed by (model weights hash, preprocessing settings, image
// bytes hash) or (model weights hash, caption text): a second evaluation of the same model on
// the same data does no model work. Each entry is one file written atomically, with a checksum:
// a corrupt or truncated entry is detected, ignored and recomputed. Many processes may share one
// cache folder, on one machine or on a cluster's shared file system (NFS): writers never lock,
// each writes a temporary of its own and renames it (write_file_shared), so concurrent writers
// of one key and a writer killed mid-write leave complete entries or none.
//
//   winokit::EmbeddingCache cache(winokit::default_cache_dir(), model.weights_id());
//   std::string key = cache.image_key(bytes, preprocess_json);
//   if (auto v = cache.get(key)) use(*v); else cache.put(key, embedding);
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(model);

namespace winokit {

// $WINOKIT_CACHE_DIR, else $XDG_CACHE_HOME/winokit, else ~/.cache/winokit.
std::filesystem::path default_cache_dir();

class EmbeddingCache {
 public:
  EmbeddingCache(std::filesystem::path root, std::string weights_id);
  std::string image_key(const std::string& image_bytes, const std::string& preprocess_json) const;
  // The same key from the image bytes' SHA-256 (64 hex digits).
  std::string image_key_from_digest(const std::string& image_sha256,
                                    const std::string& preprocess_json) const;
  std::string text_key(const std::string& caption) const;
  // A cross-encoder's s(caption, image): the image by its SHA-256 and preprocessing.
  std::string pair_key(const std::string& image_sha256, const std::string& preprocess_json,
                       const std::string& caption) const;
  // nullopt when absent, of another size, or corrupt.
  std::optional<std::vector<float>> get(const std::string& key, std::size_t dim) const;
  // Best effort: a cache that cannot be written is reported once through `warning()`.
  void put(const std::string& key, const std::vector<float>& values);
  const std::string& warning() const { return warning_; }
  std::size_t hits() const { return hits_; }
  std::size_t corrupt() const { return corrupt_; }

 private:
  std::filesystem::path dir_;
  std::string weights_id_;
  std::string warning_;
  mutable std::size_t hits_ = 0, corrupt_ = 0;
};

}  // namespace winokit
