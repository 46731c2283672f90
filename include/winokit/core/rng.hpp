// A small, fully specified random generator so that seeded results are identical on every
// platform and compiler (std::uniform_int_distribution is implementation-defined).
//
//   winokit::Rng rng(winokit::derive_seed(42, "bootstrap/overall"));
//   std::uint32_t i = rng.below(400);   // uniform in [0, 400)
//   double u = rng.uniform();           // uniform in [0, 1)
//
//   winokit::PythonRandom py(0);        // Python's random.seed(0)
//   auto ids = winokit::python_shuffled_range(400, 0);  // random.shuffle(list(range(400)))
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(core);

namespace winokit {

// xoshiro256** (Blackman & Vigna 2018), state filled by splitmix64 from one 64-bit seed.
class Rng {
 public:
  explicit Rng(std::uint64_t seed);
  std::uint64_t next();
  // Uniform integer in [0, bound) by Lemire's multiply-and-reject method (no modulo bias).
  std::uint32_t below(std::uint32_t bound);
  // Uniform double in [0, 1) with 53 random bits.
  double uniform();

 private:
  std::uint64_t s_[4];
};

std::uint64_t splitmix64(std::uint64_t& state);

// Fisher-Yates from the back (i = n..2: swap v[i-1] with v[below(i)]): the one shuffle every
// seeded result uses, so a given seed gives the same order everywhere.
template <class T>
void shuffle(std::vector<T>& v, Rng& rng) {
  for (std::size_t i = v.size(); i > 1; --i)
    std::swap(v[i - 1], v[rng.below(static_cast<std::uint32_t>(i))]);
}

// Makes v[0..k) a uniform random k-subset in random order (Fisher-Yates from the front, stopped
// after k steps); the rest of v keeps the other elements.
template <class T>
void partial_shuffle(std::vector<T>& v, std::size_t k, Rng& rng) {
  for (std::size_t i = 0; i < k && i < v.size(); ++i)
    std::swap(v[i], v[i + rng.below(static_cast<std::uint32_t>(v.size() - i))]);
}

// CPython's `random` module, bit for bit: the Mersenne Twister MT19937 (Matsumoto & Nishimura
// 1998) seeded as `random.seed(n)` seeds it from a non-negative int (init_by_array over n's
// 32-bit words, least significant first; [0] for 0), with `getrandbits`, `_randbelow` (draw
// bit_length(n) bits, reject values >= n) and `shuffle` (i from len-1 down to 1: swap x[i] with
// x[_randbelow(i + 1)]) as in Lib/random.py and Modules/_randommodule.c. Only for reproducing
// figures that published Python code computed with `random`; winokit's own seeded results use
// Rng.
class PythonRandom {
 public:
  explicit PythonRandom(std::uint64_t seed);
  std::uint32_t next_u32();                  // genrand_uint32
  std::uint64_t getrandbits(unsigned k);     // k in [0, 64]
  std::uint64_t randbelow(std::uint64_t n);  // n >= 1; uniform in [0, n)
  template <class T>
  void shuffle(std::vector<T>& v) {
    for (std::size_t i = v.size(); i-- > 1;)
      std::swap(v[i], v[static_cast<std::size_t>(randbelow(i + 1))]);
  }

 private:
  static constexpr std::size_t kStateWords = 624;
  std::array<std::uint32_t, kStateWords> mt_{};
  std::size_t index_ = kStateWords;
};

// The list Python leaves in `ids` after `random.seed(seed); ids = list(range(n));
// random.shuffle(ids)`.
std::vector<std::size_t> python_shuffled_range(std::size_t n, std::uint64_t seed);

// Mixes a user seed with a name, so each named stream is independent of the others and of the
// order in which streams are used.
std::uint64_t derive_seed(std::uint64_t seed, std::string_view name);

}  // namespace winokit
