// A small, fully specified random generator so that seeded results are identical on every
// platform and compiler (std::uniform_int_distribution is implementation-defined).
//
//   winokit::Rng rng(winokit::derive_seed(42, "bootstrap/overall"));
//   std::uint32_t i = rng.below(400);   // uniform in [0, 400)
//   double u = rng.uniform();           // uniform in [0, 1)
#pragma once

#include <cstdint>
#include <string_view>

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

// Mixes a user seed with a name, so each named stream is independent of the others and of the
// order in which streams are used.
std::uint64_t derive_seed(std::uint64_t seed, std::string_view name);

}  // namespace winokit
