#include "model/layers/siglip_vision.hpp"

#include <cstring>

#include "model/kernels/ops.hpp"

namespace winokit::detail {

void SiglipVisionTower::load(TensorSource& src, const std::string& prefix,
                             const SiglipTowerShape& shape, int run_layers, bool post_layernorm) {
  shape_ = shape;
  const std::int64_t V = shape.hidden, P = shape.patch;
  const std::string e = prefix + "embeddings.";
  patch_ = Linear(src.get(e + "patch_embedding.weight", {V, 3, P, P}),
                  src.get(e + "patch_embedding.bias", {V}), shape.hidden,
                  static_cast<int>(3 * P * P), PostOp::None, /*accumulate=*/true);
  position_ = src.get(e + "position_embedding.weight", {patches(), V});
  const PostOp act = shape.act == "gelu"         ? PostOp::Gelu
                     : shape.act == "quick_gelu" ? PostOp::QuickGelu
                                                 : PostOp::GeluTanh;  // gelu_pytorch_tanh, gelu_new
  layers_.clear();
  for (int i = 0; i < run_layers; ++i) {
    layers_.push_back(load_encoder_layer(src, prefix + "encoder.layers." + std::to_string(i) + ".",
                                         kHfClipLayerNames, {shape.hidden, shape.mlp, true, act}));
  }
  post_ = post_layernorm;
  if (post_) {
    post_g_ = src.get(prefix + "post_layernorm.weight", {V});
    post_b_ = src.get(prefix + "post_layernorm.bias", {V});
  }
}

int SiglipVisionTower::patches() const {
  const int g = shape_.image_size / shape_.patch;
  return g * g;
}

std::vector<float> SiglipVisionTower::forward(const float* pixels, int count) const {
  const int H = shape_.hidden, P = shape_.patch, S = shape_.image_size, N = patches();
  const std::size_t rows = static_cast<std::size_t>(count) * N;
  const std::size_t K = static_cast<std::size_t>(3) * P * P;
  std::vector<float> cols(rows * K);
  image_patches(pixels, count, 3, S, P, cols.data());
  // Position embeddings (every tile is a full image: ids 0..N-1), then patch W^T + b on top.
  std::vector<float> x(rows * H);
  for (std::size_t r = 0; r < rows; ++r) {
    std::memcpy(&x[r * H], &position_[(r % static_cast<std::size_t>(N)) * H], sizeof(float) * H);
  }
  patch_.forward(cols.data(), static_cast<int>(rows), x.data());
  cols = {};
  const FixedSequences seqs(count, N);
  EncoderRun run{rows, seqs.offsets, seqs.lengths, shape_.heads, shape_.eps};
  run_encoder_layers(layers_, x, run);
  if (!post_) return x;
  std::vector<float> normed(rows * H);
  layer_norm(x.data(), rows, H, post_g_, post_b_, shape_.eps, normed.data());
  return normed;
}

}  // namespace winokit::detail
