// ViLT behind the model interface: its runtime (moved from eval/), pair scoring with each image
// embedded once, the pair cache, and the registry's hooks.
#include "model/families/vilt/vilt_family.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>

#include "model/families/vilt/vilt_alignment.hpp"
#include "winokit/core/error.hpp"
#include "winokit/io/files.hpp"
#include "winokit/model/compute.hpp"

namespace winokit {

namespace fs = std::filesystem;

ViltRuntime ViltRuntime::load(const fs::path& dir, ViltRunOptions options) {
  ViltRuntime rt;
  rt.model = std::make_shared<ViltModel>(ViltModel::load(dir));
  rt.tokenizer = std::make_shared<WordPieceTokenizer>(WordPieceTokenizer::load(dir));
  if (rt.tokenizer->vocab_size() > static_cast<std::size_t>(rt.model->config().vocab_size)) {
    throw InputError({(dir / "vocab.txt").string(), 0, ""},
                     "the vocabulary has " + std::to_string(rt.tokenizer->vocab_size()) +
                         " tokens but the model's vocab_size is " +
                         std::to_string(rt.model->config().vocab_size));
  }
  rt.options = std::move(options);
  rt.source = dir.string();
  return rt;
}

ViltRuntime ViltRuntime::random(const ViltConfig& config, std::uint64_t seed,
                                std::shared_ptr<WordPieceTokenizer> tokenizer,
                                ViltRunOptions options) {
  ViltRuntime rt;
  rt.model = std::make_shared<ViltModel>(ViltModel::random(config, seed));
  rt.tokenizer = std::move(tokenizer);
  rt.options = std::move(options);
  rt.source = "random ViLT (seed " + std::to_string(seed) + ")";
  return rt;
}

std::vector<int> ViltRuntime::encode(const std::string& caption) const {
  return tokenizer->encode(caption, model->config().max_text_len);
}

nlohmann::json ViltRuntime::describe() const {
  const ViltConfig& c = model->config();
  nlohmann::json d = {
      {"kind", "vilt"},
      {"model", source},
      {"weights_sha256", model->weights_id()},
      {"config", c.to_json()},
      {"score", c.head == ViltHead::Rank ? "rank_output logit (ViltForImageAndTextRetrieval)"
                                         : "ITM head softmax probability of match"},
      {"tokenizer",
       {{"kind", "BERT WordPiece"},
        {"vocab_sha256", tokenizer->vocab_sha256()},
        {"lower_case", tokenizer->options().lower_case},
        {"max_length", c.max_text_len}}},
      {"precision", "float32"},
      {"compute", compute_record()},
      {"threads", compute_threads()},
      {"batch_size", options.batch_size}};
  if (c.max_image_length > 0) {
    d["patch_sampling"] = "the config asks for " + std::to_string(c.max_image_length) +
                          " randomly sampled patches; winokit keeps every patch "
                          "(deterministic)";
  } else {
    d["patch_sampling"] = "none: every patch kept";
  }
  return d;
}

std::vector<double> vilt_score_pairs(
    const ViltRuntime& rt, const std::vector<std::function<ImageBytes()>>& images,
    const std::vector<std::string>& captions,
    const std::vector<std::pair<std::size_t, std::size_t>>& pairs) {
  std::vector<std::vector<int>> ids(captions.size());
  for (std::size_t c = 0; c < captions.size(); ++c)
    ids[c] = rt.encode(captions[c]);
  // Pairs grouped by image: each image is decoded, preprocessed and embedded once, and dropped
  // when its last pair is scored.
  std::map<std::size_t, std::vector<std::size_t>> by_image;
  for (std::size_t p = 0; p < pairs.size(); ++p) {
    if (pairs[p].first >= captions.size() || pairs[p].second >= images.size()) {
      throw UsageError("ViLT: pair index out of range");
    }
    by_image[pairs[p].second].push_back(p);
  }
  std::vector<double> out(pairs.size());
  const std::size_t batch = static_cast<std::size_t>(std::max(1, rt.options.batch_size));
  std::size_t done = 0;
  std::map<std::size_t, ViltImageEmbeds> live;
  std::vector<std::size_t> queue;  // pair indices waiting for a forward
  auto flush = [&] {
    if (queue.empty()) return;
    std::vector<std::vector<int>> bi;
    std::vector<const ViltImageEmbeds*> bm;
    for (std::size_t p : queue) {
      bi.push_back(ids[pairs[p].first]);
      bm.push_back(&live.at(pairs[p].second));
    }
    const ViltOutput o = rt.model->score(bi, bm);
    for (std::size_t k = 0; k < queue.size(); ++k)
      out[queue[k]] = o.scores[k];
    done += queue.size();
    queue.clear();
    if (rt.options.on_progress) rt.options.on_progress("pairs", done, pairs.size());
    live.clear();
  };
  for (const auto& [image, list] : by_image) {
    if (queue.size() + list.size() > batch) flush();
    live.emplace(image, rt.model->embed_image(
                            vilt_preprocess(decode_image(images[image]()), rt.model->config())));
    for (std::size_t p : list) {
      queue.push_back(p);
      if (queue.size() >= batch) {
        const ViltImageEmbeds keep = live.at(image);
        flush();
        live.emplace(image, keep);
      }
    }
  }
  flush();
  return out;
}

namespace {

class ViltVlModel final : public VlModel {
 public:
  ViltVlModel(ViltRuntime rt, ModelOptions options, std::string name)
      : rt_(std::move(rt)), options_(std::move(options)), name_(std::move(name)) {}
  std::string family() const override { return "vilt"; }
  std::string name() const override { return name_; }
  std::vector<Ability> abilities() const override {
    return {Ability::PairScores, Ability::Alignment};
  }
  nlohmann::json describe() const override {
    nlohmann::json d = rt_.describe();
    d["family"] = "vilt";
    return d;
  }
  std::vector<double> score_pairs(const std::vector<ImageRequest>& images,
                                  const std::vector<std::string>& captions,
                                  const std::vector<PairIndex>& pairs,
                                  EmbedStats* stats) const override {
    return cached_pair_scores(
        images, captions, pairs, options_, signature(), "", stats,
        [&](const std::vector<std::size_t>& misses) {
          // Only the images and captions the missing pairs use are read and encoded.
          const PairSubset todo = pair_subset(images, captions, pairs, misses, stats);
          return vilt_score_pairs(rt_, todo.images, todo.captions, todo.pairs);
        });
  }
  std::unique_ptr<PreparedImages> prepare_images(
      const std::vector<ImageRequest>& images) const override;

  AlignmentMethod alignment_method() const override {
    return {"ViLT word-patch alignment",
            "Each map: the optimal-transport plan (IPOT, beta 0.1, 1000 iterations, as ViLT's "
            "demo) between the caption's tokens and the image patches, on cosine distances of the "
            "final states; scaled as the demo does (standardised, clipped to [1, 3], scaled to "
            "[0, 1]).",
            "not aligned", "most aligned"};
  }
  std::vector<AlignmentMaps> align(const ImageBytes& image,
                                   const std::vector<std::string>& captions) const override {
    const ViltConfig& c = rt_.model->config();
    std::vector<AlignmentMaps> out;
    for (const std::string& caption : captions) {
      const ViltAlignment a = vilt_word_patch_alignment(rt_, image, caption);
      AlignmentMaps& m = out.emplace_back();
      m.width = a.image.width;
      m.height = a.image.height;
      m.rgb.resize(a.image.pixels.size());
      const std::size_t plane = static_cast<std::size_t>(m.width) * m.height;
      for (std::size_t i = 0; i < m.rgb.size(); ++i)
        m.rgb[i] = a.image.pixels[i] * c.std[i / plane] + c.mean[i / plane];
      m.grid_h = a.grid_h;
      m.grid_w = a.grid_w;
      m.region = c.patch;
      m.tokens = a.tokens;
      for (const auto& t : a.transport)
        m.maps.push_back(vilt_display_map(t));
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.4f", a.score);
      m.note = std::string("score ") + buf;
    }
    return out;
  }

 private:
  // What a cached pair score depends on: the weights, the kernels, the config and the vocabulary.
  std::string signature() const {
    return "vilt\n" + rt_.model->weights_id() + "\n" + kernel_version() + "\n" +
           rt_.model->config().to_json().dump() + "\n" + rt_.tokenizer->vocab_sha256();
  }
  ViltRuntime rt_;
  ModelOptions options_;
  std::string name_;
};

// The pool embedded once (ViLT's image side is its patch embedding); each call runs the joint
// transformer on its pairs.
class ViltPreparedImages final : public PreparedImages {
 public:
  ViltPreparedImages(const ViltRuntime& rt, const std::vector<ImageRequest>& images) : rt_(rt) {
    for (const ImageRequest& r : images)
      images_.push_back(
          rt_.model->embed_image(vilt_preprocess(decode_image(r.read()), rt_.model->config())));
  }
  std::vector<double> score(const std::vector<std::string>& captions,
                            const std::vector<PairIndex>& pairs) const override {
    std::vector<std::vector<int>> ids;
    for (const auto& c : captions)
      ids.push_back(rt_.encode(c));
    std::vector<double> out;
    const std::size_t batch = static_cast<std::size_t>(std::max(1, rt_.options.batch_size));
    std::lock_guard<std::mutex> lock(mutex_);  // one forward pass at a time
    for (std::size_t b = 0; b < pairs.size(); b += batch) {
      std::vector<std::vector<int>> bi;
      std::vector<const ViltImageEmbeds*> bm;
      for (std::size_t p = b; p < std::min(pairs.size(), b + batch); ++p) {
        if (pairs[p].first >= captions.size() || pairs[p].second >= images_.size()) {
          throw UsageError("ViLT: pair index out of range");
        }
        bi.push_back(ids[pairs[p].first]);
        bm.push_back(&images_[pairs[p].second]);
      }
      const ViltOutput o = rt_.model->score(bi, bm);
      out.insert(out.end(), o.scores.begin(), o.scores.end());
    }
    return out;
  }

 private:
  const ViltRuntime& rt_;
  std::vector<ViltImageEmbeds> images_;
  mutable std::mutex mutex_;
};

std::unique_ptr<PreparedImages> ViltVlModel::prepare_images(
    const std::vector<ImageRequest>& images) const {
  return std::make_unique<ViltPreparedImages>(rt_, images);
}

}  // namespace

std::unique_ptr<VlModel> open_vilt(const fs::path& checkpoint, const ModelOptions& options) {
  if (!options.head.empty()) {
    throw UsageError(
        "--head: ViLT has one head (the checkpoint's: rank_output for a retrieval "
        "checkpoint, else the ITM head); --head is for FLAVA and BLIP");
  }
  ViltRunOptions o;
  o.batch_size = options.batch_size;
  o.on_progress = options.on_progress;
  return std::make_unique<ViltVlModel>(ViltRuntime::load(checkpoint, std::move(o)), options,
                                       checkpoint_name(checkpoint));
}

}  // namespace winokit
