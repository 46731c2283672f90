// Checkpoint readers: safetensors and the restricted PyTorch unpickler.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <zip.h>

#include <cstring>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "test_util.hpp"
#include "winokit/core/error.hpp"
#include "winokit/io/files.hpp"
#include "winokit/io/safetensors.hpp"

namespace winokit {
namespace fs = std::filesystem;
namespace {

TEST(SafeTensors, RoundTripAndHalfPrecision) {
  test::TempDir dir;
  auto file =
      dir.write("t.safetensors",
                encode_safetensors_f32({{"a", {{2, 3}, {1, 2, 3, 4, 5, 6}}}, {"b", {{1}, {7}}}},
                                       {{"note", "x"}}));
  auto st = SafeTensors::open(file);
  EXPECT_EQ(st.to_float("a", {2, 3}), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(st.content_hash(), sha256_file(file));
  EXPECT_FLOAT_EQ(half_to_float(0x3C00), 1.0f);
  EXPECT_FLOAT_EQ(half_to_float(0xC000), -2.0f);
  EXPECT_FLOAT_EQ(half_to_float(0x7BFF), 65504.0f);
  EXPECT_FLOAT_EQ(half_to_float(0x0001), 5.9604645e-8f);
  EXPECT_TRUE(std::isinf(half_to_float(0x7C00)));
  EXPECT_FLOAT_EQ(bfloat16_to_float(0x3F80), 1.0f);
  EXPECT_FLOAT_EQ(bfloat16_to_float(0xC0A0), -5.0f);
}

TEST(SafeTensors, ErrorsNameTheTensorAndBothShapes) {
  test::TempDir dir;
  auto file =
      dir.write("t.safetensors", encode_safetensors_f32({{"w", {{2, 3}, std::vector<float>(6)}}}));
  auto st = SafeTensors::open(file);
  try {
    st.get("visual.proj", {768, 512});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(
        std::string(e.what()).find("'visual.proj': tensor missing (expected shape [768, 512])"),
        std::string::npos)
        << e.what();
  }
  try {
    st.get("w", {3, 2});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'w': expected shape [3, 2], found [2, 3]"),
              std::string::npos)
        << e.what();
  }
  std::string bytes = read_file(file);
  auto truncated = dir.write("cut.safetensors", bytes.substr(0, bytes.size() - 4));
  EXPECT_THROW(SafeTensors::open(truncated), InputError);
  EXPECT_THROW(SafeTensors::open(dir.write("tiny.safetensors", "abc")), InputError);
  auto index = dir.write("model.safetensors.index.json",
                         R"({"weight_map": {"w": "t.safetensors", "gone": "t.safetensors"}})");
  EXPECT_THROW(SafeTensors::open(index), InputError);
  auto missing = dir.write("m.index.json", R"({"weight_map": {"w": "nope.safetensors"}})");
  EXPECT_THROW(SafeTensors::open(missing), IoError);
}

// A zip with one data.pkl, as torch.save writes it.
std::filesystem::path torch_zip(const test::TempDir& dir, const std::string& name,
                                const std::string& pickle) {
  const auto path = dir.path() / name;
  int err = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  zip_source_t* s = zip_source_buffer(z, pickle.data(), pickle.size(), 0);
  zip_file_add(z, "archive/data.pkl", s, 0);
  zip_close(z);
  return path;
}

TEST(TorchCheckpoint, RefusesAnythingButTensors) {
  test::TempDir dir;
  // pickle.dumps(os.system('ls')): GLOBAL os.system, then REDUCE.
  using namespace std::string_literals;
  const std::string hostile = "\x80\x02"s + "cos\nsystem\n" + "q\x00"s + "X\x02\x00\x00\x00"s +
                              "ls" + "q\x01"s + "\x85" + "R.";
  try {
    SafeTensors::open_torch(torch_zip(dir, "evil.bin", hostile));
    FAIL() << "a hostile pickle was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("refusing to load os.system"), std::string::npos)
        << e.what();
  }
  // builtins.eval through STACK_GLOBAL (protocol 4) is refused too.
  const std::string stack_global =
      "\x80\x04"s + "\x8c\x08" + "builtins" + "\x8c\x04" + "eval" + "\x93.";
  EXPECT_THROW(SafeTensors::open_torch(torch_zip(dir, "evil2.bin", stack_global)), InputError);
  EXPECT_THROW(SafeTensors::open_torch(torch_zip(dir, "empty.bin", "\x80\x02"s + "}.")),
               InputError);  // no tensors
  EXPECT_THROW(SafeTensors::open_torch(dir.write("old.bin", "not a zip")), InputError);
}

// ---- issue 23, item 3: hostile pickles and archives ----

const std::filesystem::path kSource = WINOKIT_SOURCE_DIR;

// A torch.save-like zip: data.pkl and storages archive/data/0..7 of 256 float32 (0, 1, 2, ...).
std::filesystem::path torch_zip_with_storages(const test::TempDir& dir, const std::string& name,
                                              const std::string& pickle) {
  static const std::string storage = [] {
    std::string s(256 * 4, '\0');
    for (int i = 0; i < 256; ++i) {
      const float v = static_cast<float>(i);
      std::memcpy(s.data() + 4 * i, &v, 4);
    }
    return s;
  }();
  const auto path = dir.path() / name;
  int err = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  zip_file_add(z, "archive/data.pkl", zip_source_buffer(z, pickle.data(), pickle.size(), 0), 0);
  for (int k = 0; k < 8; ++k) {
    zip_file_add(z, ("archive/data/" + std::to_string(k)).c_str(),
                 zip_source_buffer(z, storage.data(), storage.size(), 0), 0);
  }
  zip_close(z);
  return path;
}

std::string regression(const std::string& name) {
  return read_file(kSource / "tests/fuzz/regressions/pickle" / name);
}

std::string open_error(const std::filesystem::path& file) {
  try {
    SafeTensors::open_torch(file);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(accepted)";
}

// BINUNICODE8 of length 2^64 - 9: `pos + n` wrapped, passed the bounds check, and the parser
// then looped with memory growing without limit.
TEST(TorchCheckpoint, ALengthNear2To64IsATruncatedPickleNotAnEndlessLoop) {
  test::TempDir dir;
  const auto file =
      torch_zip_with_storages(dir, "wrap.bin", regression("binunicode8-length-wraps.pkl"));
  EXPECT_NE(open_error(file).find("truncated pickle"), std::string::npos) << open_error(file);
  EXPECT_EQ(test::exit_code_with_memory_limit(256u << 20, [&] { SafeTensors::open_torch(file); }),
            2);
}

// ']' then 200,000 TUPLE1: SIGSEGV tearing the nesting down. Now refused at 1,000 levels; and a
// chain of 300,000 lists built by APPEND through the memo (no depth seen when nesting) is freed
// without recursion.
TEST(TorchCheckpoint, DeepNestingIsRefusedAndFreedWithoutRecursion) {
  test::TempDir dir;
  const auto tuples =
      torch_zip_with_storages(dir, "tuples.bin", regression("tuple1-nesting-200000.pkl"));
  EXPECT_NE(open_error(tuples).find("nested deeper than 1000"), std::string::npos)
      << open_error(tuples);
  using namespace std::string_literals;
  std::string chain = "\x80\x04]q\x00]q\x01"s + "a";
  for (int i = 0; i < 300000; ++i)
    chain += std::string(
        "h\x01]q\x01"
        "ab",
        7);
  chain += ".";
  const auto lists = torch_zip_with_storages(dir, "chain.bin", chain);
  EXPECT_NE(open_error(lists).find("not a dict"), std::string::npos) << open_error(lists);
}

// A tensor with strides [-10^12, 10^12] read out of bounds (SIGSEGV in memcpy); strides,
// offsets and shapes are now checked against the storage in full.
TEST(TorchCheckpoint, StridesOffsetsAndShapesAreCheckedAgainstTheStorage) {
  test::TempDir dir;
  const std::pair<const char*, const char*> cases[] = {
      {"strides-out-of-storage.pkl", "negative stride"},
      {"stride-shorter-than-shape.pkl", "differ in length"},
      {"offset-past-storage.pkl", "extends past its storage"}};
  for (const auto& [name, message] : cases) {
    const auto file = torch_zip_with_storages(dir, std::string(name) + ".bin", regression(name));
    EXPECT_NE(open_error(file).find(message), std::string::npos)
        << name << ": " << open_error(file);
    EXPECT_EQ(test::exit_code_with_memory_limit(256u << 20, [&] { SafeTensors::open_torch(file); }),
              2)
        << name;
  }
  // A transposed view (stride [1, 3], offset 1) is still read, in row-major order.
  const auto ok = torch_zip_with_storages(
      dir, "t.bin", read_file(kSource / "tests/fuzz/corpus/pickle/transposed_tensor.pkl"));
  SafeTensors st = SafeTensors::open_torch(ok);
  const std::vector<float> w = st.to_float("w");
  ASSERT_EQ(w.size(), 12u);
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 4; ++c)
      EXPECT_EQ(w[static_cast<std::size_t>(4 * r + c)], static_cast<float>(1 + r + 3 * c));
  }
}

// libzip source of `size` zero bytes, made as read (so the test holds none of them).
zip_int64_t zeros(void* state, void* data, zip_uint64_t len, zip_source_cmd_t cmd) {
  auto* left = static_cast<std::pair<zip_uint64_t, zip_uint64_t>*>(state);  // {size, left}
  switch (cmd) {
    case ZIP_SOURCE_OPEN:
      left->second = left->first;
      return 0;
    case ZIP_SOURCE_READ: {
      const zip_uint64_t n = std::min(len, left->second);
      std::memset(data, 0, n);
      left->second -= n;
      return static_cast<zip_int64_t>(n);
    }
    case ZIP_SOURCE_STAT: {
      auto* st = static_cast<zip_stat_t*>(data);
      zip_stat_init(st);
      st->size = left->first;
      st->valid |= ZIP_STAT_SIZE;
      return sizeof(zip_stat_t);
    }
    case ZIP_SOURCE_SUPPORTS:
      return zip_source_make_command_bitmap(ZIP_SOURCE_OPEN, ZIP_SOURCE_READ, ZIP_SOURCE_CLOSE,
                                            ZIP_SOURCE_STAT, ZIP_SOURCE_ERROR, ZIP_SOURCE_FREE, -1);
    case ZIP_SOURCE_ERROR:
      return 2 * sizeof(int);
    default:
      return 0;
  }
}

// A storage of 512 MiB of zeros deflated to under 1 MB: it was read whole (4.26 GB for the
// 4 GiB one of the report). Now refused before reading, in bounded memory.
TEST(TorchCheckpoint, ADecompressionBombIsRefusedInBoundedMemory) {
  test::TempDir dir;
  constexpr std::int64_t kFloats = 128ll << 20;  // 512 MiB
  using namespace std::string_literals;
  std::string pkl = "\x80\x02}(X\x01\x00\x00\x00w"s;
  pkl += "ctorch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00storagectorch\nFloatStorage\n"s;
  pkl += "X\x01\x00\x00\x00"s + "0X\x03\x00\x00\x00"s + "cpu";
  auto long8 = [](std::int64_t v) {
    std::string s = "\x8a\x08";
    for (int i = 0; i < 8; ++i)
      s += static_cast<char>((v >> (8 * i)) & 0xFF);
    return s;
  };
  pkl += long8(kFloats) + "tQ" + long8(0) + "(" + long8(kFloats) + "t(" + long8(1) + "t";
  pkl += "\x89"s + "ccollections\nOrderedDict\n)RtRu.";
  const auto path = dir.path() / "bomb.bin";
  int err = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  zip_file_add(z, "archive/data.pkl", zip_source_buffer(z, pkl.data(), pkl.size(), 0), 0);
  std::pair<zip_uint64_t, zip_uint64_t> state{kFloats * 4, 0};
  const zip_int64_t idx =
      zip_file_add(z, "archive/data/0", zip_source_function(z, zeros, &state), 0);
  zip_set_file_compression(z, static_cast<zip_uint64_t>(idx), ZIP_CM_DEFLATE, 1);
  ASSERT_EQ(zip_close(z), 0);
  ASSERT_LT(std::filesystem::file_size(path), 8u << 20);
  EXPECT_NE(open_error(path).find("decompression bomb"), std::string::npos) << open_error(path);
  EXPECT_EQ(test::exit_code_with_memory_limit(128u << 20, [&] { SafeTensors::open_torch(path); }),
            2);
}

// A sharded checkpoint's index named files outside the model folder (their size leaked) or a
// FIFO (which hung): shards are plain names of regular files in the folder.
TEST(SafeTensors, ShardsAreRegularFilesInsideTheModelFolder) {
  test::TempDir dir;
  dir.write("m/t.safetensors", encode_safetensors_f32({{"w", {{1}, {1.f}}}}, {}));
  for (const std::string shard : {"/etc/passwd", "../../etc/hostname", "sub/t.safetensors", ".."}) {
    const auto index =
        dir.write("m/bad.index.json", R"({"weight_map": {"w": ")" + shard + R"("}})");
    try {
      SafeTensors::open(index);
      FAIL() << shard << " accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("not a file name inside the model folder"),
                std::string::npos)
          << e.what();
    }
  }
  ASSERT_EQ(::mkfifo((dir.path() / "m/fifo.safetensors").c_str(), 0600), 0);
  const auto fifo = dir.write("m/fifo.index.json", R"({"weight_map": {"w": "fifo.safetensors"}})");
  try {
    SafeTensors::open(fifo);
    FAIL() << "a FIFO shard was accepted";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos) << e.what();
  }
  ASSERT_EQ(::mkfifo((dir.path() / "m/fifo.bin").c_str(), 0600), 0);
  EXPECT_THROW(SafeTensors::open_torch(dir.path() / "m/fifo.bin"), IoError);
  const auto good = dir.write("m/good.index.json", R"({"weight_map": {"w": "t.safetensors"}})");
  EXPECT_EQ(SafeTensors::open(good).to_float("w"), std::vector<float>{1.f});
}

}  // namespace
}  // namespace winokit
