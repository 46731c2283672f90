// Helpers for the unit tests: temporary folders and small datasets built in memory.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "winokit/data/winoground.hpp"

namespace winokit::test {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "winokit-test-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path write(const std::string& name, const std::string& content) const {
    auto p = path_ / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
    return p;
  }

 private:
  std::filesystem::path path_;
};

// One examples.jsonl line.
inline std::string example_line(int id, const std::string& tag = "Noun",
                                const std::string& secondary = "",
                                const std::string& collapsed = "Object", int preds = 1) {
  return "{\"id\": " + std::to_string(id) +
         ", \"caption_0\": \"a b c\", \"caption_1\": \"c b a\"," + " \"image_0\": \"ex_" +
         std::to_string(id) + "_img_0\", \"image_1\": \"ex_" + std::to_string(id) +
         "_img_1\", \"tag\": \"" + tag + "\", \"secondary_tag\": \"" + secondary +
         "\", \"num_main_preds\": " + std::to_string(preds) + ", \"collapsed_tag\": \"" +
         collapsed + "\"}\n";
}

inline WinogroundDataset dataset_of(int n) {
  std::string text;
  for (int i = 0; i < n; ++i)
    text += example_line(i);
  return parse_examples(text, "examples.jsonl");
}

}  // namespace winokit::test
