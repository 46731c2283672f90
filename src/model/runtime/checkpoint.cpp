#include "model/runtime/checkpoint.hpp"

#include <algorithm>
#include <cmath>

#include "winokit/core/error.hpp"
#include "winokit/core/rng.hpp"
#include "winokit/io/files.hpp"

namespace fs = std::filesystem;

namespace winokit::detail {

nlohmann::json read_config_json(const fs::path& file, bool object) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_file(file));
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range (1e400)
    throw InputError({file.string(), 0, ""}, std::string("invalid JSON: ") + e.what());
  }
  if (object && !j.is_object()) throw InputError({file.string(), 0, ""}, "expected a JSON object");
  return j;
}

nlohmann::json read_model_config(const fs::path& file, const std::string& type,
                                 const std::string& label) {
  nlohmann::json j = read_config_json(file, false);
  const auto it = j.is_object() ? j.find("model_type") : j.end();
  if (it == j.end() || !it->is_string() || it->get<std::string>() != type) {
    throw InputError({file.string(), 0, "model_type"},
                     "not a " + label + " checkpoint (model_type != " + type + ")");
  }
  return j;
}

ConfigReader::ConfigReader(const nlohmann::json& json, fs::path file, std::string prefix)
    : json_(&json), file_(std::move(file)), prefix_(std::move(prefix)) {}

const nlohmann::json* ConfigReader::value(const char* key) const {
  if (!json_->is_object()) return nullptr;
  const auto it = json_->find(key);
  if (it == json_->end() || it->is_null()) return nullptr;
  return &*it;
}

bool ConfigReader::has(const char* key) const {
  return value(key) != nullptr;
}

void ConfigReader::fail(const std::string& key, const std::string& message) const {
  throw InputError({file_.string(), 0, path(key)}, message);
}

ConfigReader ConfigReader::sub(std::initializer_list<const char*> keys) const {
  static const nlohmann::json kEmpty = nlohmann::json::object();
  for (const char* key : keys) {
    const nlohmann::json* v = value(key);
    if (v == nullptr) continue;
    if (!v->is_object()) fail(key, "expected an object");
    return ConfigReader(*v, file_, path(key) + ".");
  }
  return ConfigReader(kEmpty, file_, path(*keys.begin()) + ".");
}

void ConfigReader::integer(const char* key, int& out, std::int64_t lo, std::int64_t hi) const {
  const nlohmann::json* v = value(key);
  if (v == nullptr) return;
  if (!v->is_number_integer() || v->get<std::int64_t>() < lo || v->get<std::int64_t>() > hi ||
      (v->is_number_unsigned() && v->get<std::uint64_t>() > static_cast<std::uint64_t>(hi))) {
    fail(key, "expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
  }
  out = static_cast<int>(v->get<std::int64_t>());
}

void ConfigReader::positive(const char* key, double& out) const {
  const nlohmann::json* v = value(key);
  if (v == nullptr) return;
  if (!v->is_number() || !(v->get<double>() > 0)) fail(key, "expected a positive number");
  out = v->get<double>();
}

void ConfigReader::number(const char* key, double& out) const {
  const nlohmann::json* v = value(key);
  if (v == nullptr) return;
  if (!v->is_number()) fail(key, "expected a number");
  out = v->get<double>();
}

void ConfigReader::flag(const char* key, bool& out) const {
  const nlohmann::json* v = value(key);
  if (v == nullptr) return;
  if (!v->is_boolean()) fail(key, "expected true or false");
  out = v->get<bool>();
}

void ConfigReader::text(const char* key, std::string& out) const {
  const nlohmann::json* v = value(key);
  if (v == nullptr) return;
  if (!v->is_string()) fail(key, "expected a string");
  out = v->get<std::string>();
}

void ConfigReader::one_of(const char* key, std::string& out,
                          const std::vector<std::string>& allowed) const {
  text(key, out);
  if (std::find(allowed.begin(), allowed.end(), out) != allowed.end()) return;
  std::string list;
  for (const std::string& a : allowed)
    list += (list.empty() ? "" : ", ") + a;
  fail(key, "'" + out + "' is not supported (" + list + ")");
}

void ConfigReader::triple(const char* key, std::array<float, 3>& out) const {
  const nlohmann::json* v = value(key);
  if (v == nullptr) return;
  if (v->is_number()) {
    out.fill(v->get<float>());
  } else if (v->is_array() && v->size() == 3 && (*v)[0].is_number() && (*v)[1].is_number() &&
             (*v)[2].is_number()) {
    for (std::size_t k = 0; k < 3; ++k)
      out[k] = (*v)[k].get<float>();
  } else {
    fail(key, "expected 3 numbers");
  }
}

void read_image_size(const ConfigReader& q, const char* key, int& height, int& width,
                     std::int64_t max_edge) {
  if (!q.has(key)) return;
  const nlohmann::json& size = q.json()[key];
  if (size.is_object() && size.contains("height") && size.contains("width")) {
    const ConfigReader s = q.sub(key);
    s.integer("height", height, 1, max_edge);
    s.integer("width", width, 1, max_edge);
  } else if (size.is_number_integer()) {
    q.integer(key, height, 1, max_edge);
    width = height;
  } else {
    q.fail(key, "expected {\"height\": H, \"width\": W}");
  }
}

void read_image_processor(const ConfigReader& q, ImageProcessorFields& f, std::int64_t max_edge) {
  q.flag("do_resize", f.do_resize);
  q.flag("do_rescale", f.do_rescale);
  q.flag("do_normalize", f.do_normalize);
  read_image_size(q, "size", f.height, f.width, max_edge);
  q.integer("resample", f.resample, 0, 5);
  q.number("rescale_factor", f.rescale_factor);
  q.triple("image_mean", f.mean);
  q.triple("image_std", f.std);
}

const std::vector<std::string>& hf_weight_files() {
  static const std::vector<std::string> names = {
      "model.safetensors", "model.safetensors.index.json", "pytorch_model.bin"};
  return names;
}

fs::path find_weights(const fs::path& dir, const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    if (fs::is_regular_file(dir / name)) return dir / name;
  }
  std::string list;
  for (std::size_t i = 0; i < names.size(); ++i)
    list += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  throw IoError("no weights in " + dir.string() + " (" + list + ")");
}

SafeTensors open_weights(const fs::path& file) {
  const std::string ext = file.extension().string();
  return ext == ".bin" || ext == ".pt" ? SafeTensors::open_torch(file) : SafeTensors::open(file);
}

CheckpointSource::CheckpointSource(SafeTensors tensors, std::string prefix)
    : tensors_(std::move(tensors)), prefix_(std::move(prefix)) {}

std::vector<float> CheckpointSource::get(const std::string& name,
                                         const std::vector<std::int64_t>& shape) {
  std::vector<float> values = tensors_.to_float(prefix_ + name, shape);
  tensors_.release(prefix_ + name);
  return values;
}

bool CheckpointSource::has(const std::string& name) const {
  return tensors_.find(prefix_ + name) != nullptr;
}

RandomInit transformer_init(const std::string& name, const std::vector<std::string>& gain_markers) {
  const bool bias = name.size() >= 4 && name.compare(name.size() - 4, 4, "bias") == 0;
  bool gain = false;
  for (const std::string& m : gain_markers)
    gain = gain || name.find(m) != std::string::npos;
  return {gain && !bias ? 1.0 : 0.0, bias ? 0.01 : 0.02, std::nullopt};
}

RandomSource::RandomSource(std::uint64_t seed, Init init,
                           std::function<bool(const std::string&)> has)
    : seed_(seed), init_(std::move(init)), has_(std::move(has)) {}

std::vector<float> RandomSource::get(const std::string& name,
                                     const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (auto d : shape)
    n *= d;
  const RandomInit init = init_(name, shape);
  std::vector<float> v(static_cast<std::size_t>(n));
  if (init.constant) {
    std::fill(v.begin(), v.end(), *init.constant);
    return v;
  }
  Rng rng(derive_seed(seed_, name));
  const double half_width = std::sqrt(3.0) * init.scale;
  for (auto& x : v)
    x = static_cast<float>(init.offset + half_width * (2.0 * rng.uniform() - 1.0));
  return v;
}

bool RandomSource::has(const std::string& name) const {
  return has_ == nullptr || has_(name);
}

}  // namespace winokit::detail
