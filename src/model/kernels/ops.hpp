// The operations the families are built from, above the dense blocks of gemm.hpp: attention of
// one head over a block of queries (masked, cross, grouped-query, causal over a KV cache), RMSNorm,
// rotary embeddings, SwiGLU, ViT patches, 2-D convolution and average pooling, mean/max pooling
// over tokens, and the single-query attention of ResNet's attention pool.
//
// Every operation threads over whole rows or whole (sequence, head) tasks and computes each
// output element with one fixed chain, so (as for gemm.hpp) a row's bits do not depend on the
// batch, its position, the thread count or the CPU. With gemm.hpp this header is the operation
// interface: family files call it and hold no `#pragma omp`, no matmul_block and no PackedMatrix
// (tests/unit/model/test_ops.cpp checks), and a second backend implements these functions.
// Internal to src/model.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "model/kernels/kernels.hpp"

namespace winokit::detail {

// ---- attention ----

// One attention task: one head of one sequence (or of one group of query rows).
struct HeadTask {
  const float* q = nullptr;  // queries [queries, d], rows ldq apart
  std::size_t ldq = 0;
  int queries = 0;           // 0: nothing to do
  const float* k = nullptr;  // keys [keys, d] and values [keys, d], rows ldkv apart
  const float* v = nullptr;
  std::size_t ldkv = 0;
  int keys = 0;
  float* out = nullptr;  // [queries, d], rows ldo apart
  std::size_t ldo = 0;
  // -1: every query sees all `keys` (a padding mask is a shorter `keys`). p >= 0: causal after p
  // cached positions: query i sees keys 0..p + i, and the probabilities beyond are exact zeros in
  // the P V product.
  int causal_past = -1;
};

// For each t in [0, tasks): out = softmax(scale * Q K^T) V for task(t), with heads of d values.
// scores = Q K^T with the epilogue's scale (kernels.hpp), softmax per row (softmax_rows; causal:
// softmax_inplace of the visible prefix, zeros after), out = P V. Each task runs whole on one
// thread (dynamic schedule, scratch per thread), so a task's bits depend only on its own inputs.
// Inside a parallel region it runs on the calling thread alone.
void attend_heads(int tasks, int d, float scale, const std::function<HeadTask(int)>& task);

// ResNet's AttentionPool2d (F.multi_head_attention_forward with one query): for each of `count`
// items and each head, scores_j = sum_k (q_k * scale) * key_jk in float in index order, softmax
// (softmax_inplace), out_k = sum_j p_j * value_jk in float in index order. q: [count, width];
// kv: per item [tokens, 2 * width] (key | value); out: [count, width].
void single_query_attention(const float* q, const float* kv, int count, int tokens, int width,
                            int heads, float scale, float* out);

// ---- normalisation, position, activation ----

// RMSNorm (LlamaRMSNorm) of `rows` rows of `width`: the mean square in double in index order,
// x * (1 / sqrt(ms + eps)) rounded to float, times g in float.
void rms_norm(const float* x, std::size_t rows, int width, const std::vector<float>& g, double eps,
              float* y);

// Rotary embedding in place (transformers' rotate_half form): for each of `rows` rows (ld apart)
// and each of `heads` heads of d values at its start, x1' = x1 cos - x2 sin, x2' = x2 cos + x1 sin
// (x1, x2 the halves), with row r's d / 2 angles at cosv + r * d / 2 and sinv + r * d / 2.
void rotary_rows(float* x, std::size_t rows, std::size_t ld, int heads, int d, const float* cosv,
                 const float* sinv);

// SwiGLU: out[r] = silu(gate) * up for each of `rows` rows of gate_up [rows, 2 * width] (gate
// then up): gate / (1 + exp(-gate)) with the kernels' exp (the same bits on every CPU), times up.
void silu_mul_rows(const float* gate_up, std::size_t rows, int width, float* out);

// log softmax(row)[target] over n logits (a language model's log-probability of a token): the
// max subtracted, exp by the kernels' exp (the same bits on every CPU), the sum of exponentials in
// float64 in 8 interleaved partial sums added in a fixed order, so that it depends neither on the
// vector width the compiler picks nor on the threads or the batch.
double log_softmax_at(const float* row, int n, int target);
// softmax(row)[target] the same way: exp(row[target] - max) by the kernels' exp over that sum
// (VQAScore's answer probability).
double softmax_at(const float* row, int n, int target);

// ---- images ----

// ViT patches: each of `count` images [channels, side, side] cut into (side / patch)^2 patches,
// row-major over the grid; row (image, patch) of cols holds the patch in (channel, y, x) order, the
// layout of a Conv2d(kernel = stride = patch) weight. cols: [count * grid^2, channels * patch^2].
void image_patches(const float* pixels, int count, int channels, int side, int patch, float* cols);

// Channels-last activations of one image: [side, side, channels].
struct FeatureMap {
  std::vector<float> data;
  int side = 0, channels = 0;
  void resize(int s, int c) {
    side = s;
    channels = c;
    data.resize(static_cast<std::size_t>(s) * static_cast<std::size_t>(s) *
                static_cast<std::size_t>(c));
  }
};

// A 2-D convolution with a bias (a BatchNorm folds into both), as a matrix product over im2col
// patches: the rows are the output pixels, the inner dimension the (kh, kw, ic) patch, so every
// output value is one chain in a fixed order.
struct Conv2d {
  int in = 0, out = 0, k = 1, stride = 1, pad = 0;
  PackedMatrix weights;  // [out, k * k * in], inner order (kh, kw, ic)
  std::vector<float> bias;
  int out_side(int side) const { return (side + 2 * pad - k) / stride + 1; }
  // weights: [out][kh][kw][in] (channels last); bias: [out].
  static Conv2d channels_last(const std::vector<float>& weights, std::vector<float> bias, int in,
                              int out, int k, int stride, int pad);
};

// y = relu?(conv(x) + bias (+ y when accumulate)); `patches` is scratch. On the compute threads,
// or (inside a parallel region, one image per thread) chunk by chunk on the calling thread, the
// chunks small enough to stay in its cache: the same values either way.
void conv2d(const Conv2d& c, const FeatureMap& x, FeatureMap& y, std::vector<float>& patches,
            bool relu, bool accumulate);

// Average pooling with kernel = stride = s, no padding (nn.AvgPool2d(s)): the window summed in
// (kh, kw) order, then divided by s * s.
void avg_pool2d(const FeatureMap& x, int s, FeatureMap& y);

// ---- pooling over tokens ----

// For each of `count` sequences of `len` rows of `width` in x: the mean (summed in double in
// token order) and the max of its first tokens[b] rows, into mean and max [count, width].
void mean_max_over_tokens(const float* x, int count, int len, int width, const int* tokens,
                          float* mean, float* max);

}  // namespace winokit::detail
