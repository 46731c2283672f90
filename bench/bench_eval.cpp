// Benchmark: `winokit eval` work on a Winoground-sized input (400 examples, 70 fine-grained
// tags, secondary tags, one extra tag set), 10,000 bootstrap resamples, all reports rendered.
// Warm-up, then repeated runs; prints median, min and max with the machine, as JSON lines.
//
//   build/bench/bench_eval [--runs N] [--examples N] [--resamples N]
#include <sys/utsname.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "winokit/core/rng.hpp"
#include "winokit/eval/evaluation.hpp"
#include "winokit/eval/scores.hpp"
#include "winokit/report/csv_report.hpp"
#include "winokit/report/example_browser.hpp"
#include "winokit/report/format.hpp"
#include "winokit/report/html_report.hpp"
#include "winokit/report/json_report.hpp"
#include "winokit/report/markdown.hpp"
#include "winokit/version.hpp"

namespace {

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown";
}

winokit::WinogroundDataset make_dataset(int n) {
  static const char* kCollapsed[] = {"Object", "Relation", "Both"};
  static const char* kSecondary[] = {
      "", "", "", "", "Symbolic", "Series", "Pragmatics", "Symbolic, Series", "Morpheme-Level", ""};
  std::string text;
  winokit::Rng rng(7);
  for (int i = 0; i < n; ++i) {
    char line[512];
    std::snprintf(line, sizeof line,
                  "{\"id\": %d, \"caption_0\": \"an old person kisses a young person\", "
                  "\"caption_1\": \"a young person kisses an old person\", \"image_0\": "
                  "\"ex_%d_img_0\", \"image_1\": \"ex_%d_img_1\", \"tag\": \"Tag-%u\", "
                  "\"secondary_tag\": \"%s\", \"num_main_preds\": %u, \"collapsed_tag\": \"%s\"}\n",
                  i, i, i, rng.below(70), kSecondary[rng.below(10)], 1 + rng.below(2),
                  kCollapsed[rng.below(3)]);
    text += line;
  }
  return winokit::parse_examples(text, "bench/examples.jsonl");
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 9, examples = 400;
  std::size_t resamples = 10000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--runs")) runs = std::stoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--examples")) examples = std::stoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--resamples")) resamples = std::stoul(argv[i + 1]);
  }
  winokit::WinogroundDataset ds = make_dataset(examples);
  std::vector<winokit::WinogroundScores> scores(ds.examples.size());
  winokit::Rng rng(1);
  for (auto& s : scores) {
    for (auto& v : s.s)
      v = rng.uniform();
  }
  const std::string scores_text = winokit::official_scores_jsonl(ds, scores);
  winokit::TagSet hard;
  hard.name = "why-hard";
  hard.file = "why-hard.json";
  for (std::size_t i = 0; i < ds.examples.size(); ++i) {
    static const std::vector<std::string> kTags[] = {{},
                                                     {"Ambiguously Correct"},
                                                     {"Unusual Image", "Visually Difficult"},
                                                     {"Complex Reasoning"}};
    hard.tags.emplace_back(kTags[rng.below(4)]);
  }
  winokit::EvalInputs inputs{{hard}, {}};
  winokit::EvalOptions options;
  options.bootstrap_resamples = resamples;

  std::vector<double> total_ms, parse_ms, eval_ms, report_ms;
  std::size_t groups = 0;
  for (int r = -1; r < runs; ++r) {  // r = -1 is the warm-up
    auto t0 = std::chrono::steady_clock::now();
    auto loaded = winokit::parse_scores(scores_text, "bench/scores.jsonl", ds);
    auto t1 = std::chrono::steady_clock::now();
    auto result = winokit::evaluate(ds, loaded.scores, inputs, options);
    auto t2 = std::chrono::steady_clock::now();
    auto ctx = winokit::make_context(ds, "bench", {{"kind", "bench"}}, inputs, options);
    std::size_t bytes = winokit::markdown_report(result, ctx).size() +
                        winokit::json_report(result, ctx).dump().size() +
                        winokit::csv_report(result, ctx).size() +
                        winokit::html_report(result, ctx).size();
    auto t3 = std::chrono::steady_clock::now();
    if (bytes == 0) return 1;
    groups = 1;
    for (const auto& b : result.breakdowns)
      groups += b.groups.size();
    if (r < 0) continue;
    auto ms = [](auto a, auto b) {
      return std::chrono::duration<double, std::milli>(b - a).count();
    };
    parse_ms.push_back(ms(t0, t1));
    eval_ms.push_back(ms(t1, t2));
    report_ms.push_back(ms(t2, t3));
    total_ms.push_back(ms(t0, t3));
  }
  utsname u{};
  uname(&u);
  std::cout << "{\"bench\": \"eval\", \"winokit\": \"" << winokit::kVersion << "\", \"cpu\": \""
            << cpu_model() << "\", \"cores\": " << std::thread::hardware_concurrency()
            << ", \"kernel\": \"" << u.release << "\", \"compiler\": \"" << __VERSION__
            << "\", \"examples\": " << examples << ", \"groups\": " << groups
            << ", \"resamples\": " << resamples << ", \"runs\": " << runs
            << ", \"median_ms\": {\"total\": " << median(total_ms)
            << ", \"parse_scores\": " << median(parse_ms) << ", \"evaluate\": " << median(eval_ms)
            << ", \"reports\": " << median(report_ms)
            << "}, \"min_total_ms\": " << *std::min_element(total_ms.begin(), total_ms.end())
            << ", \"max_total_ms\": " << *std::max_element(total_ms.begin(), total_ms.end())
            << "}\n";
  return 0;
}
