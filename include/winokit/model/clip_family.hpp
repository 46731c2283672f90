// CLIP behind the model interface (vl_model.hpp): the registry's hooks, and the runtime for
// the analyses that read CLIP's towers directly (word-patch maps).
//
//   std::unique_ptr<winokit::VlModel> m = winokit::open_clip("clip-vit-base-patch32/", {});
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "winokit/model/embedding_runtime.hpp"
#include "winokit/model/vl_model.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(model);

namespace winokit {

bool is_clip_checkpoint(const std::filesystem::path& checkpoint);
std::unique_ptr<VlModel> open_clip(const std::filesystem::path& checkpoint,
                                   const ModelOptions& options);
// A runtime already loaded (seeded random weights for the demo and the game's test rival).
std::unique_ptr<VlModel> wrap_clip_runtime(ClipRuntime runtime, std::string name);
// The runtime behind a CLIP model (nullptr for another family).
const ClipRuntime* clip_runtime_of(const VlModel& model);

}  // namespace winokit
