// Items spread over the OpenMP pool with exceptions kept: an exception may not leave an OpenMP
// region, so each item's is caught and the first (by index) is handed back once every item has
// run. Internal to src/model.
//
//   auto f = detail::for_each_item(n, true, [&](int i) { work(i); });
//   if (f) std::rethrow_exception(f);
#pragma once

#include <cstddef>
#include <exception>
#include <vector>

namespace winokit::detail {

// Runs item(i) for i in [0, n): one item at a time per thread (dynamic schedule) when `parallel`,
// in order on this thread otherwise. Returns the exception of the first item that threw, or null.
template <class Item>
std::exception_ptr for_each_item(int n, bool parallel, const Item& item) {
  std::vector<std::exception_ptr> failures(n > 0 ? static_cast<std::size_t>(n) : 0);
#pragma omp parallel for schedule(dynamic, 1) if (parallel && n > 1)
  for (int i = 0; i < n; ++i) {
    try {
      item(i);
    } catch (...) {
      failures[static_cast<std::size_t>(i)] = std::current_exception();
    }
  }
  for (const std::exception_ptr& f : failures)
    if (f) return f;
  return nullptr;
}

}  // namespace winokit::detail
