// What the generative families' golden tests share: a temporary copy of a fixture checkpoint
// folder (to break one file of it and check that the error names the file, the field or the
// tensor), and the checks of VQAScore's cached image prefix.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/lm/llama_model.hpp"
#include "winokit/core/error.hpp"
#include "winokit/io/files.hpp"
#include "winokit/model/compute.hpp"

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

// The captions' scores against an image's prefix together and one at a time on one thread give
// the same bits; so do the prefix's cache continued by a question and one forward over the whole
// prompt (the image features spliced in as the model does).
template <class Model, class Tiles>
void expect_cached_prefix_is_exact(const Model& m, const Tiles& tiles,
                                   const std::vector<std::string>& captions) {
  const KvCache cache = m.image_prefix(tiles);
  const std::vector<double> together = m.answer_probabilities(cache, captions);
  const int threads = compute_threads();
  set_compute_threads(1);
  const KvCache again = m.image_prefix(tiles);
  for (std::size_t i = 0; i < captions.size(); ++i) {
    const std::vector<double> alone = m.answer_probabilities(again, {captions[i]});
    EXPECT_EQ(0, std::memcmp(&alone[0], &together[i], sizeof(double))) << captions[i];
  }
  set_compute_threads(threads);
  std::vector<int> ids = m.prefix_ids(tiles);
  const std::vector<int> q = m.question_ids(captions.back());
  const std::size_t prefix_len = ids.size();
  ids.insert(ids.end(), q.begin(), q.end());
  std::vector<float> x = m.text_model().embed(ids);
  const std::vector<float> f = m.image_features(tiles);
  const std::size_t h = static_cast<std::size_t>(m.config().text.hidden);
  std::size_t next = 0;
  for (std::size_t i = 0; i < prefix_len; ++i) {
    if (ids[i] == m.config().image_token_id) std::memcpy(&x[i * h], &f[h * next++], h * 4);
  }
  EXPECT_EQ(next * h, f.size());
  const std::vector<float> full =
      m.text_model().forward({{x.data(), static_cast<int>(ids.size()), nullptr, nullptr}});
  const std::vector<float> cont = m.text_model().forward(
      {{x.data() + prefix_len * h, static_cast<int>(q.size()), &cache, nullptr}});
  ASSERT_EQ(full.size(), cont.size());
  EXPECT_EQ(0, std::memcmp(full.data(), cont.data(), full.size() * sizeof(float)));
}

}  // namespace winokit::test_support
