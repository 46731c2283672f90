// FLAVA on Winoground-like pairs: each example's 2 images and 2 captions are encoded once, and
// its 2 captions x 2 images = 4 pairs go through the multimodal encoder and the ITM head; the
// contrastive scores come from the same encodings. Reads the checkpoint and inputs that
// `tests/fixtures/flava_reference.py bench-setup DIR N PRESET` writes, so the reference and
// winokit run the same weights on the same inputs (bench/run_flava_bench.sh runs both). Prints
// pairs/s (median of the runs after a warm-up), peak RSS and the first scores of both heads.
//
//   bench_flava DIR [examples=400] [runs=1] [examples_per_forward=8] [threads=0]
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>

#include "model/families/clip/clip_model.hpp"
#include "model/families/flava/flava_model.hpp"
#include "winokit/io/files.hpp"
#include "winokit/io/safetensors.hpp"
#include "winokit/model/compute.hpp"

using namespace winokit;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: bench_flava DIR [examples] [runs] [examples_per_forward] [threads]\n";
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  const int examples = argc > 2 ? std::atoi(argv[2]) : 400;
  const int runs = argc > 3 ? std::atoi(argv[3]) : 1;
  const int per_forward = argc > 4 ? std::max(1, std::atoi(argv[4])) : 8;
  set_compute_threads(argc > 5 ? std::atoi(argv[5]) : 0);
  try {
    const FlavaModel model = FlavaModel::load(dir);
    auto inputs = read_safetensors_f32(dir / "inputs.safetensors");
    const auto& px = inputs.at("pixels");  // [2, 3, S, S]
    const int h = static_cast<int>(px.first[2]), w = static_cast<int>(px.first[3]);
    std::vector<FlavaImage> images(2);
    for (std::size_t k = 0; k < 2; ++k) {
      images[k].height = h;
      images[k].width = w;
      const std::size_t n = 3ull * h * w;
      images[k].pixels.assign(px.second.begin() + static_cast<std::ptrdiff_t>(k * n),
                              px.second.begin() + static_cast<std::ptrdiff_t>((k + 1) * n));
    }
    const auto caps = nlohmann::json::parse(read_file(dir / "captions.json"))
                          .get<std::vector<std::vector<int>>>();
    if (caps.size() < 2ull * examples) throw std::runtime_error("captions.json: too few captions");
    std::vector<double> first_itm, first_con;
    auto run = [&](int count, bool keep) {
      for (int e0 = 0; e0 < count; e0 += per_forward) {
        const int e1 = std::min(count, e0 + per_forward);
        // Each example's two images and two captions encoded once (a real run has 2 distinct
        // images per example).
        std::vector<const FlavaImage*> ip;
        std::vector<std::vector<int>> ids;
        for (int e = e0; e < e1; ++e) {
          for (std::size_t k = 0; k < 2; ++k) {
            ip.push_back(&images[k]);
            ids.push_back(caps[static_cast<std::size_t>(2 * e) + k]);
          }
        }
        const std::vector<FlavaEmbeds> im = model.embed_images(ip);
        const std::vector<FlavaEmbeds> tx = model.embed_texts(ids);
        std::vector<const FlavaEmbeds*> ts, is;
        for (int e = e0; e < e1; ++e) {
          for (int c = 0; c < 2; ++c) {
            for (int i = 0; i < 2; ++i) {
              ts.push_back(&tx[static_cast<std::size_t>(2 * (e - e0) + c)]);
              is.push_back(&im[static_cast<std::size_t>(2 * (e - e0) + i)]);
            }
          }
        }
        const FlavaItmOutput o = model.itm(ts, is);
        for (std::size_t p = 0; p < ts.size(); ++p) {
          const double con = model.contrastive(*is[p], *ts[p]);
          if (keep) {
            first_itm.push_back(o.probabilities[p]);
            first_con.push_back(con);
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
    first_itm.resize(std::min<std::size_t>(8, first_itm.size()));
    first_con.resize(std::min<std::size_t>(8, first_con.size()));
    nlohmann::json j = {{"impl", "winokit"},
                        {"pairs", 4 * examples},
                        {"runs", runs},
                        {"examples_per_forward", per_forward},
                        {"median_seconds", med},
                        {"pairs_per_s", 4 * examples / med},
                        {"cpu_seconds_per_pair", cpu[cpu.size() / 2] / (4 * examples)},
                        {"peak_rss_mb", static_cast<double>(usage.ru_maxrss) / 1024.0},
                        {"threads", compute_threads()},
                        {"itm_c0_i0_c0_i1_c1_i0_c1_i1", first_itm},
                        {"contrastive_c0_i0_c0_i1_c1_i0_c1_i1", first_con}};
    std::cout << j.dump() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "bench_flava: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
