// ViLT configurations (winokit/model/vilt_model.hpp): sizes capped by named limits, refused
// with the field named before anything is allocated (issue 23, item 5: shortest_edge 12,000 was
// killed at 6 GiB, 100,000 ran out of memory with exit 1).
#include <gtest/gtest.h>

#include <string>

#include "../test_util.hpp"
#include "model/families/vilt/vilt_model.hpp"
#include "winokit/core/error.hpp"

namespace winokit {
namespace {

std::string vilt_config_error(const test::TempDir& dir) {
  try {
    load_vilt_config(dir.path());
  } catch (const InputError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(ViltConfig, ImageSizesAreCapped) {
  test::TempDir dir;
  dir.write("config.json", R"({"model_type": "vilt"})");
  for (const char* edge : {"12000", "4000", "100000", "18446744073709551615", "0", "-384"}) {
    dir.write("preprocessor_config.json",
              std::string(R"({"size": {"shortest_edge": )") + edge + "}}");
    const std::string e = vilt_config_error(dir);
    EXPECT_NE(e.find("field 'size.shortest_edge': expected an integer from 1 to 1536"),
              std::string::npos)
        << edge << ": " << e;
  }
  dir.write("preprocessor_config.json", R"({"size": {"shortest_edge": 384}, "size_divisor": 32})");
  EXPECT_EQ(load_vilt_config(dir.path()).shortest_edge, 384);
}

TEST(ViltConfig, ModelSizesAreCapped) {
  test::TempDir dir;
  for (const char* field :
       {"hidden_size", "num_hidden_layers", "intermediate_size", "image_size"}) {
    dir.write("config.json",
              std::string(R"({"model_type": "vilt", ")") + field + R"(": 1099511627776})");
    const std::string e = vilt_config_error(dir);
    EXPECT_NE(e.find(std::string("field '") + field + "': expected an integer from 1 to"),
              std::string::npos)
        << e;
  }
}

}  // namespace
}  // namespace winokit
