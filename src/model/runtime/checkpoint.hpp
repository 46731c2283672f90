// Reading a checkpoint, the same way for every family: its JSON configuration files (every field
// checked against its range, every error naming the file and the field), its weights file, and
// the tensors a model is built from (from the checkpoint, or seeded random values).
//
//   const nlohmann::json j = detail::read_config_json(dir / "config.json");
//   detail::ConfigReader cfg(j, dir / "config.json");
//   detail::ConfigReader text = cfg.sub("text_config");
//   text.integer("hidden_size", c.text_hidden, 1, detail::kMaxConfigSize);   //
//   text_config.hidden_size text.positive("layer_norm_eps", c.text_eps); detail::CheckpointSource
//   src(detail::open_weights(detail::find_weights(dir))); std::vector<float> w =
//   src.get("text.embeddings.weight", {vocab, width});
//
// Internal to src/model.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "winokit/io/safetensors.hpp"

namespace winokit::detail {

// ---- configuration files ----

// Caps on what a configuration may ask for, far beyond any published checkpoint (widths of
// 1,024-4,096, a few dozen layers, vocabularies of 30k-256k, 224-768 pixels): a bigger value is a
// broken or hostile file, refused naming the field before anything is allocated.
constexpr std::int64_t kMaxConfigSize = 1 << 16;   // widths, layers, heads, text positions
constexpr std::int64_t kMaxConfigVocab = 1 << 20;  // vocabulary rows
constexpr std::int64_t kMaxConfigPixels = 2048;    // image edges, patch sides

// A JSON file read whole: InputError naming the file when it is not JSON (or, with
// `object`, not a JSON object); IoError when it cannot be read.
nlohmann::json read_config_json(const std::filesystem::path& file, bool object = true);

// `file`'s configuration, which must be a JSON object saying "model_type": `type`; InputError
// "not a LABEL checkpoint (model_type != TYPE)" otherwise.
nlohmann::json read_model_config(const std::filesystem::path& file, const std::string& type,
                                 const std::string& label);

// The fields of one JSON object of a configuration. Every read leaves the default in place when
// the field is absent or null (transformers' convention: null means the default), and throws
// InputError naming the file and the field's path ("text_config.hidden_size") otherwise.
class ConfigReader {
 public:
  ConfigReader(const nlohmann::json& json, std::filesystem::path file, std::string prefix = {});

  // The object under the first of `keys` present and not null ("text_config", then
  // "text_config_dict"); an empty object when none is. InputError when it is not an object.
  ConfigReader sub(std::initializer_list<const char*> keys) const;
  ConfigReader sub(const char* key) const { return sub({key}); }

  bool has(const char* key) const;  // present and not null
  // An integer in [lo, hi]: "expected an integer from LO to HI".
  void integer(const char* key, int& out, std::int64_t lo, std::int64_t hi) const;
  // A number > 0: "expected a positive number".
  void positive(const char* key, double& out) const;
  // Any number: "expected a number".
  void number(const char* key, double& out) const;
  // true or false: "expected true or false".
  void flag(const char* key, bool& out) const;
  // A string: "expected a string".
  void text(const char* key, std::string& out) const;
  // A string among `allowed`: "'VALUE' is not supported (A, B, C)".
  void one_of(const char* key, std::string& out, const std::vector<std::string>& allowed) const;
  // One number for the three channels, or three numbers: "expected 3 numbers".
  void triple(const char* key, std::array<float, 3>& out) const;

  // InputError on this object's `key` (its path in the file).
  [[noreturn]] void fail(const std::string& key, const std::string& message) const;
  std::string path(const std::string& key) const { return prefix_ + key; }
  const nlohmann::json& json() const { return *json_; }
  const std::filesystem::path& file() const { return file_; }

 private:
  const nlohmann::json* value(const char* key) const;  // nullptr when absent or null
  const nlohmann::json* json_;
  std::filesystem::path file_;
  std::string prefix_;
};

// The fields of a transformers image processor of fixed output size (BlipImageProcessor,
// SiglipImageProcessor, ...) that a preprocessor_config.json may set: what it does not list
// keeps the value given. `size` is {"height": H, "width": W} or one number N (N x N), each edge
// from 1 to `max_edge`.
struct ImageProcessorFields {
  bool do_resize = true, do_rescale = true, do_normalize = true;
  int height = 224, width = 224;
  int resample = 3;  // PIL's numbering: 2 bilinear, 3 bicubic
  double rescale_factor = 1.0 / 255.0;
  std::array<float, 3> mean = {0.5f, 0.5f, 0.5f}, std = {0.5f, 0.5f, 0.5f};
};
void read_image_processor(const ConfigReader& q, ImageProcessorFields& fields,
                          std::int64_t max_edge);
// An image size field `key`: {"height": H, "width": W} or one number N (N x N), each edge from
// 1 to `max_edge`; left as it is when absent or null.
void read_image_size(const ConfigReader& q, const char* key, int& height, int& width,
                     std::int64_t max_edge);

// ---- weights ----

// Hugging Face's weight files, in the order looked for: one safetensors file, a sharded index,
// a PyTorch zip checkpoint.
const std::vector<std::string>& hf_weight_files();

// The first of `names` that is a regular file in `dir`; IoError naming the folder and the names
// when none is.
std::filesystem::path find_weights(const std::filesystem::path& dir,
                                   const std::vector<std::string>& names = hf_weight_files());

// A .bin / .pt file through the restricted unpickler (SafeTensors::open_torch), anything else as
// safetensors (a .safetensors file or a sharded index).
SafeTensors open_weights(const std::filesystem::path& file);

// Where a model's tensors come from while it is built.
class TensorSource {
 public:
  virtual ~TensorSource() = default;
  // The tensor as float32; InputError naming the tensor when it is absent or its shape differs
  // from `shape`.
  virtual std::vector<float> get(const std::string& name,
                                 const std::vector<std::int64_t>& shape) = 0;
  // Whether the tensor is there (optional heads, layouts told apart by a tensor's presence).
  virtual bool has(const std::string& name) const = 0;
};

// A checkpoint's tensors, each under `prefix` + name; a tensor's mapped pages are given back
// once it is converted (the float copy, and soon the packed one, is all that stays resident).
class CheckpointSource final : public TensorSource {
 public:
  explicit CheckpointSource(SafeTensors tensors, std::string prefix = {});
  std::vector<float> get(const std::string& name, const std::vector<std::int64_t>& shape) override;
  bool has(const std::string& name) const override;
  const SafeTensors& tensors() const { return tensors_; }
  void set_prefix(std::string prefix) { prefix_ = std::move(prefix); }

 private:
  SafeTensors tensors_;
  std::string prefix_;
};

// How one random tensor is drawn: uniform values with the variance of N(offset, scale^2)
// (offset + sqrt(3) scale (2u - 1), u from Rng(derive_seed(seed, name))), or every element
// `constant`.
struct RandomInit {
  double offset = 0.0;
  double scale = 0.02;
  std::optional<float> constant;
};
// The initialisation most transformers use: LayerNorm gains (a name containing one of
// `gain_markers`, not ending in "bias") 1 + 0.02-scale noise, biases 0.01, the rest 0.02.
RandomInit transformer_init(const std::string& name, const std::vector<std::string>& gain_markers);

// Seeded random tensors (benchmarks, the demo, the determinism tests): the same name and seed
// give the same values on every machine. `init` says how each tensor is drawn; `has` which
// optional tensors exist (default: all).
class RandomSource final : public TensorSource {
 public:
  using Init =
      std::function<RandomInit(const std::string& name, const std::vector<std::int64_t>& shape)>;
  RandomSource(std::uint64_t seed, Init init,
               std::function<bool(const std::string&)> has = nullptr);
  std::vector<float> get(const std::string& name, const std::vector<std::int64_t>& shape) override;
  bool has(const std::string& name) const override;

 private:
  std::uint64_t seed_;
  Init init_;
  std::function<bool(const std::string&)> has_;
};

}  // namespace winokit::detail
