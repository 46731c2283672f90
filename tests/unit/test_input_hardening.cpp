// Issue 14 (inputs): all-or-nothing outputs with rollback, size caps, BOMs, strict numbers,
// JSON number overflow, image names confined to the image folder, file-system errors.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>

#include "test_util.hpp"
#include "winokit/core/error.hpp"
#include "winokit/core/text.hpp"
#include "winokit/eval/scores.hpp"
#include "winokit/io/files.hpp"
#include "winokit/io/image_store.hpp"
#include "winokit/io/table.hpp"

namespace winokit {
namespace {

namespace fs = std::filesystem;

template <typename E, typename F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "no exception";
  return {};
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(OutputSetRollback, ADirectoryTargetIsRefusedBeforeAnythingIsWritten) {
  test::TempDir dir;
  auto a = dir.write("a.json", "old a");
  fs::create_directory(dir.path() / "report.html");
  OutputSet set;
  set.add(a, "new a");
  set.add(dir.path() / "b.csv", "new b");
  set.add(dir.path() / "report.html", "<html>");
  auto msg = message_of<IoError>([&] { set.commit(); });
  EXPECT_TRUE(contains(msg, "report.html: cannot write: it is a directory")) << msg;
  EXPECT_EQ(read_file(a), "old a");
  EXPECT_FALSE(fs::exists(dir.path() / "b.csv"));
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path()))
    ++entries;
  EXPECT_EQ(entries, 2u);  // a.json and the folder: no temporaries left
}

TEST(OutputSetRollback, AFailedRenameRestoresTheFilesAlreadyReplaced) {
  test::TempDir dir;
  auto a = dir.write("a.json", "old a");
  auto c = dir.path() / "c.md";
  OutputSet set;
  set.add(a, "new a");
  set.add(dir.path() / "b.csv", "new b");
  set.add(c, "new c");
  // Between the checks and the renames, someone makes c.md a folder.
  set.before_rename_for_testing = [&](std::size_t i) {
    if (i == 2) fs::create_directory(c);
  };
  auto msg = message_of<IoError>([&] { set.commit(); });
  EXPECT_TRUE(contains(msg, "c.md: cannot write: it is a directory")) << msg;
  EXPECT_EQ(read_file(a), "old a");                // replaced, then restored
  EXPECT_FALSE(fs::exists(dir.path() / "b.csv"));  // created, then removed
  EXPECT_TRUE(fs::is_directory(c));
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path()))
    ++entries;
  EXPECT_EQ(entries, 2u);  // no temporaries or kept copies left
}

TEST(OutputSetRollback, ARenameFailingAfterTheChecksRollsBackToo) {
  test::TempDir dir;
  auto a = dir.write("a.json", "old a");
  auto b = dir.write("b.csv", "old b");
  OutputSet set;
  set.add(a, "new a");
  set.add(b, "new b");
  set.add(dir.path() / "c.md", "new c");
  // Someone removes the last temporary file before it is renamed: rename() fails (ENOENT).
  set.before_rename_for_testing = [&](std::size_t i) {
    if (i != 2) return;
    for (const auto& e : fs::directory_iterator(dir.path())) {
      if (e.path().filename().string().rfind(".c.md.tmp-", 0) == 0) fs::remove(e.path());
    }
  };
  auto msg = message_of<IoError>([&] { set.commit(); });
  EXPECT_TRUE(contains(msg, "c.md: cannot write")) << msg;
  EXPECT_EQ(read_file(a), "old a");
  EXPECT_EQ(read_file(b), "old b");
  EXPECT_FALSE(fs::exists(dir.path() / "c.md"));
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path()))
    ++entries;
  EXPECT_EQ(entries, 2u);
}

TEST(OutputSetRollback, SuccessLeavesNoKeptCopies) {
  test::TempDir dir;
  auto a = dir.write("a.json", "old a");
  OutputSet set;
  set.add(a, "new a");
  set.add(dir.path() / "b.csv", "new b");
  set.commit();
  EXPECT_EQ(read_file(a), "new a");
  EXPECT_EQ(read_file(dir.path() / "b.csv"), "new b");
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path()))
    ++entries;
  EXPECT_EQ(entries, 2u);
}

TEST(OutputSetRollback, TheSameTargetTwiceIsAUsageError) {
  test::TempDir dir;
  OutputSet set;
  set.add(dir.path() / "r.json", "1");
  set.add(dir.path() / "." / "r.json", "2");
  EXPECT_THROW(set.commit(), UsageError);
  EXPECT_FALSE(fs::exists(dir.path() / "r.json"));
}

TEST(TextFiles, ALongLineIsRefusedAfterReadingAtMostTheCap) {
  test::TempDir dir;
  auto p = dir.write("big.jsonl", "{}\n" + std::string(3 << 20, 'x'));
  auto msg = message_of<InputError>([&] { read_text_file(p); });
  EXPECT_TRUE(contains(msg, "big.jsonl:2")) << msg;
  EXPECT_TRUE(contains(msg, "line longer than 1 MiB")) << msg;
  EXPECT_EQ(read_file(p).size(), 3u + (3u << 20));  // read_file has no caps
}

TEST(TextFiles, AFileOverTheCapIsRefused) {
  test::TempDir dir;
  auto p = dir.write("big.csv", std::string(2000, '\n'));
  auto msg = message_of<InputError>([&] { read_text_file(p, {.max_file_bytes = 1000}); });
  EXPECT_TRUE(contains(msg, "file larger than 1000 bytes")) << msg;
}

TEST(TextFiles, SymlinkLoopsAndFoldersAreIoErrorsNamingThePath) {
  test::TempDir dir;
  fs::create_symlink(dir.path() / "loop", dir.path() / "loop");
  auto msg = message_of<IoError>([&] { read_file(dir.path() / "loop"); });
  EXPECT_TRUE(contains(msg, "loop: too many levels of symbolic links")) << msg;
  msg = message_of<IoError>([&] { read_text_file(dir.path()); });
  EXPECT_TRUE(contains(msg, "is a directory")) << msg;
}

TEST(StrictNumbers, OnlyDecimalSyntax) {
  EXPECT_FALSE(parse_double("0x10"));
  EXPECT_FALSE(parse_double("0x1p3"));
  EXPECT_FALSE(parse_double("1e"));
  EXPECT_FALSE(parse_double("."));
  EXPECT_FALSE(parse_double("1,5"));
  EXPECT_FALSE(parse_double("nan(123)"));
  EXPECT_FALSE(parse_double("--1"));
  EXPECT_DOUBLE_EQ(*parse_double("-.5"), -0.5);
  EXPECT_DOUBLE_EQ(*parse_double("+5."), 5.0);
  EXPECT_DOUBLE_EQ(*parse_double("1.5E-3"), 0.0015);
  EXPECT_TRUE(std::isinf(*parse_double("1e400")));  // reported as non-finite by callers
  EXPECT_TRUE(std::isinf(*parse_double("-Infinity")));
}

TEST(ScoresInput, HexIsNotANumber) {
  WinogroundDataset ds = test::dataset_of(1);
  auto msg = message_of<InputError>(
      [&] { parse_scores("id,c0_i0,c0_i1,c1_i0,c1_i1\n0,0x10,1,1,1\n", "s.csv", ds); });
  EXPECT_TRUE(contains(msg, "s.csv:2: field 'c0_i0': not a number: '0x10'")) << msg;
}

TEST(ScoresInput, JsonNumberOverflowNamesFileAndLine) {
  WinogroundDataset ds = test::dataset_of(1);
  auto msg = message_of<InputError>([&] {
    parse_scores(
        "{\"label\": \"0_c0_i0\", \"score\": 1}\n{\"label\": \"0_c0_i1\", \"score\": 1e400}\n",
        "s.jsonl", ds);
  });
  EXPECT_TRUE(contains(msg, "s.jsonl:2")) << msg;
  EXPECT_TRUE(contains(msg, "number out of range")) << msg;
}

TEST(ScoresInput, ABomDoesNotHideJsonl) {
  WinogroundDataset ds = test::dataset_of(1);
  std::string text = "\xEF\xBB\xBF";
  for (const char* p : {"c0_i0", "c0_i1", "c1_i0", "c1_i1"})
    text += std::string("{\"label\": \"0_") + p + "\", \"score\": 0.5}\n";
  auto loaded = parse_scores(text, "bom.jsonl", ds);
  EXPECT_EQ(loaded.format, ScoresFormat::OfficialJsonl);
  EXPECT_DOUBLE_EQ(loaded.scores[0].s[3], 0.5);
}

TEST(ExamplesInput, BomOverflowAndEscapingImageNames) {
  WinogroundDataset ds = parse_examples("\xEF\xBB\xBF" + test::example_line(0), "e.jsonl");
  EXPECT_EQ(ds.examples[0].id, "0");
  auto msg = message_of<InputError>(
      [&] { parse_examples("{\"id\": 1e400, \"caption_0\": \"a\"}\n", "e.jsonl"); });
  EXPECT_TRUE(contains(msg, "e.jsonl:1: number out of range")) << msg;
  std::string bad = test::example_line(0);
  bad.replace(bad.find("ex_0_img_1"), 10, "../../outside/secret");
  msg = message_of<InputError>([&] { parse_examples(bad, "e.jsonl"); });
  EXPECT_TRUE(contains(msg,
                       "e.jsonl:1: field 'image_1': '../../outside/secret' is not a name "
                       "inside the image folder"))
      << msg;
}

TEST(ImageNames, NormalisedAndConfined) {
  EXPECT_EQ(*normalize_image_name("ex_0_img_0"), "ex_0_img_0");
  EXPECT_EQ(*normalize_image_name("./a//b/./c"), "a/b/c");
  EXPECT_EQ(*normalize_image_name("a/../b"), "b");
  EXPECT_FALSE(normalize_image_name("../../outside/secret"));
  EXPECT_FALSE(normalize_image_name("a/../../b"));
  EXPECT_FALSE(normalize_image_name("/etc/passwd"));
  EXPECT_FALSE(normalize_image_name(".."));
  EXPECT_FALSE(normalize_image_name("."));
  EXPECT_FALSE(normalize_image_name(""));
  EXPECT_FALSE(normalize_image_name("a\\..\\..\\b"));
  EXPECT_FALSE(normalize_image_name(std::string("a\0b", 3)));
}

TEST(ImageNames, TheStoreNeverReadsOutsideItsFolder) {
  test::TempDir dir;
  dir.write("outside/secret.png", "\x89PNG\r\n\x1a\nsecret");
  dir.write("data/images/ex_0_img_0.png", "\x89PNG\r\n\x1a\nimage");
  auto store = ImageStore::open(dir.path() / "data");
  EXPECT_EQ(store.read("./ex_0_img_0").bytes.substr(8), "image");
  EXPECT_THROW(store.read("../../outside/secret"), InputError);
  EXPECT_THROW(store.read("../../outside/secret"), Error);
}

TEST(Tables, CapsAndEarlyRaggedRows) {
  auto msg = message_of<InputError>([&] {
    read_table("a,b\n\"" + std::string(100, 'x') + "\"\n", "t.csv", {.max_field_bytes = 50});
  });
  EXPECT_TRUE(contains(msg, "t.csv:2: a field longer than 50 bytes")) << msg;
  msg = message_of<InputError>(
      [&] { read_table(std::string(20, ',') + "\n", "t.csv", {.max_columns = 10}); });
  EXPECT_TRUE(contains(msg, "t.csv:1: more than 10 columns")) << msg;
  msg = message_of<InputError>([&] { read_table("a,b\n1,2\n1,2,3\n1\n", "t.csv"); });
  EXPECT_TRUE(contains(msg, "t.csv:3: expected 2 columns, found 3")) << msg;
  Table t = read_table(
      "\xEF\xBB\xBF"
      "id c0_i0\n1 2\n",
      "t.txt");
  EXPECT_EQ(t.header[0], "id");
}

}  // namespace
}  // namespace winokit
