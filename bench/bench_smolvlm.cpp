// SmolVLM VQAScore on Winoground-like pairs, the winokit side of bench/run_smolvlm_bench.sh: reads
// the checkpoint and inputs that `bench/bench_smolvlm_torch.py setup DIR N` writes (JPEG photos
// of 1920x1280, 2 captions per example of 2 images), and does what the family does for each
// image: decode and preprocess it, run the vision tower once, the prompt's prefix once into a KV
// cache, and its 2 captions' questions from there in one batch. Each phase is timed apart
// (image_prefix from the features computed beforehand: the same bits as image_prefix(image)).
// Prints one JSON line: wall time (median of the runs after a warm-up), the phases' seconds and
// shares, pairs/s, peak RSS, the first scores.
//
//   bench_smolvlm DIR [images=8] [split|no-split] [runs=1] [threads=0]
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "model/families/smolvlm/smolvlm_model.hpp"
#include "winokit/io/files.hpp"
#include "winokit/io/image_decode.hpp"
#include "winokit/model/compute.hpp"

using namespace winokit;

namespace {

double cpu_now() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  using clock = std::chrono::steady_clock;
  if (argc < 2) {
    std::cerr << "usage: bench_smolvlm DIR [images] [split|no-split] [runs] [threads]\n";
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  const int images = argc > 2 ? std::max(2, std::atoi(argv[2])) : 8;
  const bool split = argc > 3 && std::string(argv[3]) == "split";
  const int runs = argc > 4 ? std::max(1, std::atoi(argv[4])) : 1;
  set_compute_threads(argc > 5 ? std::atoi(argv[5]) : 0);
  try {
    const auto t_load = clock::now();
    VqaScoreOptions vqa;
    vqa.image_splitting = split ? 1 : 0;
    const SmolVlmModel model = SmolVlmModel::load(dir, vqa);
    const double load_s = std::chrono::duration<double>(clock::now() - t_load).count();
    const auto captions =
        nlohmann::json::parse(read_file(dir / "captions.json")).get<std::vector<std::string>>();
    if (captions.size() < static_cast<std::size_t>(images)) {
      throw std::runtime_error("captions.json: too few captions");
    }
    auto seconds = [](clock::time_point t0) {
      return std::chrono::duration<double>(clock::now() - t0).count();
    };
    std::vector<double> first_scores;
    int tiles = 0;
    std::size_t prefix_tokens = 0;
    auto one_image = [&](int i, std::map<std::string, double>& phases, bool keep) {
      char name[32];
      std::snprintf(name, sizeof name, "img_%04d.jpg", i);
      auto t0 = clock::now();
      const std::filesystem::path path = dir / "images" / name;
      const SmolVlmTiles t = smolvlm_preprocess(decode_image(read_file(path), path.string()),
                                                model.config().preprocess);
      phases["preprocess"] += seconds(t0);
      t0 = clock::now();
      const std::vector<float> features = model.image_features(t);
      phases["vision"] += seconds(t0);
      t0 = clock::now();
      const KvCache cache = model.image_prefix(t, features);
      phases["prefix"] += seconds(t0);
      t0 = clock::now();
      const int e = i / 2;  // the example's 2 captions, one batch
      const std::vector<double> p =
          model.answer_probabilities(cache, {captions[static_cast<std::size_t>(2 * e)],
                                             captions[static_cast<std::size_t>(2 * e + 1)]});
      phases["suffix"] += seconds(t0);
      tiles = t.count;
      prefix_tokens = model.prefix_ids(t).size();
      if (keep) first_scores.insert(first_scores.end(), p.begin(), p.end());
    };
    std::map<std::string, double> warm;
    one_image(0, warm, false);
    std::vector<double> secs, cpu;
    std::vector<std::map<std::string, double>> phases(static_cast<std::size_t>(runs));
    for (int r = 0; r < runs; ++r) {
      const auto t0 = clock::now();
      const double c0 = cpu_now();
      for (int i = 0; i < images; ++i)
        one_image(i, phases[static_cast<std::size_t>(r)], r == 0);
      secs.push_back(seconds(t0));
      cpu.push_back(cpu_now() - c0);
    }
    std::vector<std::size_t> order(secs.size());
    for (std::size_t k = 0; k < order.size(); ++k)
      order[k] = k;
    std::sort(order.begin(), order.end(), [&](auto a, auto b) { return secs[a] < secs[b]; });
    const std::size_t med = order[order.size() / 2];
    std::sort(cpu.begin(), cpu.end());
    nlohmann::json shares;
    for (const auto& [k, v] : phases[med])
      shares[k] = v / secs[med];
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    first_scores.resize(std::min<std::size_t>(8, first_scores.size()));
    const std::vector<int> q = model.question_ids(captions[0]);
    const nlohmann::json j = {{"impl", "winokit"},
                              {"split", split},
                              {"images", images},
                              {"pairs", 2 * images},
                              {"runs", runs},
                              {"load_seconds", load_s},
                              {"median_seconds", secs[med]},
                              {"seconds_per_run", secs},
                              {"phase_seconds", phases[med]},
                              {"phase_shares", shares},
                              {"pairs_per_s", 2 * images / secs[med]},
                              {"cpu_seconds_per_pair", cpu[cpu.size() / 2] / (2 * images)},
                              {"tiles_per_image", tiles},
                              {"prefix_tokens", prefix_tokens},
                              {"question_tokens", q.size()},
                              {"peak_rss_mb", static_cast<double>(usage.ru_maxrss) / 1024.0},
                              {"threads", compute_threads()},
                              {"compute", compute_record()},
                              {"first_scores", first_scores}};
    std::cout << j.dump() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "bench_smolvlm: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
