#include <gtest/gtest.h>

#include "test_util.hpp"
#include "winokit/error.hpp"
#include "winokit/files.hpp"
#include "winokit/hash.hpp"

namespace winokit {
namespace {

TEST(Files, OutputSetWritesAllOrNothing) {
  test::TempDir dir;
  OutputSet set;
  set.add(dir.path() / "a.json", "first");
  set.add(dir.path() / "missing-dir" / "b.json", "second");
  EXPECT_THROW(set.commit(), IoError);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "a.json"));
  // No temporary is left behind either.
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(Files, OutputSetReplacesExistingFiles) {
  test::TempDir dir;
  auto target = dir.write("r.txt", "old");
  OutputSet set;
  set.add(target, "new");
  set.commit();
  EXPECT_EQ(read_file(target), "new");
}

TEST(Files, MissingFileIsIoErrorNamingIt) {
  try {
    read_file("/nonexistent/scores.jsonl");
    FAIL();
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/scores.jsonl: not found"),
              std::string::npos);
  }
}

TEST(Hash, Sha256KnownVector) {
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace
}  // namespace winokit
