#include <algorithm>
#include <cmath>
#include <cstring>

#include "winokit/core/error.hpp"
#include "winokit/io/image_decode.hpp"
#include "winokit/model/preprocess.hpp"

namespace winokit {

const char* to_string(PreprocessPipeline p) {
  return p == PreprocessPipeline::Hf ? "hf" : "openai";
}

nlohmann::json PreprocessConfig::to_json() const {
  return {{"pipeline", to_string(pipeline)},
          {"resize_shortest_edge", resize},
          {"crop", crop},
          {"mean", mean},
          {"std", std},
          {"resample", "PIL bicubic"}};
}

namespace {

// ---- PIL's Resample.c: bicubic, bilinear and Lanczos filters ----
constexpr double kBicubicA = -0.5;
constexpr int kPrecisionBits = 32 - 8 - 2;
constexpr double kPi = 3.14159265358979323846;

double bicubic(double x) {
  if (x < 0.0) x = -x;
  if (x < 1.0) return ((kBicubicA + 2.0) * x - (kBicubicA + 3.0)) * x * x + 1;
  if (x < 2.0) return (((x - 5) * x + 8) * x - 4) * kBicubicA;
  return 0.0;
}
double bilinear(double x) {
  if (x < 0.0) x = -x;
  if (x < 1.0) return 1.0 - x;
  return 0.0;
}
double sinc(double x) {
  if (x == 0.0) return 1.0;
  x *= kPi;
  return std::sin(x) / x;
}
double lanczos(double x) {  // a = 3
  return (-3.0 <= x && x < 3.0) ? sinc(x) * sinc(x / 3.0) : 0.0;
}
double filter_support(PilFilter f) {
  return f == PilFilter::Bilinear ? 1.0 : f == PilFilter::Bicubic ? 2.0 : 3.0;
}
double filter_value(PilFilter f, double x) {
  return f == PilFilter::Bilinear ? bilinear(x) : f == PilFilter::Bicubic ? bicubic(x) : lanczos(x);
}

struct Coefficients {
  int ksize = 0;
  std::vector<int> bounds;          // per output: first input index, count
  std::vector<double> weights;      // [out, ksize], normalised
  std::vector<std::int32_t> fixed;  // the same in 22-bit fixed point
};

// precompute_coeffs() of PIL, for the box [in0, in1) of an axis of length in_size.
Coefficients coefficients(int in_size, double in0, double in1, int out_size, PilFilter filter) {
  Coefficients c;
  const double scale = (in1 - in0) / out_size;
  const double filterscale = scale < 1.0 ? 1.0 : scale;
  const double support = filter_support(filter) * filterscale;
  c.ksize = static_cast<int>(std::ceil(support)) * 2 + 1;
  c.bounds.resize(static_cast<std::size_t>(out_size) * 2);
  c.weights.assign(static_cast<std::size_t>(out_size) * c.ksize, 0.0);
  for (int xx = 0; xx < out_size; ++xx) {
    const double center = in0 + (xx + 0.5) * scale;
    const double ss = 1.0 / filterscale;
    int xmin = static_cast<int>(center - support + 0.5);
    if (xmin < 0) xmin = 0;
    int xmax = static_cast<int>(center + support + 0.5);
    if (xmax > in_size) xmax = in_size;
    xmax -= xmin;
    double* k = &c.weights[static_cast<std::size_t>(xx) * c.ksize];
    double ww = 0.0;
    for (int x = 0; x < xmax; ++x) {
      const double w = filter_value(filter, (x + xmin - center + 0.5) * ss);
      k[x] = w;
      ww += w;
    }
    for (int x = 0; x < xmax; ++x) {
      if (ww != 0.0) k[x] /= ww;
    }
    c.bounds[static_cast<std::size_t>(xx) * 2] = xmin;
    c.bounds[static_cast<std::size_t>(xx) * 2 + 1] = xmax;
  }
  // normalize_coeffs_8bpc()
  c.fixed.resize(c.weights.size());
  for (std::size_t i = 0; i < c.weights.size(); ++i) {
    const double v = c.weights[i] * (1 << kPrecisionBits);
    c.fixed[i] = static_cast<std::int32_t>(c.weights[i] < 0 ? -0.5 + v : 0.5 + v);
  }
  return c;
}

inline std::uint8_t clip8(std::int32_t v) {
  v >>= kPrecisionBits;  // arithmetic shift, as PIL's lookup table indexes it
  return static_cast<std::uint8_t>(v < 0 ? 0 : v > 255 ? 255 : v);
}

// 8-bit interleaved image with `ch` channels.
struct Plane {
  int w = 0, h = 0, ch = 0;
  std::vector<std::uint8_t> px;
};

// The passes below sum exact integer products, so any summation order gives PIL's result; the
// loops are laid out for vectorisation (channel-planar rows horizontally, whole rows
// vertically).
// 16 int32 lanes (GCC/Clang vector extension: AVX-512, or two/four narrower registers).
using Lanes = std::int32_t __attribute__((vector_size(64)));
constexpr int kLanes = 16;

Plane resample_horizontal(const Plane& in, int out_w, const Coefficients& c, int y0, int rows) {
  Plane out{out_w, rows, in.ch,
            std::vector<std::uint8_t>(static_cast<std::size_t>(out_w) * rows * in.ch)};
  // Tiles of kLanes rows: each input column of the tile is one Lanes value, so one output
  // column of all the tile's rows is a vector multiply-add per tap.
  const std::size_t w = static_cast<std::size_t>(in.w);
  const int ch = in.ch;
  std::vector<Lanes> tile(w * static_cast<std::size_t>(ch));
  for (int r0 = 0; r0 < rows; r0 += kLanes) {
    const int nr = std::min(kLanes, rows - r0);
    const std::uint8_t* src[kLanes];
    for (int r = 0; r < kLanes; ++r) {
      const int y = r0 + std::min(r, nr - 1);  // a short tile repeats its last row
      src[r] = &in.px[static_cast<std::size_t>(y + y0) * w * ch];
    }
    for (std::size_t x = 0; x < w; ++x) {
      for (int b = 0; b < ch; ++b) {
        Lanes v;
        for (int r = 0; r < kLanes; ++r)
          v[r] = src[r][x * ch + b];
        tile[static_cast<std::size_t>(b) * w + x] = v;
      }
    }
    for (int b = 0; b < ch; ++b) {
      const Lanes* t = &tile[static_cast<std::size_t>(b) * w];
      for (int xx = 0; xx < out_w; ++xx) {
        const int xmin = c.bounds[static_cast<std::size_t>(xx) * 2];
        const int xmax = c.bounds[static_cast<std::size_t>(xx) * 2 + 1];
        const std::int32_t* k = &c.fixed[static_cast<std::size_t>(xx) * c.ksize];
        Lanes acc = Lanes{} + (1 << (kPrecisionBits - 1));
        for (int x = 0; x < xmax; ++x)
          acc += t[xmin + x] * k[x];
        for (int r = 0; r < nr; ++r) {
          out.px[(static_cast<std::size_t>(r0 + r) * out_w + xx) * ch + b] = clip8(acc[r]);
        }
      }
    }
  }
  return out;
}

Plane resample_vertical(const Plane& in, int out_h, const Coefficients& c, int shift) {
  Plane out{in.w, out_h, in.ch,
            std::vector<std::uint8_t>(static_cast<std::size_t>(in.w) * out_h * in.ch)};
  const std::size_t stride = static_cast<std::size_t>(in.w) * in.ch;
  std::vector<std::int32_t> acc(stride);
  for (int yy = 0; yy < out_h; ++yy) {
    const int ymin = c.bounds[static_cast<std::size_t>(yy) * 2] - shift;
    const int ymax = c.bounds[static_cast<std::size_t>(yy) * 2 + 1];
    const std::int32_t* k = &c.fixed[static_cast<std::size_t>(yy) * c.ksize];
    std::fill(acc.begin(), acc.end(), 1 << (kPrecisionBits - 1));
    for (int y = 0; y < ymax; ++y) {
      const std::uint8_t* row = &in.px[static_cast<std::size_t>(y + ymin) * stride];
      const std::int32_t ky = k[y];
      for (std::size_t i = 0; i < stride; ++i)
        acc[i] += row[i] * ky;
    }
    std::uint8_t* dst = &out.px[static_cast<std::size_t>(yy) * stride];
    for (std::size_t i = 0; i < stride; ++i)
      dst[i] = clip8(acc[i]);
  }
  return out;
}

// ImagingResampleInner for 8-bit images.
Plane resample(const Plane& in, int out_w, int out_h, PilFilter filter) {
  const bool need_h = out_w != in.w;
  const bool need_v = out_h != in.h;
  Coefficients ch = coefficients(in.w, 0.0, in.w, out_w, filter);
  Coefficients cv = coefficients(in.h, 0.0, in.h, out_h, filter);
  const int first = cv.bounds[0];
  const int last = cv.bounds[static_cast<std::size_t>(out_h) * 2 - 2] +
                   cv.bounds[static_cast<std::size_t>(out_h) * 2 - 1];
  Plane cur;
  int shift = 0;
  if (need_h) {
    // Only the rows the vertical pass reads.
    cur = resample_horizontal(in, out_w, ch, first, last - first);
    shift = first;
  } else {
    cur = in;
  }
  if (need_v) cur = resample_vertical(cur, out_h, cv, shift);
  return cur;
}

// The 32-bit path for mode I: double coefficients, rounding half away from zero.
std::vector<std::int32_t> resample_wide(const std::vector<std::int32_t>& in, int w, int h,
                                        int out_w, int out_h) {
  auto round_up = [](double f) { return static_cast<std::int32_t>(f >= 0.0 ? f + 0.5 : f - 0.5); };
  Coefficients ch = coefficients(w, 0.0, w, out_w, PilFilter::Bicubic),
               cv = coefficients(h, 0.0, h, out_h, PilFilter::Bicubic);
  std::vector<std::int32_t> tmp(static_cast<std::size_t>(out_w) * h);
  const bool need_h = out_w != w, need_v = out_h != h;
  if (need_h) {
    for (int y = 0; y < h; ++y) {
      for (int xx = 0; xx < out_w; ++xx) {
        const int xmin = ch.bounds[static_cast<std::size_t>(xx) * 2];
        const int xmax = ch.bounds[static_cast<std::size_t>(xx) * 2 + 1];
        double ss = 0.0;
        for (int x = 0; x < xmax; ++x) {
          ss += in[static_cast<std::size_t>(y) * w + x + xmin] *
                ch.weights[static_cast<std::size_t>(xx) * ch.ksize + x];
        }
        tmp[static_cast<std::size_t>(y) * out_w + xx] = round_up(ss);
      }
    }
  } else {
    tmp = in;
  }
  if (!need_v) return tmp;
  std::vector<std::int32_t> out(static_cast<std::size_t>(out_w) * out_h);
  for (int yy = 0; yy < out_h; ++yy) {
    const int ymin = cv.bounds[static_cast<std::size_t>(yy) * 2];
    const int ymax = cv.bounds[static_cast<std::size_t>(yy) * 2 + 1];
    for (int x = 0; x < out_w; ++x) {
      double ss = 0.0;
      for (int y = 0; y < ymax; ++y) {
        ss += tmp[static_cast<std::size_t>(y + ymin) * out_w + x] *
              cv.weights[static_cast<std::size_t>(yy) * cv.ksize + y];
      }
      out[static_cast<std::size_t>(yy) * out_w + x] = round_up(ss);
    }
  }
  return out;
}

// MULDIV255 of PIL's Convert.c.
inline std::uint8_t muldiv255(unsigned a, unsigned b) {
  const unsigned tmp = a * b + 128;
  return static_cast<std::uint8_t>(((tmp >> 8) + tmp) >> 8);
}
inline std::uint8_t unpremultiply(unsigned v, unsigned alpha) {
  const unsigned r = (255 * v) / alpha;
  return static_cast<std::uint8_t>(r > 255 ? 255 : r);
}

DecodedImage nearest(const DecodedImage& im, int out_w, int out_h) {
  // ImagingScaleAffine: source position of output x is floor(x0 + (x + 0.5) * scale), accumulated
  // in double exactly as PIL does.
  const double ax = static_cast<double>(im.width) / out_w;
  const double ay = static_cast<double>(im.height) / out_h;
  std::vector<int> xin(static_cast<std::size_t>(out_w), -1);
  double xo = ax * 0.5;
  for (int x = 0; x < out_w; ++x) {
    const int v = xo < 0.0 ? -1 : static_cast<int>(xo);
    if (v >= 0 && v < im.width) xin[static_cast<std::size_t>(x)] = v;
    xo += ax;
  }
  DecodedImage out = im;
  out.width = out_w;
  out.height = out_h;
  const int ch = channels(im.mode);
  out.pixels.assign(static_cast<std::size_t>(out_w) * out_h * ch, 0);
  double yo = ay * 0.5;
  for (int y = 0; y < out_h; ++y) {
    const int yi = yo < 0.0 ? -1 : static_cast<int>(yo);
    if (yi >= 0 && yi < im.height) {
      for (int x = 0; x < out_w; ++x) {
        const int xi = xin[static_cast<std::size_t>(x)];
        if (xi < 0) continue;
        std::memcpy(&out.pixels[(static_cast<std::size_t>(y) * out_w + x) * ch],
                    &im.pixels[(static_cast<std::size_t>(yi) * im.width + xi) * ch],
                    static_cast<std::size_t>(ch));
      }
    }
    yo += ay;
  }
  return out;
}

}  // namespace

DecodedImage to_rgb(const DecodedImage& im) {
  if (im.mode == PixelMode::RGB) return im;
  DecodedImage out;
  out.width = im.width;
  out.height = im.height;
  out.mode = PixelMode::RGB;
  const std::size_t n = static_cast<std::size_t>(im.width) * im.height;
  out.pixels.resize(n * 3);
  for (std::size_t i = 0; i < n; ++i) {
    std::uint8_t* d = &out.pixels[i * 3];
    switch (im.mode) {
      case PixelMode::RGB:
        std::memcpy(d, &im.pixels[i * 3], 3);
        break;
      case PixelMode::RGBA:
        std::memcpy(d, &im.pixels[i * 4], 3);  // alpha dropped, not composited
        break;
      case PixelMode::L:
        d[0] = d[1] = d[2] = im.pixels[i];
        break;
      case PixelMode::LA:
        d[0] = d[1] = d[2] = im.pixels[i * 2];
        break;
      case PixelMode::P: {
        const auto& c = im.palette[im.pixels[i]];
        d[0] = c[0];
        d[1] = c[1];
        d[2] = c[2];
        break;
      }
      case PixelMode::I: {
        const std::int32_t v = im.wide[i];
        d[0] = d[1] = d[2] = static_cast<std::uint8_t>(v <= 0 ? 0 : v >= 255 ? 255 : v);
        break;
      }
    }
  }
  return out;
}

DecodedImage pil_resize(const DecodedImage& im, int out_w, int out_h, PilFilter filter) {
  if (out_w == im.width && out_h == im.height) return im;
  if (im.mode == PixelMode::P) return nearest(im, out_w, out_h);
  if (im.mode == PixelMode::I) {
    if (filter != PilFilter::Bicubic)
      throw Error("pil_resize: 32-bit images are resized bicubic only");
    DecodedImage out = im;
    out.width = out_w;
    out.height = out_h;
    out.wide = resample_wide(im.wide, im.width, im.height, out_w, out_h);
    return out;
  }
  const int ch = channels(im.mode);
  const std::size_t n = static_cast<std::size_t>(im.width) * im.height;
  Plane in{im.width, im.height, ch, im.pixels};
  const bool alpha = im.mode == PixelMode::RGBA || im.mode == PixelMode::LA;
  if (alpha) {  // RGBA -> RGBa, LA -> La: premultiply
    for (std::size_t i = 0; i < n; ++i) {
      std::uint8_t* p = &in.px[i * ch];
      const unsigned a = p[ch - 1];
      for (int b = 0; b < ch - 1; ++b)
        p[b] = muldiv255(p[b], a);
    }
  }
  Plane r = resample(in, out_w, out_h, filter);
  if (alpha) {  // back to straight alpha
    const std::size_t m = static_cast<std::size_t>(out_w) * out_h;
    for (std::size_t i = 0; i < m; ++i) {
      std::uint8_t* p = &r.px[i * ch];
      const unsigned a = p[ch - 1];
      if (a == 255 || a == 0) continue;
      for (int b = 0; b < ch - 1; ++b)
        p[b] = unpremultiply(p[b], a);
    }
  }
  DecodedImage out;
  out.width = out_w;
  out.height = out_h;
  out.mode = im.mode;
  out.pixels = std::move(r.px);
  return out;
}

namespace {

// Shortest edge to `size`, the other int(size * long / short) (transformers and torchvision).
std::pair<int, int> resized_size(int w, int h, int size) {
  const bool portrait = w <= h;
  const int shortest = portrait ? w : h, longest = portrait ? h : w;
  const int other = static_cast<int>(static_cast<double>(size) * longest / shortest);
  return portrait ? std::pair{size, other} : std::pair{other, size};
}

// First source row (or column) of a centred crop; d = image size - crop size.
// transformers: d // 2 (floor), also when it pads a smaller image. torchvision: round(d / 2)
// (half to even) when the image is large enough, otherwise it pads (crop - size) // 2 first.
int crop_offset(int d, bool hf) {
  const int floor_half = d >= 0 ? d / 2 : -((-d + 1) / 2);
  if (hf) return floor_half;
  if (d < 0) return -((-d) / 2);
  return static_cast<int>(std::nearbyint(d / 2.0));  // ties to even, like Python's round
}

}  // namespace

std::vector<float> preprocess(const DecodedImage& image, const PreprocessConfig& cfg) {
  const bool hf = cfg.pipeline == PreprocessPipeline::Hf;
  DecodedImage im = hf ? to_rgb(image) : image;
  auto [rw, rh] = resized_size(im.width, im.height, cfg.resize);
  im = pil_resize(im, rw, rh);
  const int crop = cfg.crop;
  const int top = crop_offset(im.height - crop, hf);
  const int left = crop_offset(im.width - crop, hf);
  if (!hf) im = to_rgb(im);
  std::vector<float> out(static_cast<std::size_t>(3) * crop * crop);
  for (int c = 0; c < 3; ++c) {
    for (int y = 0; y < crop; ++y) {
      for (int x = 0; x < crop; ++x) {
        const int sy = y + top, sx = x + left;
        // Outside the image (only when it is smaller than the crop) both pipelines pad with 0.
        const std::uint8_t v =
            sy >= 0 && sy < im.height && sx >= 0 && sx < im.width
                ? im.pixels[(static_cast<std::size_t>(sy) * im.width + sx) * 3 + c]
                : 0;
        // transformers: float32(v * (1/255) in float64); torchvision: float32(v) / 255.
        const float scaled = hf ? static_cast<float>(static_cast<double>(v) * (1.0 / 255.0))
                                : static_cast<float>(v) / 255.0f;
        out[(static_cast<std::size_t>(c) * crop + y) * crop + x] =
            (scaled - cfg.mean[static_cast<std::size_t>(c)]) / cfg.std[static_cast<std::size_t>(c)];
      }
    }
  }
  return out;
}

}  // namespace winokit
