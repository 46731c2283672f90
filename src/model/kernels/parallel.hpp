// The OpenMP loops of winokit: outside src/model/kernels/ no file writes `#pragma omp`
// (tests/unit/model/test_ops.cpp checks); it calls these.
//
// for_each_item spreads items over the pool with exceptions kept: an exception may not leave an
// OpenMP region, so each item's is caught and the first (by index) is handed back once every item
// has run.
//
//   auto f = detail::for_each_item(n, true, [&](int i) { work(i); });
//   if (f) std::rethrow_exception(f);
//
// parallel_for is the plain loop for element-wise or row-wise work that cannot throw.
#pragma once

#include <omp.h>

#include <cstddef>
#include <exception>
#include <vector>

namespace winokit::detail {

// Whether the calling thread runs inside an active parallel region (one item per thread): the
// operations then run on it alone.
inline bool in_parallel() {
  return omp_in_parallel() != 0;
}

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

// for_each_item with a Scratch (default-constructed) per thread, reused item to item:
// item(i, scratch).
template <class Scratch, class Item>
std::exception_ptr for_each_item_with(int n, bool parallel, const Item& item) {
  std::vector<std::exception_ptr> failures(n > 0 ? static_cast<std::size_t>(n) : 0);
#pragma omp parallel if (parallel && n > 1)
  {
    Scratch scratch;
#pragma omp for schedule(dynamic, 1)
    for (int i = 0; i < n; ++i) {
      try {
        item(i, scratch);
      } catch (...) {
        failures[static_cast<std::size_t>(i)] = std::current_exception();
      }
    }
  }
  for (const std::exception_ptr& f : failures)
    if (f) return f;
  return nullptr;
}

// body(i) for i in [0, n), split into equal consecutive ranges over the compute threads (static
// schedule); on the calling thread alone inside a parallel region or when n < min_parallel. The
// body must not throw.
template <class Index, class Body>
void parallel_for(Index n, const Body& body, Index min_parallel = 2) {
#pragma omp parallel for schedule(static) if (n >= min_parallel)
  for (Index i = 0; i < n; ++i)
    body(i);
}

// As parallel_for, the iterations handed out `chunk` at a time as threads come free (dynamic
// schedule): for items of uneven cost.
template <class Index, class Body>
void parallel_for_dynamic(Index n, Index chunk, const Body& body) {
#pragma omp parallel for schedule(dynamic, chunk)
  for (Index i = 0; i < n; ++i)
    body(i);
}

}  // namespace winokit::detail
