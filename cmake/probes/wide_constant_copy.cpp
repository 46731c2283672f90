// Probe run by cmake/CompilerChecks.cmake at configure time, once per set of compile flags the
// build uses. It copies 32- and 64-byte constants whose 8-byte words are x, x, ..., 0: GCC 12.2
// with AVX and 256-bit (or 512-bit) "by pieces" moves (Intel AVX-512 tunings such as
// -march=rocketlake, or any AVX-512 code generation) stores such a constant as a broadcast of x,
// so {0.5, 0.5, 0.5, 0} arrives as four halves (docs/design.md, "The baseline and the GCC 12
// constant bug"). Exit status 0: every copy is right.
#include <cstdio>
#include <cstring>

namespace {

template <int N>
struct Words {
  long long w[N];
};

#define WINOKIT_PROBE_COPY(name, N, ...)               \
  __attribute__((noinline)) void name(Words<N>* out) { \
    const long long c[N] = {__VA_ARGS__};              \
    std::memcpy(out->w, c, sizeof c);                  \
  }

WINOKIT_PROBE_COPY(copy_xx00, 4, 5, 5, 0, 0)
WINOKIT_PROBE_COPY(copy_xxx0, 4, 0x3FE0000000000000LL, 0x3FE0000000000000LL, 0x3FE0000000000000LL,
                   0)
WINOKIT_PROBE_COPY(copy_x7_0, 8, 5, 5, 5, 5, 5, 5, 5, 0)
WINOKIT_PROBE_COPY(copy_x000, 4, 5, 0, 0, 0)
WINOKIT_PROBE_COPY(copy_mmm0, 4, -1, -1, -1, 0)

template <int N>
int check(void (*copy)(Words<N>*), const Words<N>& want, const char* name) {
  Words<N> got;
  std::memset(&got, 0x77, sizeof got);
  copy(&got);
  if (std::memcmp(&got, &want, sizeof got) == 0) return 0;
  std::printf("%s: wrong copy\n", name);
  return 1;
}

}  // namespace

int main() {
  const long long h = 0x3FE0000000000000LL;  // the bits of 0.5
  int wrong = 0;
  wrong += check<4>(copy_xx00, {{5, 5, 0, 0}}, "x,x,0,0");
  wrong += check<4>(copy_xxx0, {{h, h, h, 0}}, "0.5,0.5,0.5,0");
  wrong += check<8>(copy_x7_0, {{5, 5, 5, 5, 5, 5, 5, 0}}, "x*7,0");
  wrong += check<4>(copy_x000, {{5, 0, 0, 0}}, "x,0,0,0");
  wrong += check<4>(copy_mmm0, {{-1, -1, -1, 0}}, "-1,-1,-1,0");
  return wrong == 0 ? 0 : 1;
}
