// Where a model's tensors come from while it is built: a checkpoint (by name, with the shape
// checked) or seeded random values. Internal to src/model.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace winokit::detail {

class TensorSource {
 public:
  virtual ~TensorSource() = default;
  // The tensor as float32; throws InputError naming the tensor when it is absent or its shape
  // differs from `shape`.
  virtual std::vector<float> get(const std::string& name,
                                 const std::vector<std::int64_t>& shape) = 0;
};

}  // namespace winokit::detail
