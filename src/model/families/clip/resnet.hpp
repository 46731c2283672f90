// openai/CLIP's ModifiedResNet image tower on winokit's kernels. Internal to src/model.
//
// Every convolution (BatchNorm folded in) is a matrix product over im2col patches on the kernels
// of kernels.hpp, the average pools sum their windows in a fixed order, and the attention pool
// runs on Linear layers: an image's embedding is bit-for-bit the same whatever the batch it
// comes in, the thread count and the CPU.
#pragma once

#include <memory>

#include "model/families/clip/clip_model.hpp"
#include "model/families/clip/encoders.hpp"
#include "model/runtime/checkpoint.hpp"

namespace winokit::detail {

class ResNetTower final : public ImageEncoder {
 public:
  // Reads the tensors by openai/CLIP's names (visual.conv1.weight, visual.layer1.0.bn1.*,
  // visual.attnpool.*) and folds every BatchNorm into the convolution before it.
  ResNetTower(TensorSource& src, const ClipConfig& config);
  ResNetTower(ResNetTower&&) noexcept;
  ~ResNetTower() override;
  // Embeddings only: per-layer and per-token states are a UsageError (the stages have
  // different widths and the attention pool has one query).
  TowerOutput encode(const float* pixels, int count, const EncodeOptions& o) const override;
  // pixels: [count, 3, side, side]; embeds: [count, embed_dim].
  void encode(const float* pixels, int count, float* embeds) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace winokit::detail
