// A fully connected layer y = act(x W^T + b) on oneDNN's matmul primitive with weights
// reordered once into the primitive's preferred layout. Primitives are cached by M.
// x: [M, K] row-major, W: [N, K] (PyTorch Linear layout), y: [M, N].
#pragma once

#include <memory>
#include <vector>

#include "winokit/model/clip_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace winokit::detail {

// In-place softmax of row[0..n) (max subtracted first), in a fixed order.
inline void softmax_inplace(float* row, std::size_t n) {
  float mx = -INFINITY;
  for (std::size_t j = 0; j < n; ++j)
    mx = std::max(mx, row[j]);
  float sum = 0;
  for (std::size_t j = 0; j < n; ++j) {
    row[j] = std::exp(row[j] - mx);
    sum += row[j];
  }
  const float inv = 1.0f / sum;
  for (std::size_t j = 0; j < n; ++j)
    row[j] *= inv;
}

enum class PostOp { None, QuickGelu, Gelu, GeluTanh };  // GeluTanh: GPT-2's gelu_new

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

// Full (non-causal) attention over sequences of their own lengths laid out one after another
// (ViLT, FLAVA): qkv [rows, 3W], out [rows, W]. Each (sequence, head) is one task in a fixed
// order, so results do not depend on the thread count or the batch.
void ragged_attention(const float* qkv, const std::vector<std::size_t>& offsets,
                      const std::vector<std::size_t>& lengths, int width, int heads, float* out);

}  // namespace winokit::detail

namespace winokit::detail {

// Non-causal multi-head attention for sequences of one fixed length (the vision tower) on
// oneDNN batched matmuls over strided views of the fused QKV buffer:
// scores = Q K^T / sqrt(d) for every (sequence, head), a softmax per row, out = P V.
// qkv: [seqs * len, 3 * width]; out: [seqs * len, width].
class BatchedAttention {
 public:
  BatchedAttention();
  ~BatchedAttention();
  void run(const float* qkv, int seqs, int len, int width, int heads, float* out) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace winokit::detail
