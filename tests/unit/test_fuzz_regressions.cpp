// Inputs the libFuzzer targets (tests/fuzz) found crashing a reader, each kept in
// tests/fuzz/regressions/<target>/ (replayed by scripts/fuzz under the sanitizers) and checked
// here for the behaviour a user sees: a typed error naming the file, or the right result.
#include <gtest/gtest.h>

#include "model/families/blip/blip_model.hpp"
#include "model/families/clip/clip_model.hpp"
#include "model/families/flava/flava_model.hpp"
#include "model/families/siglip/siglip_model.hpp"
#include "model/families/vilt/vilt_model.hpp"
#include "test_util.hpp"
#include "winokit/core/error.hpp"
#include "winokit/data/winogavil.hpp"
#include "winokit/io/files.hpp"
#include "winokit/io/image_decode.hpp"
#include "winokit/io/safetensors.hpp"
#include "winokit/io/table.hpp"
#include "winokit/model/preprocess.hpp"

namespace winokit {
namespace {

const std::filesystem::path kSource = WINOKIT_SOURCE_DIR;

// fuzz_pickle: APPEND on a dict threw std::bad_variant_access ("internal error", exit 1).
TEST(FuzzRegressions, APickleOpcodeOnTheWrongKindOfValueIsAnInputError) {
  const auto file = kSource / "tests/fixtures/fuzz_bad_pickle_checkpoint.bin";
  try {
    SafeTensors::open_torch(file);
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("malformed pickle"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("fuzz_bad_pickle_checkpoint.bin"), std::string::npos);
  }
}

// fuzz_safetensors: an empty F32 tensor passed a null pointer to memcpy (undefined behaviour).
TEST(FuzzRegressions, AnEmptyTensorConvertsToNoValues) {
  test::TempDir dir;
  auto path =
      dir.write("e.safetensors",
                encode_safetensors_f32({{"empty", {{0, 3}, {}}}, {"one", {{1}, {2.5f}}}}, {}));
  SafeTensors st = SafeTensors::open(path);
  EXPECT_TRUE(st.to_float("empty").empty());
  EXPECT_EQ(st.to_float("one"), std::vector<float>{2.5f});
  // The input fuzz_safetensors found is refused or read, never a crash.
  try {
    SafeTensors found = SafeTensors::open(
        kSource / "tests/fuzz/regressions/safetensors/empty-f32-tensor-null-memcpy.safetensors");
    for (const auto& [name, view] : found.tensors()) {
      if (view.dtype == DType::F32) (void)found.to_float(name);
    }
  } catch (const Error&) {
  }
}

// fuzz_safetensors: a header that is not an object threw nlohmann's invalid_iterator; shapes
// whose element count overflows were taken at face value.
TEST(FuzzRegressions, SafetensorsHeadersThatAreNotObjectsOrOverflowAreInputErrors) {
  const auto found =
      kSource / "tests/fuzz/regressions/safetensors/header-not-an-object.safetensors";
  EXPECT_THROW(SafeTensors::open(found), InputError);
  test::TempDir dir;
  auto with_header = [&](const std::string& name, const std::string& header) {
    std::string bytes(8, '\0');
    for (std::size_t i = 0; i < 8; ++i)
      bytes[i] = static_cast<char>((header.size() >> (8 * i)) & 0xFF);
    return dir.write(name, bytes + header);
  };
  EXPECT_THROW(SafeTensors::open(with_header("list.safetensors", "[1, 2]")), InputError);
  EXPECT_THROW(SafeTensors::open(with_header("big.safetensors", "{\"x\": 1e400}")), InputError);
  // 2^62 float32 elements "fit" in 0 bytes when the byte count wraps around.
  EXPECT_THROW(
      SafeTensors::open(with_header(
          "wrap.safetensors",
          R"({"w": {"dtype": "F32", "shape": [4611686018427387904], "data_offsets": [0, 0]}})")),
      InputError);
  EXPECT_THROW(SafeTensors::open(with_header(
                   "neg.safetensors",
                   R"({"w": {"dtype": "F32", "shape": [-1, -1], "data_offsets": [0, 4]}})")),
               InputError);
}

// fuzz_config: "layer_norm_eps": 1e705 escaped as nlohmann's out_of_range ("internal error").
TEST(FuzzRegressions, AConfigNumberBeyondADoubleIsAnInputError) {
  test::TempDir dir;
  dir.write("config.json", R"({"projection_dim": 8, "text_config": {"layer_norm_eps": 1e705}})");
  try {
    load_clip_config(dir.path());
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("number out of range"), std::string::npos) << e.what();
  }
}

// fuzz_config: a config that is a bare number (or a section that is not an object) escaped as
// nlohmann's type_error.
TEST(FuzzRegressions, AConfigOfTheWrongShapeIsAnInputError) {
  for (const char* text : {"9", "[1, 2]", "\"config\""}) {
    test::TempDir dir;
    dir.write("config.json", text);
    EXPECT_THROW(load_clip_config(dir.path()), InputError) << text;
  }
  test::TempDir oc;
  oc.write("open_clip_config.json", R"({"model_cfg": 7})");
  EXPECT_THROW(load_clip_config(oc.path()), InputError);
}

// fuzz_image: a corrupt PNG leaked the pixel buffer (libpng's longjmp skipped its destructor).
TEST(FuzzRegressions, ACorruptPngIsAnInputError) {
  const auto file = kSource / "tests/fuzz/regressions/image/png-longjmp-leaked-pixel-buffer.png";
  EXPECT_THROW(decode_image(read_file(file), file.string()), InputError);
}

// fuzz_table: a table of only no-break spaces read the header of an empty record list.
TEST(FuzzRegressions, ATableOfNoBreakSpacesHasNoHeader) {
  const auto file = kSource / "tests/fuzz/regressions/table/only-no-break-spaces.txt";
  EXPECT_THROW(read_table(read_file(file), file.string()), InputError);
  EXPECT_THROW(read_table("\xC2\xA0\n\xC2\xA0\n", "t.txt"), InputError);
}

// fuzz_winogavil: a name list holding a number beyond a double (7E777...) escaped as nlohmann's
// out_of_range ("internal error", exit 1) instead of a bad cell.
TEST(FuzzRegressions, ANameListWithAHugeNumberIsNotAList) {
  EXPECT_FALSE(parse_name_list("[\"sea\", 7E7777]").has_value());
  const auto file =
      kSource / "tests/fuzz/regressions/winogavil/name-list-number-beyond-a-double.csv";
  EXPECT_THROW(parse_winogavil(read_file(file), file.string()), InputError);
}

}  // namespace
// fuzz_config (ViLT, family byte 2): "model_type": 0.0 threw nlohmann's type_error out of
// load_vilt_config (json::value with a string default); every family now reads model_type
// through read_model_config.
TEST(FuzzRegressions, AModelTypeThatIsNotAStringIsAnInputError) {
  const std::string found =
      read_file(kSource / "tests/fuzz/regressions/config/vilt-model-type-a-number.json");
  const std::string config = found.substr(1, found.find('\0') - 1);
  test::TempDir dir;
  dir.write("config.json", config);
  try {
    load_vilt_config(dir.path());
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("field 'model_type': not a ViLT checkpoint"),
              std::string::npos)
        << e.what();
  }
  for (const auto& load : std::vector<std::function<void(const std::filesystem::path&)>>{
           [](const auto& d) { (void)load_blip_config(d); },
           [](const auto& d) { (void)load_flava_config(d); },
           [](const auto& d) { (void)load_siglip_config(d); }}) {
    EXPECT_THROW(load(dir.path()), InputError);
  }
}

}  // namespace winokit
