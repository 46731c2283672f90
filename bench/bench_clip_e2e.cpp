// End-to-end benchmark of `winokit eval --model`: a Winoground-layout dataset of N examples
// (2N JPEG photos of 1920x1280, made here once and reused) scored with a ViT-B/32-shaped model
// with seeded random weights, embedding cache off. Reports wall time, the share spent decoding
// (measured separately on one thread) and peak memory, as JSON.
//
//   build/bench/bench_clip_e2e [--examples 400] [--work /tmp/winokit-e2e] [--tokenizer DIR]
#include <cstddef>
#include <cstdio>

#include <jpeglib.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "model/families/clip/clip_family.hpp"
#include "winokit/core/rng.hpp"
#include "winokit/data/winoground.hpp"
#include "winokit/eval/model_scorer.hpp"
#include "winokit/io/files.hpp"
#include "winokit/io/image_decode.hpp"
#include "winokit/model/compute.hpp"
#include "winokit/model/preprocess.hpp"
#include "winokit/version.hpp"

namespace fs = std::filesystem;

namespace {

// A photo-like image: smooth colour fields, edges and sensor noise, JPEG quality 90.
std::string photo_jpeg(int w, int h, std::uint64_t seed) {
  winokit::Rng rng(seed);
  std::vector<unsigned char> rgb(static_cast<std::size_t>(w) * h * 3);
  const double fx = 2 + rng.uniform() * 6, fy = 2 + rng.uniform() * 6, phase = rng.uniform() * 6.28;
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const double u = static_cast<double>(x) / w, v = static_cast<double>(y) / h;
      for (int c = 0; c < 3; ++c) {
        double val = 128 + 90 * std::sin(fx * u * (c + 1) + phase) * std::cos(fy * v + c) +
                     (((x / 97) + (y / 61)) % 2 ? 20 : -20) + (rng.uniform() - 0.5) * 24;
        rgb[(static_cast<std::size_t>(y) * w + x) * 3 + c] =
            static_cast<unsigned char>(std::clamp(val, 0.0, 255.0));
      }
    }
  }
  jpeg_compress_struct cinfo{};
  jpeg_error_mgr jerr{};
  cinfo.err = jpeg_std_error(&jerr);
  jpeg_create_compress(&cinfo);
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&cinfo, &buffer, &size);
  cinfo.image_width = static_cast<JDIMENSION>(w);
  cinfo.image_height = static_cast<JDIMENSION>(h);
  cinfo.input_components = 3;
  cinfo.in_color_space = JCS_RGB;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, 90, TRUE);
  jpeg_start_compress(&cinfo, TRUE);
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW row = &rgb[static_cast<std::size_t>(cinfo.next_scanline) * w * 3];
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  std::string out(reinterpret_cast<char*>(buffer), size);
  jpeg_destroy_compress(&cinfo);
  std::free(buffer);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  int examples = 400;
  fs::path work = fs::temp_directory_path() / "winokit-e2e";
  std::string tokenizer = std::string(WINOKIT_SHARED_DIR) + "/golden/clip/vocab";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--examples")) examples = std::stoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--work")) work = argv[i + 1];
    if (!std::strcmp(argv[i], "--tokenizer")) tokenizer = argv[i + 1];
  }
  const fs::path data = work / ("ds-" + std::to_string(examples));
  static const char* kCaptions[][2] = {
      {"an old person kisses a young person", "a young person kisses an old person"},
      {"there is a mug in some grass", "there is some grass in a mug"},
      {"the person with the ponytail buys stuff and the other packs it",
       "the person with the ponytail packs stuff and the other buys it"}};
  if (!fs::exists(data / "examples.jsonl")) {
    fs::create_directories(data / "images");
    std::string jsonl;
    for (int i = 0; i < examples; ++i) {
      for (int k = 0; k < 2; ++k) {
        winokit::write_file_atomic(
            data / "images" / ("ex_" + std::to_string(i) + "_img_" + std::to_string(k) + ".jpg"),
            photo_jpeg(1920, 1280, static_cast<std::uint64_t>(i * 2 + k)), false);
      }
      // Distinct captions per example (800 in all), of Winoground length.
      const auto& c = kCaptions[i % 3];
      nlohmann::json line = {{"id", i},
                             {"caption_0", std::string(c[0]) + " " + std::to_string(i)},
                             {"caption_1", std::string(c[1]) + " " + std::to_string(i)},
                             {"image_0", "ex_" + std::to_string(i) + "_img_0"},
                             {"image_1", "ex_" + std::to_string(i) + "_img_1"}};
      jsonl += line.dump() + "\n";
    }
    winokit::write_file_atomic(data / "examples.jsonl", jsonl);
  }
  winokit::WinogroundDataset ds = winokit::load_dataset(data);
  auto tok = std::make_shared<winokit::ClipTokenizer>(
      fs::is_directory(tokenizer) ? winokit::ClipTokenizer::from_directory(tokenizer)
                                  : winokit::ClipTokenizer::byte_level());
  winokit::set_compute_threads(0);
  winokit::ClipRunOptions options;
  options.use_cache = false;
  auto rt = winokit::ClipRuntime::random(winokit::vit_b32_config(), 1, tok, options);
  // Decoding alone, one thread, for reference.
  auto t0 = std::chrono::steady_clock::now();
  winokit::ImageStore store = winokit::ImageStore::open(ds.root);
  const int probe = std::min<int>(40, examples * 2);
  for (int i = 0; i < probe; ++i) {
    auto px = winokit::preprocess(
        winokit::decode_image(store.read(
            ds.examples[static_cast<std::size_t>(i / 2)].images[static_cast<std::size_t>(i % 2)])),
        rt.preprocess());
  }
  const double decode_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() /
      probe;
  const auto model = winokit::wrap_clip_runtime(rt, "bench");
  auto scorer = winokit::make_model_scorer(*model, "bench");
  t0 = std::chrono::steady_clock::now();
  auto scores = scorer->score(ds);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  nlohmann::json out = {{"bench", "clip-e2e"},
                        {"winokit", winokit::kVersion},
                        {"examples", examples},
                        {"images", 2 * examples},
                        {"image_size", "1920x1280 JPEG q90"},
                        {"captions", 2 * examples},
                        {"tokenizer", fs::is_directory(tokenizer) ? "CLIP BPE" : "byte-level"},
                        {"threads", winokit::compute_threads()},
                        {"wall_seconds", wall},
                        {"decode_preprocess_ms_per_image_one_thread", decode_ms},
                        {"peak_rss_mb", static_cast<double>(usage.ru_maxrss) / 1024.0},
                        {"scorer", scorer->describe()["embeddings"]}};
  std::cout << out.dump() << "\n";
  return 0;
}
