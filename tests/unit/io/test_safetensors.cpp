// Checkpoint readers: safetensors and the restricted PyTorch unpickler.
#include <gtest/gtest.h>

#include <zip.h>

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

}  // namespace
}  // namespace winokit
