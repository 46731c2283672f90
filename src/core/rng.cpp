#include "winokit/core/rng.hpp"

#include "winokit/core/hash.hpp"

#include <algorithm>

namespace winokit {

namespace {
inline std::uint64_t rotl(std::uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}
}  // namespace

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

Rng::Rng(std::uint64_t seed) {
  std::uint64_t state = seed;
  for (auto& word : s_)
    word = splitmix64(state);
}

std::uint64_t Rng::next() {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

std::uint32_t Rng::below(std::uint32_t bound) {
  // Lemire, "Fast Random Integer Generation in an Interval" (2019).
  std::uint64_t m = static_cast<std::uint64_t>(static_cast<std::uint32_t>(next() >> 32)) * bound;
  auto low = static_cast<std::uint32_t>(m);
  if (low < bound) {
    const std::uint32_t threshold = (0u - bound) % bound;
    while (low < threshold) {
      m = static_cast<std::uint64_t>(static_cast<std::uint32_t>(next() >> 32)) * bound;
      low = static_cast<std::uint32_t>(m);
    }
  }
  return static_cast<std::uint32_t>(m >> 32);
}

double Rng::uniform() {
  constexpr double kTwoToMinus53 = 1.0 / 9007199254740992.0;
  return static_cast<double>(next() >> 11) * kTwoToMinus53;
}

namespace {
// MT19937 constants (Matsumoto & Nishimura 1998; CPython's Modules/_randommodule.c).
constexpr std::size_t kMtM = 397;
constexpr std::uint32_t kMatrixA = 0x9908b0dfU;
constexpr std::uint32_t kUpperMask = 0x80000000U;
constexpr std::uint32_t kLowerMask = 0x7fffffffU;
constexpr std::uint32_t kInitSeed = 19650218U;
constexpr unsigned kWordBits = 32;
}  // namespace

PythonRandom::PythonRandom(std::uint64_t seed) {
  // init_genrand(19650218)
  mt_[0] = kInitSeed;
  for (std::size_t i = 1; i < kStateWords; ++i) {
    mt_[i] = 1812433253U * (mt_[i - 1] ^ (mt_[i - 1] >> 30)) + static_cast<std::uint32_t>(i);
  }
  // The key: the seed's 32-bit words, least significant first; one zero word for 0.
  std::vector<std::uint32_t> key;
  for (std::uint64_t n = seed; n != 0; n >>= kWordBits)
    key.push_back(static_cast<std::uint32_t>(n));
  if (key.empty()) key.push_back(0);
  // init_by_array
  std::size_t i = 1, j = 0;
  for (std::size_t k = std::max(kStateWords, key.size()); k > 0; --k) {
    mt_[i] = (mt_[i] ^ ((mt_[i - 1] ^ (mt_[i - 1] >> 30)) * 1664525U)) + key[j] +
             static_cast<std::uint32_t>(j);
    ++i;
    ++j;
    if (i >= kStateWords) {
      mt_[0] = mt_[kStateWords - 1];
      i = 1;
    }
    if (j >= key.size()) j = 0;
  }
  for (std::size_t k = kStateWords - 1; k > 0; --k) {
    mt_[i] = (mt_[i] ^ ((mt_[i - 1] ^ (mt_[i - 1] >> 30)) * 1566083941U)) -
             static_cast<std::uint32_t>(i);
    ++i;
    if (i >= kStateWords) {
      mt_[0] = mt_[kStateWords - 1];
      i = 1;
    }
  }
  mt_[0] = kUpperMask;  // MSB is 1, assuring a non-zero initial array
  index_ = kStateWords;
}

std::uint32_t PythonRandom::next_u32() {
  if (index_ >= kStateWords) {
    auto twist = [](std::uint32_t a, std::uint32_t b) {
      std::uint32_t y = (a & kUpperMask) | (b & kLowerMask);
      return (y >> 1) ^ ((y & 1U) ? kMatrixA : 0U);
    };
    std::size_t k = 0;
    for (; k < kStateWords - kMtM; ++k)
      mt_[k] = mt_[k + kMtM] ^ twist(mt_[k], mt_[k + 1]);
    for (; k < kStateWords - 1; ++k)
      mt_[k] = mt_[k + kMtM - kStateWords] ^ twist(mt_[k], mt_[k + 1]);
    mt_[kStateWords - 1] = mt_[kMtM - 1] ^ twist(mt_[kStateWords - 1], mt_[0]);
    index_ = 0;
  }
  std::uint32_t y = mt_[index_++];
  y ^= (y >> 11);
  y ^= (y << 7) & 0x9d2c5680U;
  y ^= (y << 15) & 0xefc60000U;
  y ^= (y >> 18);
  return y;
}

std::uint64_t PythonRandom::getrandbits(unsigned k) {
  if (k == 0) return 0;
  if (k <= kWordBits) return next_u32() >> (kWordBits - k);
  // CPython fills 32-bit words from the least significant one; the last keeps its top bits.
  std::uint64_t low = next_u32();
  std::uint64_t high = next_u32() >> (2 * kWordBits - std::min(k, 2 * kWordBits));
  return low | (high << kWordBits);
}

std::uint64_t PythonRandom::randbelow(std::uint64_t n) {
  unsigned k = 0;
  for (std::uint64_t v = n; v != 0; v >>= 1)
    ++k;  // n.bit_length()
  std::uint64_t r = getrandbits(k);
  while (r >= n)
    r = getrandbits(k);
  return r;
}

std::vector<std::size_t> python_shuffled_range(std::size_t n, std::uint64_t seed) {
  std::vector<std::size_t> ids(n);
  for (std::size_t i = 0; i < n; ++i)
    ids[i] = i;
  PythonRandom rng(seed);
  rng.shuffle(ids);
  return ids;
}

std::uint64_t derive_seed(std::uint64_t seed, std::string_view name) {
  std::uint64_t state = seed ^ fnv1a64(name);
  return splitmix64(state);
}

}  // namespace winokit
