#include "winokit/io/safetensors.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "winokit/core/error.hpp"
#include "winokit/core/hash.hpp"
#include "winokit/io/files.hpp"

namespace winokit {

namespace fs = std::filesystem;
using nlohmann::json;

const char* to_string(DType d) {
  switch (d) {
    case DType::F32:
      return "F32";
    case DType::F16:
      return "F16";
    case DType::BF16:
      return "BF16";
    case DType::F64:
      return "F64";
    case DType::I64:
      return "I64";
    case DType::I32:
      return "I32";
    case DType::I16:
      return "I16";
    case DType::I8:
      return "I8";
    case DType::U8:
      return "U8";
    case DType::Bool:
      return "BOOL";
  }
  return "?";
}

std::size_t dtype_size(DType d) {
  switch (d) {
    case DType::F64:
    case DType::I64:
      return 8;
    case DType::F32:
    case DType::I32:
      return 4;
    case DType::F16:
    case DType::BF16:
    case DType::I16:
      return 2;
    default:
      return 1;
  }
}

std::int64_t TensorView::numel() const {
  std::int64_t n = 1;
  for (auto d : shape)
    n *= d;
  return n;
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  std::uint32_t exponent = (h >> 10) & 0x1Fu;
  std::uint32_t mantissa = h & 0x3FFu;
  std::uint32_t bits;
  if (exponent == 0) {
    if (mantissa == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      exponent = 127 - 15 + 1;
      while ((mantissa & 0x400u) == 0) {
        mantissa <<= 1;
        --exponent;
      }
      mantissa &= 0x3FFu;
      bits = sign | (exponent << 23) | (mantissa << 13);
    }
  } else if (exponent == 0x1F) {
    bits = sign | 0x7F800000u | (mantissa << 13);
  } else {
    bits = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

float bfloat16_to_float(std::uint16_t b) {
  std::uint32_t bits = static_cast<std::uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

struct SafeTensors::Mapping {
  void* base = MAP_FAILED;
  std::size_t size = 0;
  ~Mapping() {
    if (base != MAP_FAILED) ::munmap(base, size);
  }
};

SafeTensors::SafeTensors() = default;
SafeTensors::SafeTensors(SafeTensors&&) noexcept = default;
SafeTensors& SafeTensors::operator=(SafeTensors&&) noexcept = default;
SafeTensors::~SafeTensors() = default;

namespace {

DType parse_dtype(const std::string& s, const Location& where) {
  static const std::map<std::string, DType> kTypes = {
      {"F32", DType::F32}, {"F16", DType::F16},  {"BF16", DType::BF16}, {"F64", DType::F64},
      {"I64", DType::I64}, {"I32", DType::I32},  {"I16", DType::I16},   {"I8", DType::I8},
      {"U8", DType::U8},   {"BOOL", DType::Bool}};
  auto it = kTypes.find(s);
  if (it == kTypes.end()) throw InputError(where, "unsupported dtype " + s);
  return it->second;
}

constexpr std::uint64_t kMaxHeader = 100ull << 20;  // the format's own limit is 100 MB

}  // namespace

SafeTensors SafeTensors::open(const fs::path& path) {
  SafeTensors st;
  std::vector<fs::path> shards;
  std::map<std::string, std::string> expected_file;  // from the index
  if (path.extension() == ".json") {
    std::string text = read_file(path);
    json index;
    try {
      index = json::parse(text);
    } catch (const json::parse_error& e) {
      throw InputError({path.string(), 0, ""}, std::string("malformed JSON: ") + e.what());
    }
    auto map = index.find("weight_map");
    if (map == index.end() || !map->is_object()) {
      throw InputError({path.string(), 0, "weight_map"}, "missing or not an object");
    }
    std::set<std::string> names;
    for (auto it = map->begin(); it != map->end(); ++it) {
      if (!it.value().is_string()) {
        throw InputError({path.string(), 0, "weight_map." + it.key()}, "expected a file name");
      }
      names.insert(it.value().get<std::string>());
      expected_file[it.key()] = it.value().get<std::string>();
    }
    for (const auto& n : names)
      shards.push_back(path.parent_path() / n);
  } else {
    shards.push_back(path);
  }
  for (const auto& shard : shards) {
    const std::string file = shard.string();
    int fd = ::open(shard.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      throw IoError(file + ": cannot open: " + std::strerror(errno),
                    errno == ENOENT ? "is the checkpoint complete?" : "");
    }
    struct stat sb {};
    if (::fstat(fd, &sb) != 0) {
      ::close(fd);
      throw IoError(file + ": cannot stat");
    }
    auto mapping = std::make_unique<Mapping>();
    mapping->size = static_cast<std::size_t>(sb.st_size);
    if (mapping->size < 8) {
      ::close(fd);
      throw InputError({file, 0, ""},
                       "truncated safetensors file (" + std::to_string(mapping->size) + " bytes)");
    }
    mapping->base = ::mmap(nullptr, mapping->size, PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (mapping->base == MAP_FAILED) throw IoError(file + ": mmap failed: " + std::strerror(errno));
    const auto* bytes = static_cast<const std::uint8_t*>(mapping->base);
    std::uint64_t header_len = 0;
    std::memcpy(&header_len, bytes, 8);  // little-endian, as on every supported platform
    if (header_len > kMaxHeader || 8 + header_len > mapping->size) {
      throw InputError({file, 0, ""},
                       "corrupt safetensors header length " + std::to_string(header_len));
    }
    json header;
    try {
      header = json::parse(std::string_view(reinterpret_cast<const char*>(bytes + 8), header_len));
    } catch (const json::exception& e) {  // parse errors, and numbers beyond a double
      throw InputError({file, 0, "header"}, std::string("malformed JSON: ") + e.what());
    }
    // Found by fuzz_safetensors: a header that is a number or a list made key() throw.
    if (!header.is_object()) throw InputError({file, 0, "header"}, "not a JSON object");
    const std::size_t data_start = 8 + header_len;
    const std::size_t data_size = mapping->size - data_start;
    for (auto it = header.begin(); it != header.end(); ++it) {
      if (it.key() == "__metadata__") {
        // The format says string values; anything else is skipped rather than refused, so a
        // checkpoint written by a lax tool still loads.
        if (!it.value().is_object()) continue;
        for (auto m = it.value().begin(); m != it.value().end(); ++m) {
          if (m.value().is_string()) st.metadata_[m.key()] = m.value().get<std::string>();
        }
        continue;
      }
      Location where{file, 0, it.key()};
      const json& info = it.value();
      try {
        TensorView t;
        t.name = it.key();
        t.file = file;
        t.dtype = parse_dtype(info.at("dtype").get<std::string>(), where);
        t.shape = info.at("shape").get<std::vector<std::int64_t>>();
        std::int64_t elements = 1;
        for (auto d : t.shape) {
          if (d < 0 || __builtin_mul_overflow(elements, d, &elements)) {
            throw InputError(where, "shape " + shape_text(t.shape) + " is not a valid size");
          }
        }
        auto offsets = info.at("data_offsets").get<std::vector<std::uint64_t>>();
        if (offsets.size() != 2 || offsets[0] > offsets[1] || offsets[1] > data_size) {
          throw InputError(where, "data offsets outside the file (truncated download?)");
        }
        t.bytes = offsets[1] - offsets[0];
        std::uint64_t need = 0;
        if (__builtin_mul_overflow(static_cast<std::uint64_t>(elements),
                                   static_cast<std::uint64_t>(dtype_size(t.dtype)), &need) ||
            need != t.bytes) {
          throw InputError(where, "byte size " + std::to_string(t.bytes) + " does not match " +
                                      to_string(t.dtype) + " " + shape_text(t.shape));
        }
        t.data = bytes + data_start + offsets[0];
        if (st.tensors_.count(t.name)) throw InputError(where, "tensor appears in two shards");
        st.tensors_.emplace(t.name, std::move(t));
      } catch (const json::exception& e) {
        throw InputError(where, std::string("malformed tensor entry: ") + e.what());
      }
    }
    st.files_.push_back(file);
    st.mappings_.push_back(std::move(mapping));
  }
  for (const auto& [name, shard] : expected_file) {
    if (!st.tensors_.count(name)) {
      throw InputError({path.string(), 0, name}, "listed in the index but absent from " + shard);
    }
  }
  return st;
}

const TensorView* SafeTensors::find(const std::string& name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

const TensorView& SafeTensors::get(const std::string& name,
                                   const std::vector<std::int64_t>& expected) const {
  const TensorView* t = find(name);
  std::string where = files_.size() == 1 ? files_[0] : std::to_string(files_.size()) + " shards";
  if (t == nullptr) {
    throw InputError(
        {where, 0, name},
        "tensor missing" +
            (expected.empty() ? std::string() : " (expected shape " + shape_text(expected) + ")"),
        "is this checkpoint the layout its config says?");
  }
  if (!expected.empty() && t->shape != expected) {
    throw InputError({t->file, 0, name},
                     "expected shape " + shape_text(expected) + ", found " + shape_text(t->shape));
  }
  return *t;
}

std::vector<float> SafeTensors::to_float(const std::string& name,
                                         const std::vector<std::int64_t>& expected) const {
  const TensorView& t = get(name, expected);
  const auto n = static_cast<std::size_t>(t.numel());
  std::vector<float> out(n);
  switch (t.dtype) {
    case DType::F32:
      if (n > 0) std::memcpy(out.data(), t.data, n * 4);  // an empty tensor may have no data
      break;
    case DType::F16:
    case DType::BF16:
      for (std::size_t i = 0; i < n; ++i) {
        std::uint16_t v;
        std::memcpy(&v, t.data + 2 * i, 2);
        out[i] = t.dtype == DType::F16 ? half_to_float(v) : bfloat16_to_float(v);
      }
      break;
    case DType::F64:
      for (std::size_t i = 0; i < n; ++i) {
        double v;
        std::memcpy(&v, t.data + 8 * i, 8);
        out[i] = static_cast<float>(v);
      }
      break;
    default:
      throw InputError({t.file, 0, name}, std::string("expected a floating-point tensor, found ") +
                                              to_string(t.dtype));
  }
  return out;
}

std::string SafeTensors::content_hash() const {
  if (mappings_.empty()) return sha256_file(files_.front());
  std::string digests;
  for (std::size_t i = 0; i < mappings_.size(); ++i) {
    digests += sha256_hex(
        std::string_view(static_cast<const char*>(mappings_[i]->base), mappings_[i]->size));
  }
  return mappings_.size() == 1 ? digests : sha256_hex(digests);
}

std::map<std::string, std::pair<std::vector<std::int64_t>, std::vector<float>>>
read_safetensors_f32(const fs::path& path) {
  SafeTensors st = SafeTensors::open(path);
  std::map<std::string, std::pair<std::vector<std::int64_t>, std::vector<float>>> out;
  for (const auto& [name, t] : st.tensors())
    out[name] = {t.shape, st.to_float(name)};
  return out;
}

std::string encode_safetensors_f32(
    const std::map<std::string, std::pair<std::vector<std::int64_t>, std::vector<float>>>& tensors,
    const std::map<std::string, std::string>& metadata) {
  json header = json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::size_t offset = 0;
  for (const auto& [name, t] : tensors) {
    const std::size_t bytes = t.second.size() * 4;
    header[name] = {
        {"dtype", "F32"}, {"shape", t.first}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string h = header.dump();
  while ((8 + h.size()) % 8 != 0)
    h.push_back(' ');
  std::string out(8, '\0');
  const std::uint64_t len = h.size();
  std::memcpy(out.data(), &len, 8);
  out += h;
  for (const auto& [name, t] : tensors) {
    out.append(reinterpret_cast<const char*>(t.second.data()), t.second.size() * 4);
  }
  return out;
}

}  // namespace winokit
