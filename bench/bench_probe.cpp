// Benchmark: the probe suite's unit of work, one MLP probe fit (train + test accuracy) on
// Winoground-sized data with ViT-B/32 state widths (vision 768, text 512; 400 items, 300 for
// training), and the SVM separability of one layer; the whole suite is extrapolated from them.
// Median of `runs` repetitions; prints the machine.
//
//   build/bench/bench_probe [--hidden 1024] [--depth 4] [--epochs 200] [--runs 3]
#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>

#include "model/families/clip/clip_model.hpp"
#include "winokit/core/rng.hpp"
#include "winokit/eval/probe.hpp"
#include "winokit/model/compute.hpp"

namespace {

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown CPU";
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  winokit::ProbeOptions o;
  int runs = 3, layers = 13, variants_per_caption = 6;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    const int v = std::atoi(argv[i + 1]);
    if (a == "--hidden")
      o.mlp.hidden = v;
    else if (a == "--depth")
      o.mlp.depth = v;
    else if (a == "--epochs")
      o.mlp.epochs = v;
    else if (a == "--runs")
      runs = v;
    else if (a == "--layers")
      layers = v;
  }
  constexpr int kItems = 400, kImageDim = 768, kTextDim = 512;
  std::string text;
  const char* tags[] = {"Object", "Relation", "Both"};
  for (int i = 0; i < kItems; ++i) {
    text += "{\"id\": " + std::to_string(i) +
            ", \"caption_0\": \"a b\", \"caption_1\": \"b a\", \"image_0\": \"i" +
            std::to_string(i) + "_0\", \"image_1\": \"i" + std::to_string(i) +
            "_1\", \"tag\": \"t\", \"secondary_tag\": \"\", \"num_main_preds\": 1, "
            "\"collapsed_tag\": \"" +
            tags[i % 3] + "\"}\n";
  }
  winokit::WinogroundDataset ds = winokit::parse_examples(text, "bench.jsonl");
  winokit::Rng rng(1);
  winokit::ProbeEmbeddings e;
  winokit::ProbeLayer l;
  l.name = "bench";
  l.image_dim = kImageDim;
  l.text_dim = kTextDim;
  auto fill = [&](std::vector<float>& v, std::size_t n) {
    v.resize(n);
    for (auto& x : v)
      x = static_cast<float>(rng.uniform() - 0.5);
  };
  fill(l.image, 2 * kItems * kImageDim);
  fill(l.text, 2 * kItems * kTextDim);
  fill(l.variants, 2 * kItems * variants_per_caption * kTextDim);
  for (std::size_t c = 0; c < 2 * kItems; ++c)
    for (int v = 0; v < variants_per_caption; ++v)
      e.variant_owner.push_back(c);
  e.layers.push_back(l);
  o.seeds = {0};

  std::cout << "machine: " << cpu_model() << ", " << std::thread::hardware_concurrency()
            << " hardware threads, compute threads " << winokit::compute_threads() << "\n"
            << "MLP: depth " << o.mlp.depth << ", hidden " << o.mlp.hidden << ", " << o.mlp.epochs
            << " epochs, batch " << o.mlp.batch_size << "\n";
  std::vector<double> fit;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    // One seed = a target and a control fit.
    winokit::run_mlp_probe(winokit::ProbeTask::PairText, ds, e.layers[0], e, o);
    fit.push_back(seconds_since(t0) / 2);
  }
  std::sort(fit.begin(), fit.end());
  const double per_fit = fit[fit.size() / 2];
  std::vector<double> svm;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    winokit::svm_separability(e.layers[0], e, o);
    svm.push_back(seconds_since(t0));
  }
  std::sort(svm.begin(), svm.end());
  const double per_svm = svm[svm.size() / 2];
  const int fits = 2 /*tasks*/ * layers * 11 /*seeds*/ * 2 /*target, control*/;
  std::cout << "one pair-probe fit (600 train / 200 test instances, 2560 inputs): median "
            << per_fit << " s (min " << fit.front() << ", max " << fit.back() << ", " << runs
            << " runs)\n"
            << "SVM separability of one layer (400 items, 7 + 7 points of 512 dims, target and "
               "control): median "
            << per_svm << " s\n"
            << "suite: 2 pair tasks x " << layers
            << " layers x 11 seeds x (target, control) = " << fits
            << " fits: " << per_fit * fits / 60 << " min; SVM for " << layers
            << " layers: " << per_svm * layers << " s\n";
}
