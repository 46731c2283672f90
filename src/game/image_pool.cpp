// The image pool a game samples from (see winokit/game/image_pool.hpp).
#include "winokit/game/image_pool.hpp"

#include <algorithm>
#include <cctype>

#include "winokit/core/error.hpp"

namespace winokit {

std::map<std::string, std::filesystem::path> scan_image_pool(const std::filesystem::path& dir,
                                                             std::size_t min_images) {
  if (!std::filesystem::is_directory(dir)) throw IoError(dir.string() + ": not a folder");
  std::map<std::string, std::filesystem::path> pool;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    std::string ext = entry.path().extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    if (ext != ".png" && ext != ".jpg" && ext != ".jpeg" && ext != ".webp") continue;
    pool.emplace(entry.path().stem().string(), entry.path());
  }
  if (pool.size() < min_images) {
    throw IoError(dir.string() + ": holds " + std::to_string(pool.size()) +
                  " images; the game needs at least " + std::to_string(min_images));
  }
  return pool;
}

}  // namespace winokit
