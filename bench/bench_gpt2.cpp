// GPT-2 caption perplexity benchmark: GPT-2 small's shape (124M parameters: 12 layers, width 768,
// 12 heads, vocabulary 50257, seeded random weights) scoring 800 Winoground-like captions (400
// examples; 5 to 14 words, mean about 9, tokenized with the real GPT-2 vocabulary), no start
// token, no cache. One warm-up run, then repeated runs; prints JSON with the median wall time,
// the share spent in GEMMs, the peak resident memory and the machine's load.
//
//   build/bench/bench_gpt2 [--runs 3] [--threads 2] [--captions 800]
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "model/families/clip/clip_model.hpp"
#include "winokit/core/rng.hpp"
#include "winokit/model/compute.hpp"
#include "winokit/model/gpt2_model.hpp"
#include "winokit/model/tokenizer.hpp"
#include "winokit/version.hpp"

int main(int argc, char** argv) {
  int runs = 3, threads = 2, captions = 800;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--runs") runs = std::stoi(argv[i + 1]);
    if (a == "--threads") threads = std::stoi(argv[i + 1]);
    if (a == "--captions") captions = std::stoi(argv[i + 1]);
  }
  winokit::set_compute_threads(threads);
  const auto t_load = std::chrono::steady_clock::now();
  winokit::Gpt2Model model = winokit::Gpt2Model::random(winokit::Gpt2Config{}, 1);
  const double load_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t_load).count();
  auto tok =
      winokit::Gpt2Tokenizer::from_directory(WINOKIT_SOURCE_DIR "/tests/fixtures/gpt2_vocab");
  static const char* kWords[] = {
      "a",       "the",   "person", "dog",   "is",      "on",      "left",  "right",   "of",
      "with",    "an",    "old",    "young", "kisses",  "more",    "than",  "there",   "are",
      "holding", "red",   "blue",   "cup",   "table",   "someone", "while", "another", "sits",
      "runs",    "above", "below",  "water", "fire",    "truck",   "bird",  "eats",    "snake",
      "happy",   "sad",   "white",  "wall",  "painted", "in",      "front", "behind"};
  constexpr int kWordCount = sizeof(kWords) / sizeof(kWords[0]);
  winokit::Rng rng(7);
  std::vector<std::vector<int>> seqs;
  std::size_t tokens = 0, words = 0;
  for (int c = 0; c < captions; ++c) {
    const int n = 5 + static_cast<int>(rng.below(10));
    std::string text;
    for (int w = 0; w < n; ++w)
      text += (w ? " " : "") + std::string(kWords[rng.below(kWordCount)]);
    seqs.push_back(tok.encode(text));
    tokens += seqs.back().size();
    words += static_cast<std::size_t>(n);
  }
  std::vector<double> wall, gemm;
  for (int r = 0; r <= runs; ++r) {
    const double g0 = model.gemm_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    auto scores = model.score(seqs);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (r == 0) continue;  // warm-up
    wall.push_back(s);
    gemm.push_back(model.gemm_seconds() - g0);
  }
  std::vector<double> sorted = wall;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted[sorted.size() / 2];
  const std::size_t mid =
      static_cast<std::size_t>(std::find(wall.begin(), wall.end(), median) - wall.begin());
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  std::string load;
  std::getline(std::ifstream("/proc/loadavg"), load);
  nlohmann::json out = {{"benchmark", "gpt2_perplexity"},
                        {"version", winokit::kVersion},
                        {"model", "GPT-2 small shape, random weights"},
                        {"parameters", model.config().parameters()},
                        {"captions", captions},
                        {"mean_words", static_cast<double>(words) / captions},
                        {"tokens", tokens},
                        {"threads", threads},
                        {"runs", wall},
                        {"median_s", median},
                        {"gemm_share", gemm[mid] / wall[mid]},
                        {"model_setup_s", load_s},
                        {"peak_rss_mb", static_cast<double>(ru.ru_maxrss) / 1024.0},
                        {"loadavg", load}};
  std::cout << out.dump(2) << "\n";
  return 0;
}
