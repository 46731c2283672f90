// CLIP in-process: configuration, weights (Hugging Face CLIPModel or OpenCLIP layout, F32/F16/
// BF16 safetensors or PyTorch .bin; OpenAI's TorchScript .pt files), and the float32 forward
// pass of both towers on winokit's kernels (src/model/kernels/kernels.hpp): a ViT or a
// ModifiedResNet (RN50, RN101, RN50x4, ...) image tower, and the transformer text tower.
//
//   winokit::ClipModel model = winokit::ClipModel::load("clip-vit-base-patch32/");
//   winokit::ClipModel rn50 = winokit::ClipModel::load("RN50.pt");  // openai/CLIP's file
//   winokit::TowerOutput img = model.encode_images(pixels, n);   // pixels: [n, 3, 224, 224]
//   winokit::TowerOutput txt = model.encode_texts({ids0, ids1}); // unpadded token ids
//   float logit = model.logit_scale_exp() * cosine(img.embeds row, txt.embeds row);
//
// Results are bit-for-bit independent of the batch size, the batch composition, the thread
// count and the CPU: every output value is one fixed sequence of IEEE operations (kernels.hpp;
// checked by tests/golden/test_determinism.cpp), and the other operations work row by row in a
// fixed order.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "model/families/clip/clip_config.hpp"
#include "winokit/model/vl_model.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(model);

namespace winokit {

class ClipModel {
 public:
  // Loads config, weights and checks every tensor's presence and shape.
  // The weights are packed on first use, one tower at a time (a run whose embeddings are all
  // cached never reads them); config, weights_id and logit_scale are read here.
  static ClipModel load(const std::filesystem::path& dir);
  // As load(dir), remembering the weight files' SHA-256 in `hash_index_dir` (against size,
  // times and inode) so that an unchanged checkpoint is not hashed again (empty: no index).
  static ClipModel load(const std::filesystem::path& dir,
                        const std::filesystem::path& hash_index_dir);
  // A model with seeded random weights (normal, scaled like the reference initialisation).
  static ClipModel random(const ClipConfig& config, std::uint64_t seed);
  ClipModel(ClipModel&&) noexcept;
  ClipModel& operator=(ClipModel&&) noexcept;
  ~ClipModel();

  const ClipConfig& config() const;
  // SHA-256 of the weight files (or "random:<seed>"): the cache key of the model.
  const std::string& weights_id() const;
  // What computes its numbers, as far as the bits can depend on it: winokit's kernel version
  // (compute.hpp; the instruction set does not change the bits). Part of the embedding cache's
  // key, so embeddings of an older kernel version are never mixed in.
  std::string compute_signature() const;
  float logit_scale_exp() const;
  // Whether the image / text tower's weights are packed yet (on first use; at once for random
  // weights).
  bool image_tower_built() const;
  bool text_tower_built() const;

  // pixels: [count, 3, image_size, image_size], normalised.
  TowerOutput encode_images(const float* pixels, int count, const EncodeOptions& o = {}) const;
  // Each sequence: start ... end ids, at most context_length long.
  TowerOutput encode_texts(const std::vector<std::vector<int>>& ids,
                           const EncodeOptions& o = {}) const;

 private:
  ClipModel();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace winokit
