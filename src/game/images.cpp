// The pool's images as the client sees them (see winokit/game/image_pool.hpp): opaque ids
// instead of file names, and JPEG thumbnails at the few sizes the pages show.
#include <sodium.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "winokit/core/error.hpp"
#include "winokit/game/image_pool.hpp"
#include "winokit/io/image_decode.hpp"
#include "winokit/io/png_writer.hpp"

namespace winokit {

namespace {

std::string to_hex(const unsigned char* p, std::size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < n; ++i) {
    out += digits[p[i] >> 4];
    out += digits[p[i] & 15];
  }
  return out;
}

// Any decoded mode as 8-bit RGB; transparency is composited over white.
std::vector<std::uint8_t> to_rgb(const DecodedImage& im) {
  const std::size_t n = static_cast<std::size_t>(im.width) * static_cast<std::size_t>(im.height);
  std::vector<std::uint8_t> out(n * 3);
  const auto over_white = [](std::uint8_t v, std::uint8_t a) {
    return static_cast<std::uint8_t>((v * a + 255 * (255 - a) + 127) / 255);
  };
  for (std::size_t i = 0; i < n; ++i) {
    std::uint8_t r = 0, g = 0, b = 0;
    switch (im.mode) {
      case PixelMode::L:
        r = g = b = im.pixels[i];
        break;
      case PixelMode::LA:
        r = g = b = over_white(im.pixels[2 * i], im.pixels[2 * i + 1]);
        break;
      case PixelMode::RGB:
        r = im.pixels[3 * i];
        g = im.pixels[3 * i + 1];
        b = im.pixels[3 * i + 2];
        break;
      case PixelMode::RGBA: {
        const std::uint8_t a = im.pixels[4 * i + 3];
        r = over_white(im.pixels[4 * i], a);
        g = over_white(im.pixels[4 * i + 1], a);
        b = over_white(im.pixels[4 * i + 2], a);
        break;
      }
      case PixelMode::P: {
        const std::size_t k = im.pixels[i];
        if (k < im.palette.size()) {
          r = im.palette[k][0];
          g = im.palette[k][1];
          b = im.palette[k][2];
        }
        break;
      }
      case PixelMode::I:
        r = g = b = static_cast<std::uint8_t>(std::clamp(im.wide[i] >> 8, 0, 255));
        break;
    }
    out[3 * i] = r;
    out[3 * i + 1] = g;
    out[3 * i + 2] = b;
  }
  return out;
}

// Area-average resize (each output pixel the mean of the source pixels it covers).
std::vector<std::uint8_t> resize_area(const std::vector<std::uint8_t>& rgb, int w, int h, int ow,
                                      int oh) {
  std::vector<std::uint8_t> out(static_cast<std::size_t>(ow) * static_cast<std::size_t>(oh) * 3);
  for (int y = 0; y < oh; ++y) {
    const int y0 = static_cast<int>(static_cast<long long>(y) * h / oh);
    const int y1 = std::max(y0 + 1, static_cast<int>(static_cast<long long>(y + 1) * h / oh));
    for (int x = 0; x < ow; ++x) {
      const int x0 = static_cast<int>(static_cast<long long>(x) * w / ow);
      const int x1 = std::max(x0 + 1, static_cast<int>(static_cast<long long>(x + 1) * w / ow));
      unsigned long sum[3] = {0, 0, 0};
      for (int yy = y0; yy < y1; ++yy)
        for (int xx = x0; xx < x1; ++xx)
          for (int c = 0; c < 3; ++c)
            sum[c] += rgb[(static_cast<std::size_t>(yy) * static_cast<std::size_t>(w) +
                           static_cast<std::size_t>(xx)) *
                              3 +
                          static_cast<std::size_t>(c)];
      const unsigned long count = static_cast<unsigned long>(y1 - y0) * (x1 - x0);
      for (int c = 0; c < 3; ++c)
        out[(static_cast<std::size_t>(y) * static_cast<std::size_t>(ow) +
             static_cast<std::size_t>(x)) *
                3 +
            static_cast<std::size_t>(c)] = static_cast<std::uint8_t>((sum[c] + count / 2) / count);
    }
  }
  return out;
}

}  // namespace

ImageIds::ImageIds(const std::vector<std::string>& names, const std::string& key) {
  unsigned char k[crypto_generichash_KEYBYTES];
  crypto_generichash(k, sizeof k, reinterpret_cast<const unsigned char*>(key.data()), key.size(),
                     nullptr, 0);
  for (const auto& name : names) {
    unsigned char h[12];
    crypto_generichash(h, sizeof h, reinterpret_cast<const unsigned char*>(name.data()),
                       name.size(), k, sizeof k);
    const std::string id = to_hex(h, sizeof h);
    by_name_.emplace(name, id);
    by_id_.emplace(id, name);
  }
}

std::string ImageIds::id_of(const std::string& name) const {
  const auto it = by_name_.find(name);
  return it == by_name_.end() ? std::string() : it->second;
}

const std::string* ImageIds::name_of(const std::string& id) const {
  const auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : &it->second;
}

std::string image_thumbnail(const std::filesystem::path& file, int side) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw IoError(file.string() + ": cannot be read");
  std::ostringstream ss;
  ss << in.rdbuf();
  const DecodedImage im = decode_image(ss.str(), file.string());
  if (im.width <= 0 || im.height <= 0) throw IoError(file.string() + ": an empty image");
  const auto rgb = to_rgb(im);
  // The shorter side becomes `side` (the cards crop to a square), never enlarged.
  const int shorter = std::min(im.width, im.height);
  int ow = im.width, oh = im.height;
  if (shorter > side) {
    ow = std::max(1, static_cast<int>(static_cast<long long>(im.width) * side / shorter));
    oh = std::max(1, static_cast<int>(static_cast<long long>(im.height) * side / shorter));
  }
  return encode_jpeg_rgb8(
      ow == im.width && oh == im.height ? rgb : resize_area(rgb, im.width, im.height, ow, oh), ow,
      oh, 82);
}

}  // namespace winokit
