// Image decoding (PIL modes) and corrupt files.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "test_util.hpp"
#include "winokit/core/error.hpp"
#include "winokit/io/files.hpp"
#include "winokit/io/image_decode.hpp"
#include "winokit/io/png_writer.hpp"

namespace winokit {
namespace fs = std::filesystem;
namespace {

TEST(ImageDecode, PngRoundTripAndCorruptFilesNamed) {
  std::vector<std::uint8_t> rgb(7 * 5 * 3);
  for (std::size_t i = 0; i < rgb.size(); ++i)
    rgb[i] = static_cast<std::uint8_t>(i * 7);
  std::string png = encode_png_rgb8(rgb, 7, 5);
  auto im = decode_image(png, "ok.png");
  EXPECT_EQ(im.mode, PixelMode::RGB);
  EXPECT_EQ(im.width, 7);
  EXPECT_EQ(im.pixels, rgb);
  try {
    decode_image(png.substr(0, png.size() / 2), "images/ex_3_img_1.png");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("images/ex_3_img_1.png"), std::string::npos);
  }
  EXPECT_THROW(decode_image(std::string("hello"), "x.png"), InputError);
  EXPECT_THROW(decode_image(std::string("\xFF\xD8\xFF\xE0garbage", 11), "x.jpg"), InputError);
  EXPECT_THROW(decode_image(std::string(""), "empty.png"), InputError);
}

// Issue 23, item 5: headers that claim more pixels than their data holds were decoded into
// canvases of 0.8-1.8 GB (a JPEG's missing data silently filled in). Now refused before the
// canvas is allocated: exit 2 within a 256 MiB address-space allowance.
TEST(ImageDecode, HeadersThatLieAboutTheirSizeAreRefusedBeforeAllocating) {
  const fs::path dir = fs::path(WINOKIT_SOURCE_DIR) / "tests/fuzz/regressions/image";
  for (const char* name :
       {"jpeg-header-claims-16000x16000.jpg", "png-header-claims-16384x16384.png",
        "webp-header-claims-16383x16383.webp"}) {
    const std::string bytes = read_file(dir / name);
    try {
      decode_image(bytes, name);
      ADD_FAILURE() << name << " accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("cannot hold"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    }
    EXPECT_EQ(test::exit_code_with_memory_limit(256u << 20, [&] { decode_image(bytes, name); }), 2)
        << name;
  }
}

// A JPEG whose scan ends early at an EOI marker was accepted with the rest filled in.
TEST(ImageDecode, AJpegCutShortIsAnError) {
  const fs::path dir = fs::path(WINOKIT_SOURCE_DIR) / "tests/fuzz/regressions/image";
  try {
    decode_image(read_file(dir / "jpeg-eoi-after-8-bytes-of-scan.jpg"), "cut.jpg");
    FAIL() << "a truncated JPEG was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cut.jpg: truncated JPEG"), std::string::npos) << e.what();
  }
  // The file it was cut from still decodes.
  const auto im = decode_image(
      read_file(fs::path(WINOKIT_SOURCE_DIR) / "tests/fuzz/corpus/image/rgb.jpg"), "rgb.jpg");
  EXPECT_GT(im.width, 0);
}

// Issue 23: the decoder's memory is one budget per process. Four threads decoding eight images
// whose canvases do not fit two at a time never hold more than the budget; an image larger than
// the whole budget still decodes (alone, without deadlock); every image decodes to the same
// pixels as on one thread.
TEST(ImageDecode, ThreadsShareOneProcessWideDecodeMemoryBudget) {
  constexpr int kW = 256, kH = 192, kImages = 8, kThreads = 4;
  constexpr std::uint64_t kCanvas = std::uint64_t{kW} * 3 * kH;  // an 8-bit RGB PNG's canvas
  std::vector<std::string> files;
  for (int i = 0; i < kImages; ++i) {
    std::vector<std::uint8_t> rgb(std::size_t{kW} * kH * 3);
    for (std::size_t j = 0; j < rgb.size(); ++j)
      rgb[j] = static_cast<std::uint8_t>(j * 31 + i * 7);
    files.push_back(encode_png_rgb8(rgb, kW, kH));
  }
  std::vector<DecodedImage> alone;
  for (const auto& f : files)
    alone.push_back(decode_image(f, "alone.png"));

  const auto decode_all = [&](int threads) {
    std::vector<DecodedImage> got(kImages);
    std::atomic<int> next{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&] {
        for (int i; (i = next++) < kImages;)
          got[i] = decode_image(files[i], "shared.png");
      });
    }
    for (auto& th : pool)
      th.join();
    return got;
  };
  const std::uint64_t previous = set_decode_memory_budget(kCanvas + kCanvas / 2);
  auto got = decode_all(kThreads);
  DecodeMemoryStats stats = decode_memory_stats();
  EXPECT_EQ(stats.budget_bytes, kCanvas + kCanvas / 2);
  EXPECT_EQ(stats.in_use_bytes, 0u);
  EXPECT_GE(stats.peak_bytes, kCanvas);
  EXPECT_LE(stats.peak_bytes, stats.budget_bytes) << "threads held more than the budget";
  for (int i = 0; i < kImages; ++i)
    EXPECT_EQ(got[i].pixels, alone[i].pixels) << i;

  // Larger than the whole budget: each image is decoded alone, and all of them finish.
  set_decode_memory_budget(kCanvas / 4);
  got = decode_all(kThreads);
  stats = decode_memory_stats();
  EXPECT_EQ(stats.peak_bytes, kCanvas) << "two over-budget images were decoded at once";
  for (int i = 0; i < kImages; ++i)
    EXPECT_EQ(got[i].pixels, alone[i].pixels) << i;

  EXPECT_THROW(set_decode_memory_budget(0), UsageError);
  set_decode_memory_budget(previous);
  EXPECT_EQ(decode_memory_stats().budget_bytes, previous);
}

}  // namespace
}  // namespace winokit
