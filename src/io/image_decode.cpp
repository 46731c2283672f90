// jpeglib.h needs size_t and FILE declared first.
#include <cstddef>
#include <cstdio>

#include <jerror.h>
#include <jpeglib.h>
#include <png.h>
#include <webp/decode.h>

#include <algorithm>
#include <condition_variable>
#include <csetjmp>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>

#include "winokit/core/error.hpp"
#include "winokit/io/image_decode.hpp"

namespace winokit {

const char* to_string(PixelMode m) {
  switch (m) {
    case PixelMode::L:
      return "L";
    case PixelMode::LA:
      return "LA";
    case PixelMode::RGB:
      return "RGB";
    case PixelMode::RGBA:
      return "RGBA";
    case PixelMode::P:
      return "P";
    case PixelMode::I:
      return "I";
  }
  return "?";
}

int channels(PixelMode m) {
  switch (m) {
    case PixelMode::LA:
      return 2;
    case PixelMode::RGB:
      return 3;
    case PixelMode::RGBA:
      return 4;
    default:
      return 1;
  }
}

namespace {

// Refuse absurd sizes before allocating (a 100k x 100k image would need 30 GB).
constexpr std::uint64_t kMaxPixels = 1ull << 28;

void check_size(std::uint64_t w, std::uint64_t h, const std::string& source) {
  if (w == 0 || h == 0 || w * h > kMaxPixels) {
    throw InputError({source, 0, ""}, "image size " + std::to_string(w) + "x" + std::to_string(h) +
                                          " is empty or too large (at most 2^28 pixels)");
  }
}

// A header that claims more pixels than its data can hold (issue 23: a 160-byte JPEG "of"
// 2^28 pixels was decoded to 1.8 GB, its missing data filled in): refused before the canvas is
// allocated, with the format's own floor on the compressed size.
[[noreturn]] void too_little_data(std::uint64_t w, std::uint64_t h, std::size_t have,
                                  std::uint64_t need, const char* format,
                                  const std::string& source) {
  throw InputError({source, 0, ""}, std::string("truncated ") + format + ": " +
                                        std::to_string(have) + " bytes cannot hold " +
                                        std::to_string(w) + "x" + std::to_string(h) +
                                        " pixels (at least " + std::to_string(need) + ")");
}

// The decoder's memory, bounded per process: canvases being decoded reserve their bytes here
// and wait while others hold the budget, so --threads N does not multiply the peak by N (4
// decompression bombs on 4 threads were killed at 6 GiB). An image larger than the whole budget
// is decoded alone. Decodes never nest, so a waiting thread holds no reservation: no deadlock.
class DecodeBudget {
 public:
  static constexpr std::uint64_t kDefaultBytes = 1ull << 30;
  class Hold {
   public:
    Hold(DecodeBudget& b, std::uint64_t n) : b_(b), n_(n) {}
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;
    ~Hold() { b_.release(n_); }

   private:
    DecodeBudget& b_;
    std::uint64_t n_;
  };
  void reserve(std::uint64_t n) {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return used_ == 0 || used_ + n <= bytes_; });
    used_ += n;
    peak_ = std::max(peak_, used_);
  }
  DecodeMemoryStats stats() {
    std::lock_guard<std::mutex> lock(mutex_);
    return {bytes_, used_, peak_};
  }
  std::uint64_t set_budget(std::uint64_t bytes) {
    std::uint64_t previous;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      previous = bytes_;
      bytes_ = bytes;
      peak_ = used_;
    }
    cv_.notify_all();
    return previous;
  }
  static DecodeBudget& process() {
    static DecodeBudget budget;
    return budget;
  }

 private:
  void release(std::uint64_t n) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      used_ -= n;
    }
    cv_.notify_all();
  }
  std::mutex mutex_;
  std::condition_variable cv_;
  std::uint64_t bytes_ = kDefaultBytes;
  std::uint64_t used_ = 0;
  std::uint64_t peak_ = 0;
};

// Reserves `bytes` of the process's decode budget until the returned hold is destroyed.
std::unique_ptr<DecodeBudget::Hold> hold_decode_memory(std::uint64_t bytes) {
  DecodeBudget& b = DecodeBudget::process();
  b.reserve(bytes);
  return std::make_unique<DecodeBudget::Hold>(b, bytes);
}

// ---- JPEG ----
struct JpegError {
  jpeg_error_mgr mgr;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
  bool truncated = false;
};

void jpeg_fail(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<JpegError*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

void jpeg_warn(j_common_ptr cinfo, int level) {
  // PIL refuses truncated data ("image file is truncated"); libjpeg only warns about it, and
  // fills the missing blocks in: the end of the data (JWRN_JPEG_EOF) or a marker where entropy
  // data should be (JWRN_HIT_MARKER: an EOI right after a short scan) are truncation.
  if (level < 0 &&
      (cinfo->err->msg_code == JWRN_JPEG_EOF || cinfo->err->msg_code == JWRN_HIT_MARKER)) {
    reinterpret_cast<JpegError*>(cinfo->err)->truncated = true;
  }
}

DecodedImage decode_jpeg(const std::string& bytes, const std::string& source) {
  jpeg_decompress_struct cinfo{};
  JpegError err{};
  cinfo.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = jpeg_fail;
  err.mgr.emit_message = jpeg_warn;
  // Frees libjpeg's memory however this function is left (exceptions included); declared
  // before setjmp, like every object with a destructor, so that a longjmp skips none.
  struct Destroy {
    jpeg_decompress_struct* c;
    ~Destroy() { jpeg_destroy_decompress(c); }
  } destroy{&cinfo};
  DecodedImage out;
  std::unique_ptr<DecodeBudget::Hold> hold;  // before setjmp, like every object with a destructor
  if (setjmp(err.jump)) {
    throw InputError({source, 0, ""}, std::string("corrupt JPEG: ") + err.message);
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, reinterpret_cast<const unsigned char*>(bytes.data()),
               static_cast<unsigned long>(bytes.size()));
  jpeg_read_header(&cinfo, TRUE);
  check_size(cinfo.image_width, cinfo.image_height, source);
  {
    // Every 8x8 block of the first component costs at least one bit of entropy-coded data (a
    // DC code; progressive AC scans can skip blocks, DC ones cannot).
    const std::uint64_t blocks =
        ((cinfo.image_width + 7ull) / 8) * ((cinfo.image_height + 7ull) / 8);
    const std::uint64_t need = blocks / 8;
    if (bytes.size() < need)
      too_little_data(cinfo.image_width, cinfo.image_height, bytes.size(), need, "JPEG", source);
  }
  if (cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK) {
    throw InputError({source, 0, ""}, "CMYK JPEG images are not supported",
                     "convert the image to RGB");
  }
  const bool gray = cinfo.num_components == 1;
  cinfo.out_color_space = gray ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_calc_output_dimensions(&cinfo);
  const std::size_t stride = static_cast<std::size_t>(cinfo.output_width) *
                             static_cast<std::size_t>(cinfo.output_components);
  // The canvas, and a progressive image's coefficients (2 bytes per sample) held by libjpeg.
  hold = hold_decode_memory(stride * cinfo.output_height * (cinfo.progressive_mode ? 3 : 1));
  jpeg_start_decompress(&cinfo);  // a progressive image is read whole here
  if (err.truncated) throw InputError({source, 0, ""}, "truncated JPEG (premature end of data)");
  out.width = static_cast<int>(cinfo.output_width);
  out.height = static_cast<int>(cinfo.output_height);
  out.mode = gray ? PixelMode::L : PixelMode::RGB;
  out.pixels.resize(stride * out.height);
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW row = out.pixels.data() + stride * cinfo.output_scanline;
    jpeg_read_scanlines(&cinfo, &row, 1);
    if (err.truncated) break;
  }
  if (err.truncated) throw InputError({source, 0, ""}, "truncated JPEG (premature end of data)");
  jpeg_finish_decompress(&cinfo);
  return out;
}

// ---- PNG ----
struct PngReader {
  const std::string* bytes;
  std::size_t offset = 8;
};

void png_read_bytes(png_structp png, png_bytep out, png_size_t length) {
  auto* r = static_cast<PngReader*>(png_get_io_ptr(png));
  if (r->offset + length > r->bytes->size()) png_error(png, "truncated PNG data");
  std::memcpy(out, r->bytes->data() + r->offset, length);
  r->offset += length;
}

struct PngMessage {
  std::string text;
};
void png_fail(png_structp png, png_const_charp message) {
  static_cast<PngMessage*>(png_get_error_ptr(png))->text = message;
  png_longjmp(png, 1);
}
void png_warn(png_structp, png_const_charp) {}

// The total length of the IDAT chunks (the compressed pixels), read from the chunk headers.
std::uint64_t png_idat_bytes(const std::string& bytes) {
  std::uint64_t total = 0;
  std::size_t at = 8;
  while (at + 8 <= bytes.size()) {
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data() + at);
    const std::uint64_t len = (std::uint64_t{p[0]} << 24) | (std::uint64_t{p[1]} << 16) |
                              (std::uint64_t{p[2]} << 8) | p[3];
    const std::uint64_t present = std::min<std::uint64_t>(len, bytes.size() - at - 8);
    if (std::memcmp(p + 4, "IDAT", 4) == 0) total += present;
    if (len > bytes.size() - at - 8) break;
    at += 8 + static_cast<std::size_t>(len) + 4;
  }
  return total;
}

DecodedImage decode_png(const std::string& bytes, const std::string& source) {
  PngMessage message;
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &message, png_fail, png_warn);
  if (png == nullptr) throw Error("libpng: cannot create read struct");
  png_infop info = png_create_info_struct(png);
  // Frees libpng's structures however this function is left; every object with a destructor is
  // declared before setjmp, so that a longjmp skips none (the pixel buffer leaked before).
  struct Destroy {
    png_structp* png;
    png_infop* info;
    ~Destroy() { png_destroy_read_struct(png, info, nullptr); }
  } destroy{&png, &info};
  DecodedImage out;
  std::vector<png_bytep> rows;
  std::vector<std::uint8_t> buffer;
  std::unique_ptr<DecodeBudget::Hold> hold;
  if (setjmp(png_jmpbuf(png))) {
    throw InputError({source, 0, ""}, "corrupt PNG: " + message.text);
  }
  PngReader reader{&bytes};
  png_set_read_fn(png, &reader, png_read_bytes);
  png_set_sig_bytes(png, 8);
  png_set_crc_action(png, PNG_CRC_ERROR_QUIT, PNG_CRC_ERROR_QUIT);
  png_read_info(png, info);
  png_uint_32 w = 0, h = 0;
  int depth = 0, color = 0, interlace = 0;
  png_get_IHDR(png, info, &w, &h, &depth, &color, &interlace, nullptr, nullptr);
  check_size(w, h, source);
  {
    // deflate expands at most 1032:1, so the IDAT chunks must hold raw/1032 bytes (raw: every
    // row with its filter byte). Summed from the chunk lengths before any pixel is allocated.
    constexpr std::uint64_t kMaxDeflateRatio = 1032;
    const int samples = color == PNG_COLOR_TYPE_RGB          ? 3
                        : color == PNG_COLOR_TYPE_RGB_ALPHA  ? 4
                        : color == PNG_COLOR_TYPE_GRAY_ALPHA ? 2
                                                             : 1;
    const std::uint64_t raw =
        (static_cast<std::uint64_t>(w) * samples * static_cast<std::uint64_t>(depth) + 7) / 8 * h +
        h;
    const std::uint64_t need = raw / kMaxDeflateRatio;
    if (png_idat_bytes(bytes) < need)
      too_little_data(w, h, png_idat_bytes(bytes), need, "PNG", source);
  }
  out.width = static_cast<int>(w);
  out.height = static_cast<int>(h);
  bool gray16 = false;
  switch (color) {
    case PNG_COLOR_TYPE_PALETTE: {
      out.mode = PixelMode::P;
      if (depth < 8) png_set_packing(png);
      png_colorp palette = nullptr;
      int entries = 0;
      png_get_PLTE(png, info, &palette, &entries);
      out.palette.assign(256, {0, 0, 0});
      for (int i = 0; i < entries && i < 256; ++i) {
        out.palette[static_cast<std::size_t>(i)] = {palette[i].red, palette[i].green,
                                                    palette[i].blue};
      }
      break;
    }
    case PNG_COLOR_TYPE_GRAY:
      if (depth == 16) {
        gray16 = true;
        out.mode = PixelMode::I;
      } else {
        out.mode = PixelMode::L;
        if (depth < 8) png_set_expand_gray_1_2_4_to_8(png);
        if (depth == 1) {
          // PIL's mode "1" (resized with NEAREST like palette images): a gray palette.
          out.mode = PixelMode::P;
          out.palette.resize(256);
          for (int i = 0; i < 256; ++i) {
            const auto v = static_cast<std::uint8_t>(i);
            out.palette[static_cast<std::size_t>(i)] = {v, v, v};
          }
        }
      }
      break;
    case PNG_COLOR_TYPE_GRAY_ALPHA:
      out.mode = PixelMode::LA;
      break;
    case PNG_COLOR_TYPE_RGB:
      out.mode = PixelMode::RGB;
      break;
    default:
      out.mode = PixelMode::RGBA;
  }
  // 16-bit colour: PIL keeps the most significant byte.
  if (depth == 16 && !gray16) png_set_strip_16(png);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  const std::size_t rowbytes = png_get_rowbytes(png, info);
  hold = hold_decode_memory(static_cast<std::uint64_t>(rowbytes) * h * (gray16 ? 3 : 1));
  buffer.resize(rowbytes * h);
  rows.resize(h);
  for (png_uint_32 y = 0; y < h; ++y)
    rows[y] = buffer.data() + rowbytes * y;
  png_read_image(png, rows.data());
  png_read_end(png, nullptr);
  if (gray16) {
    out.wide.resize(static_cast<std::size_t>(w) * h);
    for (std::size_t i = 0; i < out.wide.size(); ++i) {
      out.wide[i] = (buffer[2 * i] << 8) | buffer[2 * i + 1];
    }
  } else {
    out.pixels = std::move(buffer);
  }
  return out;
}

DecodedImage decode_webp(const std::string& bytes, const std::string& source) {
  WebPBitstreamFeatures features;
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  if (WebPGetFeatures(data, bytes.size(), &features) != VP8_STATUS_OK) {
    throw InputError({source, 0, ""}, "corrupt WebP data");
  }
  check_size(static_cast<std::uint64_t>(features.width),
             static_cast<std::uint64_t>(features.height), source);
  {
    // The RIFF header says how long the file is: shorter data is truncated. And no WebP packs
    // more than 2^20 pixels into a byte (a uniform 16383x16383 lossy image takes kilobytes).
    constexpr std::uint64_t kMaxPixelsPerByte = 1ull << 20;
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
    const std::uint64_t riff = bytes.size() >= 12
                                   ? (std::uint64_t{p[4]} | std::uint64_t{p[5]} << 8 |
                                      std::uint64_t{p[6]} << 16 | std::uint64_t{p[7]} << 24) +
                                         8
                                   : 0;
    const auto w = static_cast<std::uint64_t>(features.width);
    const auto h = static_cast<std::uint64_t>(features.height);
    const std::uint64_t need = std::max(riff, w * h / kMaxPixelsPerByte);
    if (bytes.size() < need) too_little_data(w, h, bytes.size(), need, "WebP", source);
  }
  DecodedImage out;
  out.width = features.width;
  out.height = features.height;
  out.mode = features.has_alpha ? PixelMode::RGBA : PixelMode::RGB;
  const auto hold = hold_decode_memory(static_cast<std::uint64_t>(out.width) * out.height *
                                       static_cast<std::uint64_t>(channels(out.mode)));
  out.pixels.resize(static_cast<std::size_t>(out.width) * out.height * channels(out.mode));
  const int stride = out.width * channels(out.mode);
  uint8_t* ok =
      features.has_alpha
          ? WebPDecodeRGBAInto(data, bytes.size(), out.pixels.data(), out.pixels.size(), stride)
          : WebPDecodeRGBInto(data, bytes.size(), out.pixels.data(), out.pixels.size(), stride);
  if (ok == nullptr) throw InputError({source, 0, ""}, "corrupt or truncated WebP data");
  return out;
}

}  // namespace

DecodedImage decode_image(const std::string& bytes, const std::string& source) {
  switch (sniff_image_format(bytes)) {
    case ImageFormat::Jpeg:
      return decode_jpeg(bytes, source);
    case ImageFormat::Png:
      return decode_png(bytes, source);
    case ImageFormat::Webp:
      return decode_webp(bytes, source);
    case ImageFormat::Gif:
      throw InputError({source, 0, ""}, "GIF images are not supported", "convert it to PNG");
    case ImageFormat::Unknown:
      break;
  }
  throw InputError({source, 0, ""},
                   bytes.empty() ? "empty image file" : "not a JPEG, PNG or WebP image");
}

DecodedImage decode_image(const ImageBytes& image) {
  return decode_image(image.bytes, image.source);
}

DecodeMemoryStats decode_memory_stats() {
  return DecodeBudget::process().stats();
}

std::uint64_t set_decode_memory_budget(std::uint64_t bytes) {
  if (bytes == 0) throw UsageError("the decode memory budget must be positive");
  return DecodeBudget::process().set_budget(bytes);
}

}  // namespace winokit
