// The operations of src/model/kernels/ops.hpp against plain definitions, and on the bit grid the
// GEMM has (test_gemm.cpp): every operation gives the same bits on the kernel the CPU picks, on
// the AVX2 and on the portable kernel, on 1 and 2 threads, for odd shapes; an attention task or a
// row has the bits it has alone whatever else is in the call. And the layering rule that keeps it
// so: no `#pragma omp`, no matmul_block and no PackedMatrix outside src/model/kernels/.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "model/kernel_test_util.hpp"
#include "model/kernels/ops.hpp"

namespace winokit {
namespace {

using namespace testing_kernels;

// Runs op() on every kernel and on 1 and 2 threads: each result has the bits of the first
// (dispatched, 1 thread).
void expect_same_bits_everywhere(const std::string& what,
                                 const std::function<std::vector<float>()>& op) {
  KernelSettings restore;
  use_kernel(Kernel::Dispatched);
  omp_set_num_threads(1);
  const std::vector<float> first = op();
  ASSERT_FALSE(first.empty()) << what;
  for (Kernel kernel : kAllKernels) {
    const char* name = use_kernel(kernel);
    for (int threads : {1, 2}) {
      omp_set_num_threads(threads);
      const std::vector<float> again = op();
      ASSERT_EQ(again.size(), first.size()) << what;
      ASSERT_TRUE(same_bits(again.data(), first.data(), first.size()))
          << what << ": kernel=" << name << " threads=" << threads;
    }
  }
}

// ---- attention ----

// softmax(scale q.k) v over the visible keys, in double.
std::vector<double> reference_head(const detail::HeadTask& t, int d, float scale) {
  std::vector<double> out(static_cast<std::size_t>(t.queries) * d);
  for (int i = 0; i < t.queries; ++i) {
    const int visible = t.causal_past >= 0 ? t.causal_past + i + 1 : t.keys;
    std::vector<double> p(static_cast<std::size_t>(visible));
    double mx = -1e300, sum = 0;
    for (int j = 0; j < visible; ++j) {
      double dot = 0;
      for (int c = 0; c < d; ++c)
        dot += static_cast<double>(t.q[static_cast<std::size_t>(i) * t.ldq + c]) *
               t.k[static_cast<std::size_t>(j) * t.ldkv + c];
      p[static_cast<std::size_t>(j)] = dot * scale;
      mx = std::max(mx, p[static_cast<std::size_t>(j)]);
    }
    for (double& v : p)
      sum += (v = std::exp(v - mx));
    for (int c = 0; c < d; ++c) {
      double o = 0;
      for (int j = 0; j < visible; ++j)
        o += p[static_cast<std::size_t>(j)] / sum * t.v[static_cast<std::size_t>(j) * t.ldkv + c];
      out[static_cast<std::size_t>(i) * d + c] = o;
    }
  }
  return out;
}

// The kinds of attention the families run, as tasks over shared buffers: cross (queries and keys
// from different tensors, more keys than queries), a padding mask (fewer keys than rows), causal
// after a KV cache, causal from position 0, grouped-query (two query heads on one key/value
// head), a single query (SigLIP's probe), and an empty task.
struct AttentionCase {
  int d = 0;
  std::vector<float> q, kv;
  std::vector<detail::HeadTask> tasks;
  std::vector<std::size_t> out_at;  // task t writes rows of d at out_at[t], d apart
  std::size_t out_size = 0;

  explicit AttentionCase(int head) : d(head) {
    const std::size_t ld = 3 * static_cast<std::size_t>(d);  // q rows: three heads side by side
    q = random_vector(40 * ld, 100 + d, 2.0);
    kv = random_vector(60 * 2 * static_cast<std::size_t>(d), 200 + d, 2.0);
    const std::size_t ldkv = 2 * static_cast<std::size_t>(d);
    auto add = [&](int q_row, int q_head, int queries, int kv_row, int keys, int past) {
      detail::HeadTask t;
      t.q = q.data() + static_cast<std::size_t>(q_row) * ld + static_cast<std::size_t>(q_head) * d;
      t.ldq = ld;
      t.queries = queries;
      t.k = kv.data() + static_cast<std::size_t>(kv_row) * ldkv;
      t.v = t.k + d;
      t.ldkv = ldkv;
      t.keys = keys;
      t.ldo = static_cast<std::size_t>(d);
      t.causal_past = past;
      tasks.push_back(t);
      out_at.push_back(out_size);
      out_size += static_cast<std::size_t>(std::max(queries, 1)) * d;
    };
    add(0, 0, 5, 0, 33, -1);    // cross
    add(5, 1, 23, 33, 17, -1);  // padding mask: 17 of the sequence's keys
    add(3, 2, 9, 10, 15, 6);    // causal after 6 cached positions
    add(12, 0, 7, 20, 7, 0);    // causal from position 0
    add(20, 1, 4, 40, 11, -1);  // grouped-query: this head and the next share keys and values
    add(20, 2, 4, 40, 11, -1);
    add(39, 0, 1, 0, 50, -1);  // one query
    add(0, 0, 0, 0, 3, -1);    // nothing to do
  }

  std::vector<float> run(const std::vector<int>& which) const {
    std::vector<float> out(out_size, -7.0f);
    const float scale = 1.0f / std::sqrt(static_cast<float>(d));
    detail::attend_heads(static_cast<int>(which.size()), d, scale, [&](int i) {
      const auto t = static_cast<std::size_t>(which[static_cast<std::size_t>(i)]);
      detail::HeadTask task = tasks[t];
      task.out = out.data() + out_at[t];
      return task;
    });
    return out;
  }
  std::vector<int> all() const {
    std::vector<int> w(tasks.size());
    for (std::size_t i = 0; i < w.size(); ++i)
      w[i] = static_cast<int>(i);
    return w;
  }
};

TEST(Ops, AttentionMatchesSoftmaxAttentionMaskedCrossCausalGroupedQuery) {
  for (int d : {20, 64, 7}) {  // tails in the 16-wide panels, a full panel, less than one
    const AttentionCase c(d);
    const std::vector<float> out = c.run(c.all());
    const float scale = 1.0f / std::sqrt(static_cast<float>(d));
    for (std::size_t t = 0; t < c.tasks.size(); ++t) {
      const auto want = reference_head(c.tasks[t], d, scale);
      for (std::size_t i = 0; i < want.size(); ++i)
        ASSERT_NEAR(out[c.out_at[t] + i], want[i], 2e-5) << "d=" << d << " task " << t << " " << i;
    }
    // The empty task wrote nothing.
    EXPECT_EQ(out[c.out_at.back()], -7.0f);
  }
}

TEST(Ops, AnAttentionTaskHasItsBitsAloneOnEveryKernelAndThreadCount) {
  for (int d : {20, 64, 7}) {
    const AttentionCase c(d);
    expect_same_bits_everywhere("attend_heads d=" + std::to_string(d),
                                [&] { return c.run(c.all()); });
    // Each task alone, and the tasks in reverse order, give the bits of the whole call.
    const std::vector<float> whole = c.run(c.all());
    std::vector<int> reversed = c.all();
    std::reverse(reversed.begin(), reversed.end());
    EXPECT_TRUE(same_bits(c.run(reversed).data(), whole.data(), whole.size())) << "d=" << d;
    for (std::size_t t = 0; t < c.tasks.size(); ++t) {
      const std::vector<float> alone = c.run({static_cast<int>(t)});
      const std::size_t n = static_cast<std::size_t>(c.tasks[t].queries) * d;
      EXPECT_TRUE(same_bits(alone.data() + c.out_at[t], whole.data() + c.out_at[t], n))
          << "d=" << d << " task " << t;
    }
  }
}

TEST(Ops, SingleQueryAttentionMatchesItsDefinition) {
  constexpr int kCount = 3, kTokens = 10, kWidth = 24, kHeads = 3, kD = kWidth / kHeads;
  const auto q = random_vector(kCount * kWidth, 7, 2.0);
  const auto kv = random_vector(kCount * kTokens * 2 * kWidth, 8, 2.0);
  const float scale = 1.0f / std::sqrt(static_cast<float>(kD));
  auto run = [&] {
    std::vector<float> out(kCount * kWidth);
    detail::single_query_attention(q.data(), kv.data(), kCount, kTokens, kWidth, kHeads, scale,
                                   out.data());
    return out;
  };
  const auto out = run();
  for (int n = 0; n < kCount; ++n) {
    for (int h = 0; h < kHeads; ++h) {
      detail::HeadTask t;
      t.q = q.data() + n * kWidth + h * kD;
      t.queries = 1;
      t.k = kv.data() + static_cast<std::size_t>(n) * kTokens * 2 * kWidth + h * kD;
      t.v = t.k + kWidth;
      t.ldkv = 2 * kWidth;
      t.keys = kTokens;
      const auto want = reference_head(t, kD, scale);
      for (int c = 0; c < kD; ++c)
        ASSERT_NEAR(out[static_cast<std::size_t>(n * kWidth + h * kD + c)], want[c], 2e-5);
    }
  }
  expect_same_bits_everywhere("single_query_attention", run);
}

// ---- normalisation, position, activation ----

TEST(Ops, RmsNormRotaryAndSwigluMatchTheirDefinitions) {
  constexpr int kRows = 5, kWidth = 37;
  const auto x = random_vector(kRows * kWidth, 9, 3.0);
  const auto g = random_vector(kWidth, 10);
  auto norm = [&] {
    std::vector<float> y(x.size());
    detail::rms_norm(x.data(), kRows, kWidth, g, 1e-6, y.data());
    return y;
  };
  const auto y = norm();
  for (int r = 0; r < kRows; ++r) {
    double ss = 0;
    for (int i = 0; i < kWidth; ++i)
      ss += static_cast<double>(x[r * kWidth + i]) * x[r * kWidth + i];
    for (int i = 0; i < kWidth; ++i)
      ASSERT_NEAR(y[r * kWidth + i], x[r * kWidth + i] / std::sqrt(ss / kWidth + 1e-6) * g[i],
                  1e-5);
  }
  expect_same_bits_everywhere("rms_norm", norm);

  // Rotary: 3 heads of 10 at the start of rows of 33 (a tail that must stay untouched).
  constexpr int kHeads = 3, kD = 10, kLd = 33;
  const auto rows = random_vector(kRows * kLd, 11, 2.0);
  const auto angle = random_vector(kRows * kD / 2, 12, 3.0);
  std::vector<float> cosv(angle.size()), sinv(angle.size());
  for (std::size_t i = 0; i < angle.size(); ++i) {
    cosv[i] = static_cast<float>(std::cos(angle[i]));
    sinv[i] = static_cast<float>(std::sin(angle[i]));
  }
  auto rotate = [&] {
    std::vector<float> v = rows;
    detail::rotary_rows(v.data(), kRows, kLd, kHeads, kD, cosv.data(), sinv.data());
    return v;
  };
  const auto rotated = rotate();
  for (int r = 0; r < kRows; ++r) {
    for (int h = 0; h < kHeads; ++h) {
      for (int i = 0; i < kD / 2; ++i) {
        const std::size_t a = static_cast<std::size_t>(r * kLd + h * kD + i), b = a + kD / 2;
        const double c = cosv[static_cast<std::size_t>(r * kD / 2 + i)];
        const double s = sinv[static_cast<std::size_t>(r * kD / 2 + i)];
        ASSERT_NEAR(rotated[a], rows[a] * c - rows[b] * s, 1e-6);
        ASSERT_NEAR(rotated[b], rows[b] * c + rows[a] * s, 1e-6);
      }
    }
    for (int i = kHeads * kD; i < kLd; ++i)
      ASSERT_EQ(rotated[static_cast<std::size_t>(r * kLd + i)],
                rows[static_cast<std::size_t>(r * kLd + i)]);
  }
  expect_same_bits_everywhere("rotary_rows", rotate);

  // SwiGLU over rows of gate | up.
  const auto gate_up = random_vector(kRows * 2 * kWidth, 13, 6.0);
  auto swiglu = [&] {
    std::vector<float> out(kRows * kWidth);
    detail::silu_mul_rows(gate_up.data(), kRows, kWidth, out.data());
    return out;
  };
  const auto act = swiglu();
  for (int r = 0; r < kRows; ++r) {
    for (int i = 0; i < kWidth; ++i) {
      const double gv = gate_up[static_cast<std::size_t>(r * 2 * kWidth + i)];
      const double up = gate_up[static_cast<std::size_t>(r * 2 * kWidth + kWidth + i)];
      ASSERT_NEAR(act[static_cast<std::size_t>(r * kWidth + i)], gv / (1 + std::exp(-gv)) * up,
                  1e-5);
    }
  }
  expect_same_bits_everywhere("silu_mul_rows", swiglu);
}

// ---- images ----

TEST(Ops, ImagePatchesAreConvWeightOrderedRows) {
  constexpr int kCount = 2, kChannels = 3, kSide = 12, kPatch = 4, kGrid = kSide / kPatch;
  const auto pixels = random_vector(kCount * kChannels * kSide * kSide, 14);
  const std::size_t k = kChannels * kPatch * kPatch;
  std::vector<float> cols(kCount * kGrid * kGrid * k);
  detail::image_patches(pixels.data(), kCount, kChannels, kSide, kPatch, cols.data());
  for (int b = 0; b < kCount; ++b)
    for (int gy = 0; gy < kGrid; ++gy)
      for (int gx = 0; gx < kGrid; ++gx)
        for (int c = 0; c < kChannels; ++c)
          for (int y = 0; y < kPatch; ++y)
            for (int x = 0; x < kPatch; ++x) {
              const std::size_t row = static_cast<std::size_t>((b * kGrid + gy) * kGrid + gx);
              const float got =
                  cols[row * k + static_cast<std::size_t>((c * kPatch + y) * kPatch + x)];
              const float want = pixels[static_cast<std::size_t>(
                  ((b * kChannels + c) * kSide + gy * kPatch + y) * kSide + gx * kPatch + x)];
              ASSERT_EQ(got, want)
                  << b << " " << gy << " " << gx << " " << c << " " << y << " " << x;
            }
}

// y[oh][ow][o] = bias + sum over (kh, kw, i) of w[o][kh][kw][i] x[ih][iw][i], zero padding.
std::vector<double> reference_conv(const std::vector<float>& w, const std::vector<float>& bias,
                                   const detail::FeatureMap& x, int out, int k, int stride,
                                   int pad) {
  const int os = (x.side + 2 * pad - k) / stride + 1, in = x.channels;
  std::vector<double> y(static_cast<std::size_t>(os) * os * out);
  for (int oh = 0; oh < os; ++oh)
    for (int ow = 0; ow < os; ++ow)
      for (int o = 0; o < out; ++o) {
        double s = bias[static_cast<std::size_t>(o)];
        for (int kh = 0; kh < k; ++kh)
          for (int kw = 0; kw < k; ++kw) {
            const int ih = oh * stride + kh - pad, iw = ow * stride + kw - pad;
            if (ih < 0 || iw < 0 || ih >= x.side || iw >= x.side) continue;
            for (int i = 0; i < in; ++i)
              s += static_cast<double>(
                       w[static_cast<std::size_t>(((o * k + kh) * k + kw) * in + i)]) *
                   x.data[static_cast<std::size_t>((ih * x.side + iw) * in + i)];
          }
        y[static_cast<std::size_t>((oh * os + ow) * out + o)] = s;
      }
  return y;
}

TEST(Ops, ConvolutionMatchesItsDefinitionWholeOrChunkByChunk) {
  struct Shape {
    int side, in, out, k, stride, pad;
  };
  // 3x3 stride 1 (a 48 x 48 map: 2,304 output rows, more than one chunk when a thread runs the
  // image alone), 3x3 stride 2 with an odd side, 1x1 (a plain product), 5x5 on 3 channels.
  for (const Shape s : {Shape{48, 8, 12, 3, 1, 1}, Shape{13, 5, 7, 3, 2, 1},
                        Shape{9, 6, 17, 1, 1, 0}, Shape{11, 3, 4, 5, 1, 2}}) {
    const std::string what = "conv side " + std::to_string(s.side) + " k " + std::to_string(s.k) +
                             " stride " + std::to_string(s.stride);
    const auto w = random_vector(static_cast<std::size_t>(s.out) * s.k * s.k * s.in, 15, 0.5);
    const auto bias = random_vector(static_cast<std::size_t>(s.out), 16);
    const detail::Conv2d conv =
        detail::Conv2d::channels_last(w, bias, s.in, s.out, s.k, s.stride, s.pad);
    detail::FeatureMap x;
    x.resize(s.side, s.in);
    x.data = random_vector(x.data.size(), 17, 2.0);
    const auto want = reference_conv(w, bias, x, s.out, s.k, s.stride, s.pad);
    for (bool relu : {false, true}) {
      for (bool accumulate : {false, true}) {
        const int os = conv.out_side(s.side);
        const auto start = random_vector(static_cast<std::size_t>(os) * os * s.out, 18);
        auto run = [&] {
          detail::FeatureMap y;
          if (accumulate) {
            y.resize(os, s.out);
            y.data = start;
          }
          std::vector<float> patches;
          detail::conv2d(conv, x, y, patches, relu, accumulate);
          return y.data;
        };
        const auto got = run();
        ASSERT_EQ(got.size(), want.size()) << what;
        for (std::size_t i = 0; i < want.size(); ++i) {
          double v = want[i] + (accumulate ? start[i] : 0.0);
          if (relu) v = std::max(v, 0.0);
          ASSERT_NEAR(got[i], v, 1e-4) << what << " relu " << relu << " acc " << accumulate;
        }
        expect_same_bits_everywhere(what, run);
        // One image per thread (inside a parallel region): chunk by chunk, the same bits.
        std::vector<float> inside[2];
#pragma omp parallel num_threads(2)
        { inside[omp_get_thread_num()] = run(); }
        for (const auto& v : inside)
          ASSERT_TRUE(same_bits(v.data(), got.data(), got.size())) << what << " in a region";
      }
    }
  }
}

TEST(Ops, AveragePoolAndTokenPoolingMatchTheirDefinitions) {
  detail::FeatureMap x;
  x.resize(7, 5);  // an odd side: the last row and column are dropped, as nn.AvgPool2d(2)
  x.data = random_vector(x.data.size(), 19, 2.0);
  auto pool = [&] {
    detail::FeatureMap y;
    detail::avg_pool2d(x, 2, y);
    return y.data;
  };
  const auto y = pool();
  ASSERT_EQ(y.size(), 3u * 3u * 5u);
  for (int oh = 0; oh < 3; ++oh)
    for (int ow = 0; ow < 3; ++ow)
      for (int c = 0; c < 5; ++c) {
        float s = 0;
        for (int kh = 0; kh < 2; ++kh)
          for (int kw = 0; kw < 2; ++kw)
            s += x.data[static_cast<std::size_t>(((oh * 2 + kh) * 7 + ow * 2 + kw) * 5 + c)];
        ASSERT_EQ(y[static_cast<std::size_t>((oh * 3 + ow) * 5 + c)], s / 4.0f);
      }
  expect_same_bits_everywhere("avg_pool2d", pool);

  constexpr int kCount = 3, kLen = 6, kWidth = 9;
  const auto rows = random_vector(kCount * kLen * kWidth, 20, 2.0);
  const int tokens[kCount] = {6, 1, 4};
  auto pooled = [&] {
    std::vector<float> mean(kCount * kWidth), max(kCount * kWidth);
    detail::mean_max_over_tokens(rows.data(), kCount, kLen, kWidth, tokens, mean.data(),
                                 max.data());
    mean.insert(mean.end(), max.begin(), max.end());
    return mean;
  };
  const auto mm = pooled();
  for (int b = 0; b < kCount; ++b)
    for (int i = 0; i < kWidth; ++i) {
      double sum = 0;
      float mx = -1e30f;
      for (int t = 0; t < tokens[b]; ++t) {
        const float v = rows[static_cast<std::size_t>((b * kLen + t) * kWidth + i)];
        sum += v;
        mx = std::max(mx, v);
      }
      EXPECT_EQ(mm[static_cast<std::size_t>(b * kWidth + i)], static_cast<float>(sum / tokens[b]));
      EXPECT_EQ(mm[static_cast<std::size_t>(kCount * kWidth + b * kWidth + i)], mx);
    }
  expect_same_bits_everywhere("mean_max_over_tokens", pooled);
}

// ---- layering ----

// Threads, block products and packed matrices belong to the kernels' folder: a family, runtime,
// layer, command or report that needs one calls ops.hpp, gemm.hpp or parallel.hpp instead (the
// seam a second backend plugs into).
TEST(ModelLayering, NoThreadsOrBlockProductsOutsideTheKernels) {
  const std::filesystem::path root = WINOKIT_SOURCE_DIR;
  const std::filesystem::path kernels = root / "src/model/kernels";
  const std::regex omp_call(R"((^|[^A-Za-z0-9_])omp_[a-z_]+\s*\()");
  std::size_t scanned = 0;
  for (const char* top : {"src", "tools", "include"}) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(root / top)) {
      const auto ext = e.path().extension();
      if (!e.is_regular_file() || (ext != ".cpp" && ext != ".hpp" && ext != ".h")) continue;
      if (e.path().parent_path() == kernels) continue;
      ++scanned;
      std::ifstream in(e.path());
      std::stringstream text;
      text << in.rdbuf();
      const std::string s = text.str();
      for (const char* word : {"#pragma omp", "<omp.h>", "matmul_block", "PackedMatrix"})
        EXPECT_EQ(s.find(word), std::string::npos)
            << e.path().lexically_relative(root) << " holds " << word;
      EXPECT_FALSE(std::regex_search(s, omp_call))
          << e.path().lexically_relative(root) << " calls the OpenMP runtime";
    }
  }
  EXPECT_GT(scanned, 150u);
}

}  // namespace
}  // namespace winokit
