#include "winokit/io/npy.hpp"

#include <cstring>
#include <limits>

#include "winokit/core/error.hpp"
#include "winokit/io/files.hpp"
#include "winokit/io/safetensors.hpp"

namespace winokit {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicSize = 6;

// The value text of `key` in the header dict ("'descr': '<f4'" -> "'<f4'").
std::string dict_value(const std::string& header, const std::string& key, const std::string& file) {
  const std::string quoted = "'" + key + "'";
  const auto at = header.find(quoted);
  if (at == std::string::npos) throw InputError({file, 0, key}, "missing from the .npy header");
  auto pos = header.find(':', at + quoted.size());
  if (pos == std::string::npos) throw InputError({file, 0, key}, "malformed .npy header");
  ++pos;
  while (pos < header.size() && header[pos] == ' ')
    ++pos;
  std::size_t end = pos;
  if (end < header.size() && header[end] == '(') {
    end = header.find(')', end);
    if (end == std::string::npos) throw InputError({file, 0, key}, "unclosed tuple");
    return header.substr(pos, end + 1 - pos);
  }
  while (end < header.size() && header[end] != ',' && header[end] != '}')
    ++end;
  std::string v = header.substr(pos, end - pos);
  while (!v.empty() && v.back() == ' ')
    v.pop_back();
  return v;
}

template <class T>
T load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

}  // namespace

NpyArray parse_npy(const std::string& bytes, const std::string& file) {
  if (bytes.size() < kMagicSize + 4 || bytes.compare(0, kMagicSize, kMagic, kMagicSize) != 0) {
    throw InputError({file, 0, "magic"}, "not a .npy file (no \\x93NUMPY magic)");
  }
  const int major = static_cast<unsigned char>(bytes[6]);
  std::size_t header_len = 0, header_start = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) |
                 (static_cast<std::size_t>(static_cast<unsigned char>(bytes[9])) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw InputError({file, 0, "header"}, "truncated");
    header_len = load<std::uint32_t>(bytes.data() + 8);
    header_start = 12;
  } else {
    throw InputError({file, 0, "version"}, "unsupported .npy version " + std::to_string(major));
  }
  if (header_start + header_len > bytes.size()) throw InputError({file, 0, "header"}, "truncated");
  const std::string header = bytes.substr(header_start, header_len);
  const std::string descr = dict_value(header, "descr", file);
  const std::string order = dict_value(header, "fortran_order", file);
  const std::string shape_text = dict_value(header, "shape", file);
  if (order != "False") {
    throw InputError({file, 0, "fortran_order"}, "Fortran-ordered arrays are not supported",
                     "save with np.ascontiguousarray");
  }
  NpyArray out;
  std::int64_t count = 1;
  {
    std::size_t i = 1;  // after '('
    while (i < shape_text.size()) {
      while (i < shape_text.size() && (shape_text[i] == ' ' || shape_text[i] == ','))
        ++i;
      if (i >= shape_text.size() || shape_text[i] == ')') break;
      std::size_t j = i;
      while (j < shape_text.size() && shape_text[j] >= '0' && shape_text[j] <= '9')
        ++j;
      if (j == i) throw InputError({file, 0, "shape"}, "malformed shape " + shape_text);
      const std::int64_t d = std::stoll(shape_text.substr(i, j - i));
      if (d > 0 && count > std::numeric_limits<std::int64_t>::max() / d)
        throw InputError({file, 0, "shape"}, "too large");
      out.shape.push_back(d);
      count *= d;
      i = j;
    }
  }
  std::size_t width = 0;
  char kind = 0;
  if (descr.size() == 5 && descr.front() == '\'' && descr.back() == '\'') {
    const char endian = descr[1];
    kind = descr[2];
    width = static_cast<std::size_t>(descr[3] - '0');
    if (endian == '>') {
      throw InputError({file, 0, "descr"}, "big-endian data " + descr + " is not supported");
    }
    if (endian != '<' && endian != '|' && endian != '=')
      throw InputError({file, 0, "descr"}, "unsupported dtype " + descr);
  }
  const bool ok = (kind == 'f' && (width == 2 || width == 4 || width == 8)) ||
                  (kind == 'i' && (width == 4 || width == 8)) || (kind == 'u' && width == 1);
  if (!ok) {
    throw InputError({file, 0, "descr"},
                     "unsupported dtype " + descr + " (float16/32/64, int32/64 or uint8 expected)");
  }
  const std::size_t data_start = header_start + header_len;
  const std::size_t n = static_cast<std::size_t>(count);
  if (bytes.size() - data_start != n * width) {
    throw InputError({file, 0, "data"}, "holds " + std::to_string(bytes.size() - data_start) +
                                            " bytes; shape " + shape_text + " needs " +
                                            std::to_string(n * width));
  }
  out.values.resize(n);
  const char* p = bytes.data() + data_start;
  for (std::size_t i = 0; i < n; ++i, p += width) {
    if (kind == 'f' && width == 4) {
      out.values[i] = load<float>(p);
    } else if (kind == 'f' && width == 8) {
      out.values[i] = static_cast<float>(load<double>(p));
    } else if (kind == 'f') {
      out.values[i] = half_to_float(load<std::uint16_t>(p));
    } else if (kind == 'u') {
      out.values[i] = static_cast<float>(static_cast<unsigned char>(*p));
    } else if (width == 8) {
      out.values[i] = static_cast<float>(load<std::int64_t>(p));
    } else {
      out.values[i] = static_cast<float>(load<std::int32_t>(p));
    }
  }
  return out;
}

NpyArray read_npy(const std::filesystem::path& path) {
  return parse_npy(read_file(path), path.string());
}

std::string encode_npy_f32(const std::vector<std::int64_t>& shape,
                           const std::vector<float>& values) {
  std::string dims;  // "3, 4", or "3," for one dimension, as NumPy writes tuples
  for (std::size_t i = 0; i < shape.size(); ++i)
    dims += (i > 0 ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) dims += ',';
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
  const std::size_t total = kMagicSize + 4 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out(kMagic, kMagicSize);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  out += header;
  out.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  return out;
}

}  // namespace winokit
