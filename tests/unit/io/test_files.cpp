#include <gtest/gtest.h>

#include "test_util.hpp"
#include "winokit/core/error.hpp"
#include "winokit/core/hash.hpp"
#include "winokit/io/files.hpp"

namespace winokit {
namespace {

TEST(Files, OutputSetWritesAllOrNothing) {
  test::TempDir dir;
  OutputSet set;
  set.add(dir.path() / "a.json", "first");
  set.add(dir.path() / "new-dir" / "deeper" / "c.json", "third");
  auto file = dir.write("a-file", "x");
  set.add(file / "b.json", "second");  // under a regular file: cannot be written
  EXPECT_THROW(set.commit(), IoError);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "a.json"));
  // No temporary and no folder made for the failed set is left behind either.
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "new-dir"));
  std::filesystem::remove(file);
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

// Issue 12, item 4: missing output folders are created.
TEST(Files, OutputSetCreatesMissingFolders) {
  test::TempDir dir;
  OutputSet set;
  set.add(dir.path() / "maps" / "here" / "a.png", "png");
  set.commit();
  EXPECT_EQ(read_file(dir.path() / "maps" / "here" / "a.png"), "png");
  write_file_atomic(dir.path() / "other" / "b.csv", "csv");
  EXPECT_EQ(read_file(dir.path() / "other" / "b.csv"), "csv");
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
