#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <filesystem>
#include <thread>
#include <vector>

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

// Issue 27: writers of a shared folder (a cache on NFS) never share a temporary, so concurrent
// writers of one target each install a whole file; a dead writer's temporary of this host is
// removed, another host's never.
TEST(Files, SharedWritesOfOneTargetFromManyThreadsAreWhole) {
  test::TempDir dir;
  const std::filesystem::path target = dir.path() / "entry";
  constexpr int kThreads = 8;
  constexpr int kWrites = 40;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      // Each writer's content is whole only with all its bytes: one letter, 64 KiB of it.
      const std::string content(std::size_t{1} << 16, static_cast<char>('a' + t));
      for (int w = 0; w < kWrites; ++w)
        write_file_shared(target, content);
    });
  }
  std::atomic<bool> torn{false};
  std::thread reader([&] {
    for (int r = 0; r < 200; ++r) {
      std::string got;
      try {
        got = read_file(target);
      } catch (const IoError&) {
        continue;  // not written yet
      }
      if (got.size() != (std::size_t{1} << 16) ||
          got.find_first_not_of(got[0]) != std::string::npos)
        torn = true;
    }
  });
  for (auto& th : threads)
    th.join();
  reader.join();
  EXPECT_FALSE(torn);
  const std::string last = read_file(target);
  EXPECT_EQ(last.size(), std::size_t{1} << 16);
  EXPECT_EQ(last.find_first_not_of(last[0]), std::string::npos);
  for (const auto& e : std::filesystem::directory_iterator(dir.path()))
    EXPECT_EQ(e.path().filename(), "entry");  // no temporary left behind
}

TEST(Files, SharedWriteRemovesOnlyThisHostsDeadTemporaries) {
  test::TempDir dir;
  pid_t dead = 0;
  if ((dead = ::fork()) == 0) ::_exit(0);
  ::waitpid(dead, nullptr, 0);
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  std::string here;
  for (const char* c = host; *c && here.size() < 40; ++c)
    here += (std::isalnum(static_cast<unsigned char>(*c)) || *c == '.' || *c == '_') ? *c : '_';
  if (here.empty()) here = "host";
  const std::string mine = ".k.part-" + here + "-" + std::to_string(dead) + "-00ff";
  const std::string other = ".k.part-elsewhere-" + std::to_string(dead) + "-00ff";
  dir.write(mine, "half");
  dir.write(other, "half");
  write_file_shared(dir.path() / "k", "whole");
  EXPECT_FALSE(std::filesystem::exists(dir.path() / mine));
  EXPECT_TRUE(std::filesystem::exists(dir.path() / other));  // its pid means nothing here
  EXPECT_EQ(read_file(dir.path() / "k"), "whole");
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
