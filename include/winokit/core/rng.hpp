// A small, fully specified random generator so that seeded results are identical on every
// platform and compiler (std::uniform_int_distribution is implementation-defined).
//
//   winokit::Rng rng(winokit::derive_seed(42, "bootstrap/overall"));
//   std::uint32_t i = rng.below(400);   // uniform in [0, 400)
//   double u = rng.uniform();           // uniform in [0, 1)
#pragma once

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

// Mixes a user seed with a name, so each named stream is independent of the others and of the
// order in which streams are used.
std::uint64_t derive_seed(std::uint64_t seed, std::string_view name);

}  // namespace winokit
