#include "winokit/model/embedding_cache.hpp"

#include <cstdlib>
#include <cstring>

#include "winokit/core/error.hpp"
#include "winokit/core/hash.hpp"
#include "winokit/io/files.hpp"

namespace winokit {

namespace fs = std::filesystem;

namespace {
constexpr char kMagic[8] = {'W', 'K', 'E', 'M', 'B', '0', '0', '1'};
constexpr std::size_t kDigestHex = 64;
}  // namespace

fs::path default_cache_dir() {
  if (const char* d = std::getenv("WINOKIT_CACHE_DIR"); d != nullptr && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x)
    return fs::path(x) / "winokit";
  if (const char* h = std::getenv("HOME"); h != nullptr && *h)
    return fs::path(h) / ".cache" / "winokit";
  return fs::temp_directory_path() / "winokit-cache";
}

EmbeddingCache::EmbeddingCache(fs::path root, std::string weights_id)
    : dir_(std::move(root) / "embeddings" / sha256_hex(weights_id).substr(0, 32)),
      weights_id_(std::move(weights_id)) {}

std::string EmbeddingCache::image_key(const std::string& image_bytes,
                                      const std::string& preprocess_json) const {
  return image_key_from_digest(sha256_hex(image_bytes), preprocess_json);
}

std::string EmbeddingCache::image_key_from_digest(const std::string& image_sha256,
                                                  const std::string& preprocess_json) const {
  return sha256_hex("image\n" + weights_id_ + "\n" + preprocess_json + "\n" + image_sha256);
}

std::string EmbeddingCache::pair_key(const std::string& image_sha256,
                                     const std::string& preprocess_json,
                                     const std::string& caption) const {
  return sha256_hex("pair\n" + weights_id_ + "\n" + preprocess_json + "\n" + image_sha256 + "\n" +
                    caption);
}

std::string EmbeddingCache::text_key(const std::string& caption) const {
  return sha256_hex("text\n" + weights_id_ + "\n" + caption);
}

std::optional<std::vector<float>> EmbeddingCache::get(const std::string& key,
                                                      std::size_t dim) const {
  const fs::path file = dir_ / key.substr(0, 2) / key;
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) return std::nullopt;
  std::string bytes;
  try {
    bytes = read_file(file);
  } catch (const IoError&) {
    return std::nullopt;
  }
  const std::size_t payload = dim * sizeof(float);
  // magic | key (64 hex) | values | sha256 of everything before it (64 hex)
  const std::size_t overhead = sizeof kMagic + 2 * kDigestHex;
  if (bytes.size() < overhead || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0 ||
      bytes.compare(sizeof kMagic, kDigestHex, key) != 0 ||
      sha256_hex(std::string_view(bytes).substr(0, bytes.size() - kDigestHex)) !=
          std::string_view(bytes).substr(bytes.size() - kDigestHex)) {
    ++corrupt_;
    return std::nullopt;
  }
  if (bytes.size() != overhead + payload) return std::nullopt;  // intact, but another size
  std::vector<float> values(dim);
  std::memcpy(values.data(), bytes.data() + sizeof kMagic + kDigestHex, payload);
  ++hits_;
  return values;
}

void EmbeddingCache::put(const std::string& key, const std::vector<float>& values) {
  if (!warning_.empty()) return;
  std::string bytes(kMagic, sizeof kMagic);
  bytes += key;
  bytes.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  bytes += sha256_hex(bytes);
  const fs::path sub = dir_ / key.substr(0, 2);
  std::error_code ec;
  fs::create_directories(sub, ec);
  // Another process may have made the folder between the check and the mkdir: only a folder
  // that is still missing is an error.
  if (std::error_code again; ec && fs::is_directory(sub, again)) ec.clear();
  try {
    if (ec) throw IoError(sub.string() + ": " + ec.message());
    // Many processes (shards of one run, on one machine or on a cluster's shared file system)
    // may write the same key at once: each writes a temporary of its own and renames it (no
    // lock); get() checks the checksum, so a reader takes a whole entry or none.
    write_file_shared(sub / key, bytes);
  } catch (const IoError& e) {
    warning_ = std::string("embedding cache disabled: ") + e.what();
  }
}

}  // namespace winokit
