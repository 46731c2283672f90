// A fully connected layer y = act(x W^T + b) on oneDNN's matmul primitive with weights
// reordered once into the primitive's preferred layout. Primitives are cached by M.
// x: [M, K] row-major, W: [N, K] (PyTorch Linear layout), y: [M, N].
#pragma once

#include <memory>
#include <vector>

#include "winokit/clip.hpp"

namespace winokit::detail {

enum class PostOp { None, QuickGelu, Gelu };

class Linear {
 public:
  Linear();
  Linear(const std::vector<float>& weight, const std::vector<float>& bias, int n, int k,
         PostOp post = PostOp::None);
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

}  // namespace winokit::detail
