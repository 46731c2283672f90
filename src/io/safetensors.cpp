#include "winokit/io/safetensors.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include <array>
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
    } catch (const json::exception& e) {  // parse_error, or out_of_range (1e400)
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
    // A shard is a plain file name in the index's folder: never a path that leaves it (an
    // absolute name, "..", a subfolder), so the index cannot make us open (and report the size
    // of) files elsewhere.
    for (const auto& n : names) {
      if (n.empty() || n == "." || n == ".." || n.find('/') != std::string::npos ||
          n.find('\\') != std::string::npos || n.find('\0') != std::string::npos) {
        throw InputError({path.string(), 0, "weight_map"},
                         "shard '" + n + "' is not a file name inside the model folder");
      }
      shards.push_back(path.parent_path() / n);
    }
  } else {
    shards.push_back(path);
  }
  for (const auto& shard : shards) {
    const std::string file = shard.string();
    // O_NONBLOCK: opening a FIFO must not wait for a writer (it is then refused below).
    int fd = ::open(shard.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
      throw IoError(file + ": cannot open: " + std::strerror(errno),
                    errno == ENOENT ? "is the checkpoint complete?" : "");
    }
    struct stat sb {};
    if (::fstat(fd, &sb) != 0) {
      ::close(fd);
      throw IoError(file + ": cannot stat");
    }
    if (!S_ISREG(sb.st_mode)) {
      ::close(fd);
      throw IoError(file + ": not a regular file");
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

std::string SafeTensors::content_hash(const fs::path& index_dir) const {
  if (files_.size() == 1) return remembered_sha256_file(files_.front(), index_dir);
  std::string digests;
  for (const auto& file : files_)
    digests += remembered_sha256_file(file, index_dir);
  return sha256_hex(digests);
}

void SafeTensors::release(const std::string& name) const {
  const TensorView* t = find(name);
  if (t == nullptr || t->bytes == 0) return;
  static const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGE_SIZE));
  for (const auto& m : mappings_) {
    const auto base = reinterpret_cast<std::uintptr_t>(m->base);
    const auto begin = reinterpret_cast<std::uintptr_t>(t->data);
    if (begin < base || begin >= base + m->size) continue;
    // Whole pages around the tensor: a page shared with a neighbour is simply read again from
    // the file when the neighbour is converted (the mapping is private and never written).
    const std::uintptr_t first = begin / page * page;
    const std::uintptr_t last = std::min(base + m->size, begin + t->bytes);
    ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
    return;
  }
}

std::string stream_sha256_file(const fs::path& path) {
  const std::string file = path.string();
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw IoError(file + ": cannot open: " + std::strerror(errno));
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) {
    ::close(fd);
    throw Error("sha256: OpenSSL digest failed");
  }
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  constexpr std::size_t kChunk = std::size_t{1} << 20;
  std::vector<unsigned char> buffer(kChunk);
  for (;;) {
    const ssize_t got = ::read(fd, buffer.data(), buffer.size());
    if (got < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      throw IoError(file + ": read failed: " + std::strerror(err));
    }
    if (got == 0) break;
    EVP_DigestUpdate(ctx.get(), buffer.data(), static_cast<std::size_t>(got));
  }
  ::close(fd);
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(ctx.get(), digest.data(), &length) != 1) {
    throw Error("sha256: OpenSSL digest failed");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < length; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 0xF]);
  }
  return out;
}

namespace {

// What identifies one version of a file without reading it.
json file_identity(const fs::path& path, const struct stat& sb) {
  return {
      {"path", path.string()},
      {"size", static_cast<std::int64_t>(sb.st_size)},
      {"mtime_ns", static_cast<std::int64_t>(sb.st_mtim.tv_sec) * 1000000000 + sb.st_mtim.tv_nsec},
      {"ctime_ns", static_cast<std::int64_t>(sb.st_ctim.tv_sec) * 1000000000 + sb.st_ctim.tv_nsec},
      {"inode", static_cast<std::uint64_t>(sb.st_ino)},
      {"device", static_cast<std::uint64_t>(sb.st_dev)}};
}

constexpr std::size_t kMaxIndexEntry = 64 * 1024;

}  // namespace

std::string remembered_sha256_file(const fs::path& path, const fs::path& index_dir) {
  if (index_dir.empty()) return stream_sha256_file(path);
  std::error_code ec;
  const fs::path absolute = fs::absolute(path, ec).lexically_normal();
  struct stat before {};
  if (ec || ::stat(absolute.c_str(), &before) != 0) return stream_sha256_file(path);
  const json identity = file_identity(absolute, before);
  const fs::path entry = index_dir / (sha256_hex(absolute.string()).substr(0, 32) + ".json");
  try {
    const std::string text = read_text_file(entry, {kMaxIndexEntry, 0});
    const json remembered = json::parse(text);
    const auto& digest = remembered.at("sha256");
    if (remembered.at("file") == identity && digest.is_string() &&
        digest.get<std::string>().size() == 64) {
      return digest.get<std::string>();
    }
  } catch (const std::exception&) {
    // absent, unreadable or malformed: hashed again below
  }
  const std::string digest = stream_sha256_file(path);
  struct stat after {};
  // A file that changed while it was hashed is not remembered.
  if (::stat(absolute.c_str(), &after) == 0 && file_identity(absolute, after) == identity) {
    try {
      fs::create_directories(index_dir, ec);
      if (std::error_code again; !ec || fs::is_directory(index_dir, again)) {
        // Shared by every process of a sharded run: a temporary of its own, then a rename.
        write_file_shared(entry, json{{"file", identity}, {"sha256", digest}}.dump(2) + "\n");
      }
    } catch (const IoError&) {
      // best effort, as the embedding cache
    }
  }
  return digest;
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
