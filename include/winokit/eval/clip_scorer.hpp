// CLIP as a Winoground scorer: s(c, i) = exp(logit_scale) * cosine, like logits_per_image, on
// the embeddings of the model runtime (winokit/model/embedding_runtime.hpp).
//
//   winokit::ClipRuntime rt = winokit::ClipRuntime::load("clip-vit-base-patch32", {});
//   auto scorer = winokit::make_clip_scorer(rt, "clip-b32");
//   auto scores = scorer->score(dataset);   // non-finite scores are an error naming the example
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "winokit/eval/scorer.hpp"
#include "winokit/io/image_store.hpp"
#include "winokit/model/embedding_runtime.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(eval);

namespace winokit {

// Every image and caption of a dataset in dataset order (image / caption 2 * example + k);
// the requests read from `store`, which must outlive them.
struct DatasetItems {
  std::vector<ImageRequest> images;
  std::vector<std::string> captions;
};
DatasetItems dataset_items(const WinogroundDataset& dataset, const ImageStore& store);

std::unique_ptr<Scorer> make_clip_scorer(const ClipRuntime& runtime, std::string name);

}  // namespace winokit
