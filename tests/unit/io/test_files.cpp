#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

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

// Issue 23, item 7: kill -9 during a write left `.NAME.tmp-PID` (up to 152 MB) for good. The
// next write of NAME removes the temporaries of processes that no longer run, and only those.
TEST(Files, StaleTemporariesOfDeadProcessesAreRemoved) {
  test::TempDir dir;
  pid_t dead = 0;  // a pid no process has now: a child that has exited and been reaped
  if ((dead = ::fork()) == 0) ::_exit(0);
  ::waitpid(dead, nullptr, 0);
  const std::string stale = ".export.csv.tmp-" + std::to_string(dead);
  const std::string old = ".export.csv.old-" + std::to_string(dead);
  const std::string live = ".export.csv.tmp-" + std::to_string(::getppid());
  for (const auto& name : {stale, old, live, std::string(".other.csv.tmp-") + std::to_string(dead),
                           std::string(".export.csv.tmp-12ab")})
    dir.write(name, "partial");
  write_file_atomic(dir.path() / "export.csv", "a,b\n");
  EXPECT_FALSE(std::filesystem::exists(dir.path() / stale));
  EXPECT_FALSE(std::filesystem::exists(dir.path() / old));
  EXPECT_TRUE(std::filesystem::exists(dir.path() / live));  // its writer still runs
  EXPECT_TRUE(std::filesystem::exists(dir.path() / (".other.csv.tmp-" + std::to_string(dead))));
  EXPECT_TRUE(std::filesystem::exists(dir.path() / ".export.csv.tmp-12ab"));  // not our pattern
  EXPECT_EQ(read_file(dir.path() / "export.csv"), "a,b\n");
}

// Issue 23, item 4: names built from data stay inside their folder.
TEST(Files, SafeFileNamesAndOutputsInsideTheirFolder) {
  EXPECT_EQ(safe_file_name("ex_12"), "ex_12");
  const std::string evil = safe_file_name("/../../../tmp/x");
  EXPECT_EQ(evil.find('/'), std::string::npos);
  EXPECT_NE(evil.front(), '.');
  EXPECT_NE(safe_file_name("a/b"), safe_file_name("a_b"));  // replaced: a hash tells them apart
  EXPECT_FALSE(safe_file_name("").empty());
  EXPECT_LE(safe_file_name(std::string(1000, 'x')).size(), 130u);
  OutputSet out;
  for (const char* bad : {"../x.png", "/tmp/x.png", "a/b.png", "..", "."})
    EXPECT_THROW(out.add_in("maps", bad, "png"), UsageError) << bad;
  test::TempDir dir;
  out.add_in(dir.path() / "maps", safe_file_name("/../x") + ".png", "png");
  out.commit();
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path() / "maps"),
                          std::filesystem::directory_iterator()),
            1);
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
