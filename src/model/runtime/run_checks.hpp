// Checks and clocks every runtime shares: the wall time of a stage, the working memory a batch
// would need (refused before anything is allocated), and the finiteness of a model's outputs
// (NaN weights must not yield a results file of nulls). Internal to src/model.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace winokit::detail {

double seconds_since(std::chrono::steady_clock::time_point start);

// UsageError "--batch-size N needs about X GB of working memory; this machine has Y GB" (hint:
// lower --batch-size) when `bytes` is over 3/4 of the machine's memory.
void check_working_memory(double bytes, int batch);

// InputError naming `source` and `what` ("image ex_3_img_1", "caption \"a dog\"") when one of
// the `n` values is NaN or infinite.
void check_finite(const float* values, std::size_t n, const std::string& source,
                  const std::string& what);

}  // namespace winokit::detail
