// The dense building blocks every model runs on, on winokit's own kernels (kernels.hpp): a fully
// connected layer y = act(x W^T + b), attention over packed sequences, LayerNorm and softmax.
// Each output row's bits depend only on that row's input and the layer, never on how many rows
// share the call, their order, the thread count or the CPU (CONTRIBUTING, "Results that do not
// depend on the CPU").
// x: [M, K] row-major, W: [N, K] (PyTorch Linear layout), y: [M, N].
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "model/kernels/kernels.hpp"

namespace winokit::detail {

// In-place softmax of row[0..n): the max subtracted, exp (kernels.hpp's, the same bits on every
// CPU), the sum in index order, then each value times 1 / sum.
void softmax_inplace(float* row, std::size_t n);
// softmax_inplace of each of `rows` rows of n values, ld apart: the same operations on every
// row, so the same bits; the max and sum chains of several rows are interleaved so that their
// latencies overlap.
void softmax_rows(float* x, std::size_t ld, int rows, std::size_t n);

enum class PostOp { None, QuickGelu, Gelu, GeluTanh };  // GeluTanh: GPT-2's gelu_new

// y = epilogue(a W^T) for m rows (a: row stride lda, y: row stride ldy), on the compute threads,
// or on the calling thread alone inside a parallel region (kernels.hpp's invariant holds).
void matmul(const float* a, std::size_t lda, int m, const PackedMatrix& w, float* y,
            std::size_t ldy, const Epilogue& ep);

class Linear {
 public:
  Linear();
  // `accumulate`: forward() adds to y instead of overwriting it (y += x W^T + b), as the
  // residual connections need.
  Linear(const std::vector<float>& weight, const std::vector<float>& bias, int n, int k,
         PostOp post = PostOp::None, bool accumulate = false);
  Linear(Linear&&) noexcept;
  Linear& operator=(Linear&&) noexcept;
  ~Linear();
  // y = layer(x) for m rows, on the compute threads (or on the calling thread alone when called
  // from inside a parallel region).
  void forward(const float* x, int m, float* y) const;
  int n() const { return n_; }
  int k() const { return k_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int n_ = 0, k_ = 0;
};

// Plain reference GEMM (double accumulation) for tests: y = x W^T + b.
void reference_linear(const float* x, int m, const std::vector<float>& weight,
                      const std::vector<float>& bias, int n, int k, float* y);

// LayerNorm over each of `rows` rows of `width` floats, statistics in double (mean, then the
// biased variance), as torch.nn.LayerNorm: y = (x - mean) / sqrt(var + eps) * g + b. Rows are
// independent, so results do not depend on the row count or the thread count.
void layer_norm(const float* x, std::size_t rows, int width, const std::vector<float>& g,
                const std::vector<float>& b, double eps, float* y);

// Multi-head attention over sequences laid out one after another: sequence s holds rows
// [offsets[s], offsets[s] + lengths[s]) of qkv [rows, 3 * width] (Q, K, V side by side, heads of
// width / heads each) and of out [rows, width]. scores = Q K^T * (1 / sqrt(d)), softmax per row
// (causal: query i sees keys 0..i), out = P V, each (sequence, head) on one thread with the
// kernels of kernels.hpp. A sequence's result does not depend on the other sequences, its
// offset, the thread count, or (causal) on rows after the query.
void attention(const float* qkv, const std::vector<std::size_t>& offsets,
               const std::vector<std::size_t>& lengths, int width, int heads, bool causal,
               float* out);

// `seqs` sequences of `len` rows each, one after another.
void attention_fixed(const float* qkv, int seqs, int len, int width, int heads, bool causal,
                     float* out);

}  // namespace winokit::detail
