// BLIP ITM at blip-itm-base shapes on Winoground-like pairs: each example's 2 images are encoded
// once (vision tower + the cross-attention keys / values of every text layer) and its 2 captions
// x 2 images = 4 pairs go through the text encoder with cross-attention. Reads the checkpoint and
// inputs that `bench/bench_blip_torch.py setup DIR N` writes, so the reference and winokit run the
// same weights on the same inputs (bench/run_blip_bench.sh runs both). Prints pairs/s (median of
// the runs after a warm-up), peak RSS and the first scores.
//
//   bench_blip DIR [examples=400] [runs=1] [examples_per_forward=8] [threads=0]
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>

#include "model/families/blip/blip_model.hpp"
#include "winokit/io/files.hpp"
#include "winokit/io/safetensors.hpp"
#include "winokit/model/compute.hpp"

using namespace winokit;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: bench_blip DIR [examples] [runs] [examples_per_forward] [threads]\n";
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  const int examples = argc > 2 ? std::atoi(argv[2]) : 400;
  const int runs = argc > 3 ? std::atoi(argv[3]) : 1;
  const int per_forward = argc > 4 ? std::max(1, std::atoi(argv[4])) : 8;
  set_compute_threads(argc > 5 ? std::atoi(argv[5]) : 0);
  try {
    const BlipModel model = BlipModel::load(dir);
    const auto inputs = read_safetensors_f32(dir / "inputs.safetensors");
    const auto& px = inputs.at("pixels");  // [4, 3, 384, 384]
    const std::size_t image_floats = 3ull * static_cast<std::size_t>(px.first[2] * px.first[3]);
    const auto caps = nlohmann::json::parse(read_file(dir / "captions.json"))
                          .get<std::vector<std::vector<int>>>();
    if (caps.size() < 2ull * examples) throw std::runtime_error("captions.json: too few captions");
    std::vector<double> first_scores;
    auto run = [&](int count, bool keep) {
      for (int e0 = 0; e0 < count; e0 += per_forward) {
        const int e1 = std::min(count, e0 + per_forward);
        std::vector<const float*> pixels;
        for (int e = e0; e < e1; ++e) {
          for (int k = 0; k < 2; ++k) {
            const std::size_t slot = static_cast<std::size_t>((2 * e + k) % 4);
            pixels.push_back(&px.second[slot * image_floats]);
          }
        }
        // A forward's images together: one per thread (BlipModel::encode_images).
        const std::vector<BlipImageEmbeds> emb = model.encode_images(pixels);
        // Pairs grouped by image (their cross-attention keys packed once): (c0, i0), (c1, i0),
        // (c0, i1), (c1, i1) of each example.
        std::vector<const std::vector<int>*> ids;
        std::vector<const BlipImageEmbeds*> ims;
        for (int e = e0; e < e1; ++e) {
          for (int i = 0; i < 2; ++i) {
            for (int c = 0; c < 2; ++c) {
              ids.push_back(&caps[static_cast<std::size_t>(2 * e + c)]);
              ims.push_back(&emb[static_cast<std::size_t>(2 * (e - e0) + i)]);
            }
          }
        }
        const std::vector<float> logits = model.itm_logits(ids, ims);
        if (keep) {
          for (int e = e0; e < e1; ++e) {
            const std::size_t b = static_cast<std::size_t>(4 * (e - e0));
            for (std::size_t p : {b, b + 2, b + 1, b + 3})  // c0i0, c0i1, c1i0, c1i1
              first_scores.push_back(blip_itm_probability(&logits[p * 2]));
          }
        }
      }
    };
    run(1, false);  // warm-up
    auto cpu_now = [] {
      rusage u{};
      getrusage(RUSAGE_SELF, &u);
      return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
             static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
    };
    std::vector<double> secs, cpu;
    for (int r = 0; r < runs; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      const double c0 = cpu_now();
      run(examples, r == 0);
      secs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      cpu.push_back(cpu_now() - c0);
    }
    std::sort(cpu.begin(), cpu.end());
    std::sort(secs.begin(), secs.end());
    const double med = secs[secs.size() / 2];
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    first_scores.resize(std::min<std::size_t>(8, first_scores.size()));
    nlohmann::json j = {{"impl", "winokit"},
                        {"pairs", 4 * examples},
                        {"images", 2 * examples},
                        {"runs", runs},
                        {"examples_per_forward", per_forward},
                        {"median_seconds", med},
                        {"pairs_per_s", 4 * examples / med},
                        {"cpu_seconds_per_pair", cpu[cpu.size() / 2] / (4 * examples)},
                        {"peak_rss_mb", static_cast<double>(usage.ru_maxrss) / 1024.0},
                        {"threads", compute_threads()},
                        {"scores_c0_i0_c0_i1_c1_i0_c1_i1", first_scores}};
    std::cout << j.dump() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "bench_blip: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
