// WinoGAViL benchmark: a synthetic set of N instances (5, 6, 10 or 12 candidates, k 2-5) over M
// synthetic images (224 x 224 PNG), solved zero-shot by a ViT-B/32-shaped model with seeded
// random weights. Reports the end-to-end time with an empty embedding cache, then the time to
// solve and score every instance again from the cached embeddings, and the scoring alone.
//
//   build/bench/bench_winogavil [--instances 3500] [--images 2000] [--work /tmp/winokit-wg]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "winokit/core/rng.hpp"
#include "winokit/data/synth.hpp"
#include "winokit/eval/association_solver.hpp"
#include "winokit/io/files.hpp"
#include "winokit/model/compute.hpp"
#include "winokit/version.hpp"

namespace fs = std::filesystem;
using clk = std::chrono::steady_clock;

int main(int argc, char** argv) {
  int instances = 3500, images = 2000;
  fs::path work = fs::temp_directory_path() / "winokit-wg";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--instances")) instances = std::stoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--images")) images = std::stoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--work")) work = argv[i + 1];
  }
  const fs::path dir = work / ("images-" + std::to_string(images));
  if (!fs::exists(dir / "done")) {
    winokit::SynthOptions so;
    so.count = static_cast<std::size_t>((images + 1) / 2);
    so.image_size = 224;
    auto s = winokit::generate_synthetic(so);
    fs::create_directories(dir);
    for (int i = 0; i < images; ++i) {
      winokit::write_file_atomic(
          dir / ("img " + std::to_string(i) + ".png"),
          s.images_png[static_cast<std::size_t>(i / 2)][static_cast<std::size_t>(i % 2)], false);
    }
    winokit::write_file_atomic(dir / "done", "");
  }
  winokit::Rng rng(7);
  std::string csv = "candidates,cue,associations,num_associations,num_candidates,ID\n";
  static const int kSizes[] = {5, 6, 10, 12};
  for (int i = 0; i < instances; ++i) {
    const int n = kSizes[rng.below(4)];
    const int k = 2 + static_cast<int>(rng.below(static_cast<std::uint32_t>(std::min(4, n - 2))));
    std::vector<std::string> cands;
    while (static_cast<int>(cands.size()) < n) {
      std::string name = "img " + std::to_string(rng.below(static_cast<std::uint32_t>(images)));
      if (std::find(cands.begin(), cands.end(), name) == cands.end()) cands.push_back(name);
    }
    std::vector<std::string> gold(cands.begin(), cands.begin() + k);
    csv += winokit::csv_escape(nlohmann::json(cands).dump()) + ",cue" + std::to_string(i % 997) +
           "," + winokit::csv_escape(nlohmann::json(gold).dump()) + "," + std::to_string(k) + "," +
           std::to_string(n) + "," + std::to_string(i) + "\n";
  }
  auto ds = winokit::parse_winogavil(csv, "bench.csv");
  winokit::ModelOptions o;
  o.cache_dir = work / ("cache-" + std::to_string(::getpid()));
  const auto model = winokit::random_demo_model(1, o);
  const winokit::VlModel& rt = *model;
  auto t0 = clk::now();
  auto imgs = winokit::resolve_candidate_images(ds, dir);
  auto cold = winokit::solve_with_images(rt, ds, imgs, {});
  auto r1 = winokit::evaluate_associations(ds, cold.predictions, {});
  const double cold_s = std::chrono::duration<double>(clk::now() - t0).count();
  t0 = clk::now();
  auto warm = winokit::solve_with_images(rt, ds, imgs, {});
  const double warm_solve_s = std::chrono::duration<double>(clk::now() - t0).count();
  t0 = clk::now();
  auto r2 = winokit::evaluate_associations(ds, warm.predictions, {});
  const double score_s = std::chrono::duration<double>(clk::now() - t0).count();
  fs::remove_all(o.cache_dir);
  nlohmann::json out = {
      {"bench", "winogavil"},
      {"winokit", winokit::kVersion},
      {"instances", instances},
      {"images", imgs.size()},
      {"threads", winokit::compute_threads()},
      {"end_to_end_cold_seconds", cold_s},
      {"solve_from_cache_seconds", warm_solve_s},
      {"score_10000_bootstrap_seconds", score_s},
      {"same_predictions", cold.predictions == warm.predictions},
      {"mean_jaccard_percent", r2.overall.mean * 100},
      {"cold_embeddings",
       {{"images", cold.stats.images_computed}, {"prompts", cold.stats.texts_computed}}},
      {"warm_embeddings_cached",
       {{"images", warm.stats.images_cached}, {"prompts", warm.stats.texts_cached}}}};
  std::cout << out.dump() << "\n";
  return r1.overall.n == r2.overall.n ? 0 : 1;
}
