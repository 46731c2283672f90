// Reports of any registered benchmark (winokit/eval/benchmark.hpp), from its format-neutral
// summary: headline metrics with N and interval, then each report section as a table. A new
// report format is one more writer here, and every benchmark gets it.
//
//   winokit::BenchmarkSummary s = benchmark.evaluate(data, scores, {});
//   std::string md = winokit::summary_markdown(benchmark, data, s, "clip-b32", provenance);
//   nlohmann::json j = winokit::summary_json(benchmark, data, s, "clip-b32", provenance);
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "winokit/eval/benchmark.hpp"
#include "winokit/eval/compare.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(report);

namespace winokit {

std::string summary_markdown(const Benchmark& benchmark, const BenchmarkData& data,
                             const BenchmarkSummary& summary, const std::string& model,
                             const nlohmann::json& provenance);
nlohmann::json summary_json(const Benchmark& benchmark, const BenchmarkData& data,
                            const BenchmarkSummary& summary, const std::string& model,
                            const nlohmann::json& provenance);
// One CSV row per item of summary.details["per_item"] (columns: "id", then the union of the
// other keys in alphabetical order).
std::string summary_per_item_csv(const BenchmarkSummary& summary);

// `compare --benchmark NAME`: accuracy per check and subset with intervals, then the paired
// tests (discordant counts, exact McNemar p, paired bootstrap interval of the difference).
std::string benchmark_compare_markdown(const BenchmarkCompareResult& result,
                                       const std::string& title);
nlohmann::json benchmark_compare_json(const BenchmarkCompareResult& result,
                                      const nlohmann::json& provenance);
// One row per item: id, subset, then one 0/1 column per run and check ("RUN: CHECK").
std::string benchmark_compare_per_item_csv(const BenchmarkCompareResult& result);

}  // namespace winokit
