// SigLIP's image tower (patches, 12 pre-LN layers, the attention pooling head) on the checkpoint
// and pixels that `bench/bench_siglip_torch.py setup DIR N` writes
// (google/siglip-base-patch16-224's shapes, random weights), so the PyTorch transcription and
// winokit run the same weights on the same inputs (bench/run_siglip_bench.sh runs both). Prints ms
// per image (median of the runs after a warm-up), peak RSS and the features, as JSON.
//
//   bench_siglip DIR [images=16] [runs=5] [batch=8] [threads=0]
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>

#include "model/families/siglip/siglip_model.hpp"
#include "winokit/io/safetensors.hpp"
#include "winokit/model/compute.hpp"

using namespace winokit;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: bench_siglip DIR [images] [runs] [batch] [threads]\n";
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  const int images = argc > 2 ? std::max(1, std::atoi(argv[2])) : 16;
  const int runs = argc > 3 ? std::max(1, std::atoi(argv[3])) : 5;
  const int batch = argc > 4 ? std::max(1, std::atoi(argv[4])) : 8;
  set_compute_threads(argc > 5 ? std::atoi(argv[5]) : 0);
  try {
    const SiglipModel model = SiglipModel::load(dir);
    const auto inputs = read_safetensors_f32(dir / "inputs.safetensors");
    const auto& px = inputs.at("pixels");
    const std::size_t per = 3ull * static_cast<std::size_t>(model.config().image_size) *
                            static_cast<std::size_t>(model.config().image_size);
    if (px.second.size() < per * static_cast<std::size_t>(images)) {
      throw std::runtime_error("inputs.safetensors: too few images");
    }
    auto once = [&] {
      std::vector<float> all;
      for (int b = 0; b < images; b += batch) {
        const int n = std::min(batch, images - b);
        const auto f = model.encode_images(px.second.data() + static_cast<std::size_t>(b) * per, n);
        all.insert(all.end(), f.begin(), f.end());
      }
      return all;
    };
    const std::vector<float> features = once();  // warm-up (and the features)
    std::vector<double> times;
    for (int r = 0; r < runs; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      once();
      times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(times.begin(), times.end());
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    std::cout << nlohmann::json{{"impl", "winokit " + kernel_version() + " (" + kernel_isa() + ")"},
                                {"threads", compute_threads()},
                                {"batch", batch},
                                {"images", images},
                                {"runs", runs},
                                {"ms_per_image", 1000 * times[times.size() / 2] / images},
                                {"ms_per_image_min", 1000 * times.front() / images},
                                {"peak_rss_mb", static_cast<double>(ru.ru_maxrss) / 1024},
                                {"features", features}}
                     .dump()
              << "\n";
  } catch (const std::exception& e) {
    std::cerr << "bench_siglip: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
