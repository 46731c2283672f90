// The SigLIP vision transformer's trunk (SiglipVisionTransformer without its pooling head), the
// tower that SigLIP itself, SmolVLM / Idefics3 and LLaVA-OneVision run: patch embedding (Conv2d,
// stride = kernel = patch, valid padding: the last image_size % patch pixels unused), position
// embedding for the (image_size / patch)^2 patches of a full tile, encoder layers (the shared
// pre-LayerNorm layer), and optionally the final LayerNorm. Internal to src/model.
#pragma once

#include <string>
#include <vector>

#include "model/kernels/gemm.hpp"
#include "model/layers/transformer.hpp"
#include "model/runtime/checkpoint.hpp"

namespace winokit::detail {

struct SiglipTowerShape {
  int hidden = 768, mlp = 3072, layers = 12, heads = 12;
  int image_size = 224, patch = 16;
  double eps = 1e-6;
  std::string act = "gelu_pytorch_tanh";  // or gelu_new, gelu, quick_gelu
};

class SiglipVisionTower {
 public:
  // The tensors under `prefix` ("vision_model.", "model.vision_model."): embeddings,
  // `run_layers` encoder layers, and with `post_layernorm` post_layernorm.
  void load(TensorSource& src, const std::string& prefix, const SiglipTowerShape& shape,
            int run_layers, bool post_layernorm);
  int patches() const;
  int hidden() const { return shape_.hidden; }
  // pixels: `count` tiles of 3 x image_size x image_size -> [count * patches, hidden]. Each
  // tile's rows have the bits they have alone (gemm.hpp, ops.hpp).
  std::vector<float> forward(const float* pixels, int count) const;
  std::vector<float> forward(const std::vector<float>& pixels, int count) const {
    return forward(pixels.data(), count);
  }

 private:
  SiglipTowerShape shape_;
  Linear patch_;
  std::vector<float> position_;  // [patches, hidden]
  std::vector<EncoderLayer> layers_;
  bool post_ = false;
  std::vector<float> post_g_, post_b_;
};

}  // namespace winokit::detail
