// The tower interfaces a CLIP is made of. An architecture is one implementation of each behind
// ClipModel (ViT or ModifiedResNet images, the transformer text tower), built from a
// tensor-name table per checkpoint layout; the runtime (batching, cache, progress) only sees
// ClipModel. Internal to src/model.
#pragma once

#include <vector>

#include "model/families/clip/clip_model.hpp"

namespace winokit::detail {

class ImageEncoder {
 public:
  virtual ~ImageEncoder() = default;
  // pixels: [count, 3, side, side], normalised. Per-layer / per-token states when the
  // architecture has them (a UsageError otherwise).
  virtual TowerOutput encode(const float* pixels, int count, const EncodeOptions& o) const = 0;
};

class TextEncoder {
 public:
  virtual ~TextEncoder() = default;
  // Each sequence: start ... end ids, at most context_length long.
  virtual TowerOutput encode(const std::vector<std::vector<int>>& ids,
                             const EncodeOptions& o) const = 0;
};

}  // namespace winokit::detail
