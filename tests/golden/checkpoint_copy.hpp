// A temporary copy of a fixture checkpoint folder, for tests that break one file of it and check
// that the error names the file, the field or the tensor.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "winokit/core/error.hpp"
#include "winokit/io/files.hpp"

namespace winokit::test_support {

class CheckpointCopy {
 public:
  explicit CheckpointCopy(const std::filesystem::path& from) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "winokit-ckpt-XXXXXX").string();
    dir_ = ::mkdtemp(tmpl.data());
    std::filesystem::copy(from, dir_, std::filesystem::copy_options::recursive);
  }
  ~CheckpointCopy() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  CheckpointCopy(const CheckpointCopy&) = delete;
  CheckpointCopy& operator=(const CheckpointCopy&) = delete;
  void edit_json(const std::string& file, const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json j = nlohmann::json::parse(read_file(dir_ / file));
    edit(j);
    write(file, j.dump());
  }
  void write(const std::string& file, const std::string& bytes) {
    std::ofstream(dir_ / file, std::ios::binary) << bytes;
  }
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
};

// The message of the InputError `load` throws ("" when it throws none).
inline std::string input_error(const std::function<void()>& load) {
  try {
    load();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace winokit::test_support
