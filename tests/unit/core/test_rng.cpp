// The Python-compatible generator against values printed by CPython 3.11 itself:
//   random.seed(s); [random.getrandbits(32) for _ in range(3)], random.getrandbits(64),
//   random.getrandbits(7), random.randrange(1000)
//   random.seed(s); ids = list(range(n)); random.shuffle(ids)
#include <gtest/gtest.h>

#include <numeric>

#include "winokit/core/rng.hpp"

using namespace winokit;

namespace {

struct Draws {
  std::uint64_t seed;
  std::array<std::uint64_t, 3> u32;
  std::uint64_t u64;
  std::uint64_t bits7;
  std::uint64_t below1000;
};

}  // namespace

TEST(PythonRandom, DrawsMatchCPython) {
  const Draws cases[] = {
      {0, {3626764237, 1654615998, 3255389356}, 7758176404715800194ULL, 5, 265},
      {1, {577090037, 2444712010, 3639700191}, 14089154938208861744ULL, 8, 261},
      {42, {2746317213, 478163327, 107420369}, 5073395517033431291ULL, 31, 228},
      // Seeds above 2^32 are keyed by two 32-bit words.
      {4294967301ULL, {675479763, 2085189291, 1213270837}, 11150208843425918570ULL, 106, 14},
      {123456789012345ULL, {2896848117, 946991832, 1255537387}, 4147583180012369542ULL, 99, 537},
  };
  for (const auto& c : cases) {
    PythonRandom py(c.seed);
    for (auto v : c.u32)
      EXPECT_EQ(py.getrandbits(32), v) << "seed " << c.seed;
    EXPECT_EQ(py.getrandbits(64), c.u64) << "seed " << c.seed;
    EXPECT_EQ(py.getrandbits(7), c.bits7) << "seed " << c.seed;
    EXPECT_EQ(py.randbelow(1000), c.below1000) << "seed " << c.seed;
  }
}

TEST(PythonRandom, ShuffleMatchesCPython) {
  struct Case {
    std::uint64_t seed;
    std::vector<std::size_t> expected;
  };
  const Case cases[] = {
      {0, {7, 8, 1, 5, 3, 4, 2, 0, 9, 6}},
      {1, {3, 6, 5, 2, 0, 4, 1}},
      {42, {7, 6, 2, 9, 12, 5, 11, 8, 3, 4, 0, 1, 10}},
      {0, {0}},
      {0, {0, 1}},
      {4294967301ULL, {1, 5, 3, 6, 0, 4, 8, 7, 2}},
      {7, {4, 0, 3, 1, 2}},
      {0, {3,  14, 10, 17, 5, 0,  7,  21, 19, 18, 23, 25, 4,  2,
           22, 6,  11, 20, 9, 26, 15, 16, 8,  1,  13, 24, 12, 27}},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(python_shuffled_range(c.expected.size(), c.seed), c.expected)
        << "seed " << c.seed << ", n " << c.expected.size();
  }
}

TEST(PythonRandom, ShuffleOf400MatchesCPython) {
  // random.seed(0); ids = list(range(400)); random.shuffle(ids): the Winoground paper's folds.
  auto ids = python_shuffled_range(400, 0);
  const std::vector<std::size_t> head = {150, 381, 6, 4, 65, 62, 36, 299, 185, 279, 28, 191};
  const std::vector<std::size_t> tail = {132, 20, 215, 388, 197};
  EXPECT_EQ(std::vector<std::size_t>(ids.begin(), ids.begin() + 12), head);
  EXPECT_EQ(std::vector<std::size_t>(ids.end() - 5, ids.end()), tail);
  // sum(i * ids[i]) pins down every position.
  std::uint64_t weighted = 0;
  for (std::size_t i = 0; i < ids.size(); ++i)
    weighted += i * ids[i];
  EXPECT_EQ(weighted, 15881858u);
}

TEST(PythonRandom, EmptyShuffleDrawsNothing) {
  EXPECT_TRUE(python_shuffled_range(0, 0).empty());
  PythonRandom a(0), b(0);
  std::vector<int> empty;
  a.shuffle(empty);
  EXPECT_EQ(a.next_u32(), b.next_u32());
}
