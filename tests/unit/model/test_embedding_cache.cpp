// The embedding cache: hits, and corrupt entries detected.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "test_util.hpp"
#include "winokit/core/error.hpp"
#include "winokit/io/files.hpp"
#include "winokit/model/embedding_cache.hpp"

namespace winokit {
namespace fs = std::filesystem;
namespace {

TEST(EmbeddingCache, HitsAndDetectsCorruption) {
  test::TempDir dir;
  EmbeddingCache cache(dir.path(), "weights-a");
  const std::string key = cache.text_key("a dog");
  EXPECT_FALSE(cache.get(key, 3));
  cache.put(key, {1.0f, 2.0f, 3.0f});
  ASSERT_TRUE(cache.get(key, 3));
  EXPECT_EQ(*cache.get(key, 3), (std::vector<float>{1, 2, 3}));
  EXPECT_FALSE(cache.get(key, 4));  // another model size: not used
  EXPECT_NE(EmbeddingCache(dir.path(), "weights-b").text_key("a dog"), key);
  // Flip one byte of the stored values.
  fs::path file;
  for (const auto& e : fs::recursive_directory_iterator(dir.path())) {
    if (e.is_regular_file()) file = e.path();
  }
  std::string bytes = read_file(file);
  bytes[80] = static_cast<char>(bytes[80] ^ 1);
  write_file_atomic(file, bytes);
  EXPECT_FALSE(cache.get(key, 3));
  EXPECT_EQ(cache.corrupt(), 1u);
}

}  // namespace
}  // namespace winokit
