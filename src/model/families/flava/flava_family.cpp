// FLAVA behind the model interface: its runtime (moved from eval/), pair scoring with either
// head, the pair cache, and the registry's hooks.
#include "model/families/flava/flava_family.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <mutex>
#include <set>

#include "winokit/core/error.hpp"
#include "winokit/io/files.hpp"
#include "winokit/model/compute.hpp"

namespace winokit {

namespace fs = std::filesystem;

FlavaRuntime FlavaRuntime::load(const fs::path& dir, std::optional<FlavaHead> head,
                                FlavaRunOptions options) {
  FlavaRuntime rt;
  rt.model = std::make_shared<FlavaModel>(FlavaModel::load(dir));
  rt.tokenizer = std::make_shared<WordPieceTokenizer>(WordPieceTokenizer::load(dir));
  if (rt.tokenizer->vocab_size() > static_cast<std::size_t>(rt.model->config().vocab_size)) {
    throw InputError({(dir / "vocab.txt").string(), 0, ""},
                     "the vocabulary has " + std::to_string(rt.tokenizer->vocab_size()) +
                         " tokens but the model's text_config.vocab_size is " +
                         std::to_string(rt.model->config().vocab_size));
  }
  if (head) {
    if (*head == FlavaHead::Itm && !rt.model->has_itm()) {
      throw UsageError(dir.string() + " is a " + rt.model->layout() +
                       " checkpoint without the ITM head (itm_head.*, saved by "
                       "FlavaForPreTraining): use --head contrastive");
    }
    rt.head = *head;
    rt.head_reason = "asked for (--head)";
  } else if (rt.model->has_itm()) {
    rt.head = FlavaHead::Itm;
    rt.head_reason =
        "default: the checkpoint has the ITM head, and ITM (a joint forward pass per pair) is "
        "the stronger of FLAVA's two scores on Winoground";
  } else {
    rt.head = FlavaHead::Contrastive;
    rt.head_reason = "default: the checkpoint (" + rt.model->layout() + ") has no ITM head";
  }
  rt.options = std::move(options);
  rt.source = dir.string();
  return rt;
}

std::vector<int> FlavaRuntime::encode(const std::string& caption) const {
  return tokenizer->encode(caption, model->config().max_text_len);
}

nlohmann::json FlavaRuntime::describe() const {
  const FlavaConfig& c = model->config();
  return {{"kind", "flava"},
          {"model", source},
          {"layout", model->layout()},
          {"weights_sha256", model->weights_id()},
          {"config", c.to_json()},
          {"head", to_string(head)},
          {"head_choice", head_reason},
          {"score", head == FlavaHead::Itm
                        ? "ITM head (itm_head on the multimodal encoder's [CLS]): softmax "
                          "probability of match"
                        : "contrastive: exp(logit_scale) * cosine of the projected [CLS] "
                          "embeddings (FlavaForPreTraining's contrastive_logits_per_image)"},
          {"logit_scale", model->logit_scale()},
          {"tokenizer",
           {{"kind", "BERT WordPiece"},
            {"vocab_sha256", tokenizer->vocab_sha256()},
            {"lower_case", tokenizer->options().lower_case},
            {"max_length", c.max_text_len}}},
          {"precision", "float32"},
          {"compute", compute_record()},
          {"threads", compute_threads()},
          {"batch_size", options.batch_size}};
}

std::vector<double> flava_score_pairs(
    const FlavaRuntime& rt, const std::vector<std::function<ImageBytes()>>& images,
    const std::vector<std::string>& captions,
    const std::vector<std::pair<std::size_t, std::size_t>>& pairs) {
  const FlavaModel& model = *rt.model;
  std::map<std::size_t, std::vector<std::size_t>> by_image;
  std::set<std::size_t> used_captions;
  for (std::size_t p = 0; p < pairs.size(); ++p) {
    if (pairs[p].first >= captions.size() || pairs[p].second >= images.size()) {
      throw UsageError("FLAVA: pair index out of range");
    }
    by_image[pairs[p].second].push_back(p);
    used_captions.insert(pairs[p].first);
  }
  // Captions: every one used is encoded once, in batches.
  std::map<std::size_t, FlavaEmbeds> text;
  {
    const std::size_t batch = static_cast<std::size_t>(std::max(1, rt.options.batch_size));
    std::vector<std::size_t> order(used_captions.begin(), used_captions.end());
    for (std::size_t b = 0; b < order.size(); b += batch) {
      std::vector<std::vector<int>> ids;
      const std::size_t end = std::min(order.size(), b + batch);
      for (std::size_t k = b; k < end; ++k)
        ids.push_back(rt.encode(captions[order[k]]));
      std::vector<FlavaEmbeds> e = model.embed_texts(ids);
      for (std::size_t k = b; k < end; ++k)
        text.emplace(order[k], std::move(e[k - b]));
    }
  }
  std::vector<double> out(pairs.size());
  const std::size_t pair_batch = static_cast<std::size_t>(std::max(1, rt.options.batch_size));
  const std::size_t image_batch = static_cast<std::size_t>(std::max(1, rt.options.image_batch));
  std::size_t done = 0;
  std::vector<std::size_t> image_order;
  for (const auto& kv : by_image)
    image_order.push_back(kv.first);
  // Images in chunks: each chunk is read, preprocessed and encoded once, its pairs scored, and
  // its encoder outputs dropped.
  for (std::size_t b = 0; b < image_order.size(); b += image_batch) {
    const std::size_t end = std::min(image_order.size(), b + image_batch);
    std::vector<FlavaImage> pixels;
    for (std::size_t k = b; k < end; ++k)
      pixels.push_back(flava_preprocess(decode_image(images[image_order[k]]()), model.config()));
    std::vector<const FlavaImage*> ptrs;
    for (const auto& px : pixels)
      ptrs.push_back(&px);
    const std::vector<FlavaEmbeds> emb = model.embed_images(ptrs);
    std::vector<std::size_t> queue;
    std::vector<const FlavaEmbeds*> qi;
    auto flush = [&] {
      if (queue.empty()) return;
      std::vector<const FlavaEmbeds*> qt;
      for (std::size_t p : queue)
        qt.push_back(&text.at(pairs[p].first));
      const FlavaItmOutput o = model.itm(qt, qi);
      for (std::size_t k = 0; k < queue.size(); ++k)
        out[queue[k]] = o.probabilities[k];
      done += queue.size();
      queue.clear();
      qi.clear();
      if (rt.options.on_progress) rt.options.on_progress("pairs", done, pairs.size());
    };
    for (std::size_t k = b; k < end; ++k) {
      const FlavaEmbeds& im = emb[k - b];
      for (std::size_t p : by_image[image_order[k]]) {
        if (rt.head == FlavaHead::Contrastive) {
          out[p] = model.contrastive(im, text.at(pairs[p].first));
          ++done;
          continue;
        }
        queue.push_back(p);
        qi.push_back(&im);
        if (queue.size() >= pair_batch) flush();
      }
    }
    flush();
    if (rt.head == FlavaHead::Contrastive && rt.options.on_progress) {
      rt.options.on_progress("pairs", done, pairs.size());
    }
  }
  return out;
}

namespace {

class FlavaVlModel final : public VlModel {
 public:
  FlavaVlModel(FlavaRuntime rt, ModelOptions options, std::string name)
      : rt_(std::move(rt)), options_(std::move(options)), name_(std::move(name)) {}
  std::string family() const override { return "flava"; }
  std::string name() const override { return name_; }
  std::vector<Ability> abilities() const override { return {Ability::PairScores}; }
  std::vector<std::string> heads() const override {
    if (rt_.model->has_itm()) return {"itm", "contrastive"};
    return {"contrastive"};
  }
  std::string head() const override { return to_string(rt_.head); }
  std::string retrieval_head() const override { return "contrastive"; }
  std::string score_name() const override {
    return rt_.head == FlavaHead::Itm ? "P(match)" : "exp(logit_scale) * cos";
  }
  nlohmann::json describe() const override {
    nlohmann::json d = rt_.describe();
    d["family"] = "flava";
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
          return flava_score_pairs(rt_, todo.images, todo.captions, todo.pairs);
        });
  }
  std::unique_ptr<PreparedImages> prepare_images(
      const std::vector<ImageRequest>& images) const override;

 private:
  std::string signature() const {
    return "flava\n" + rt_.model->weights_id() + "\n" + kernel_version() +
           "\nhead=" + to_string(rt_.head) + "\n" + rt_.model->config().to_json().dump() + "\n" +
           rt_.tokenizer->vocab_sha256();
  }
  FlavaRuntime rt_;
  ModelOptions options_;
  std::string name_;
};

// The pool's image encodings kept in memory; each call encodes its captions and scores with
// the runtime's head.
class FlavaPreparedImages final : public PreparedImages {
 public:
  FlavaPreparedImages(const FlavaRuntime& rt, const std::vector<ImageRequest>& images) : rt_(rt) {
    for (const ImageRequest& r : images) {
      const FlavaImage im = flava_preprocess(decode_image(r.read()), rt_.model->config());
      images_.push_back(std::move(rt_.model->embed_images({&im})[0]));
    }
  }
  std::vector<double> score(const std::vector<std::string>& captions,
                            const std::vector<PairIndex>& pairs) const override {
    std::lock_guard<std::mutex> lock(mutex_);  // one forward pass at a time
    std::vector<std::vector<int>> ids;
    for (const auto& c : captions)
      ids.push_back(rt_.encode(c));
    const std::vector<FlavaEmbeds> text = rt_.model->embed_texts(ids);
    std::vector<double> out(pairs.size());
    std::vector<const FlavaEmbeds*> ts, is;
    std::vector<std::size_t> slot;
    for (std::size_t p = 0; p < pairs.size(); ++p) {
      const auto [c, i] = pairs[p];
      if (c >= captions.size() || i >= images_.size()) {
        throw UsageError("FLAVA: pair index out of range");
      }
      if (rt_.head == FlavaHead::Contrastive) {
        out[p] = rt_.model->contrastive(images_[i], text[c]);
        continue;
      }
      slot.push_back(p);
      ts.push_back(&text[c]);
      is.push_back(&images_[i]);
    }
    if (!slot.empty()) {
      const FlavaItmOutput o = rt_.model->itm(ts, is);
      for (std::size_t k = 0; k < slot.size(); ++k)
        out[slot[k]] = o.probabilities[k];
    }
    return out;
  }

 private:
  const FlavaRuntime& rt_;
  std::vector<FlavaEmbeds> images_;
  mutable std::mutex mutex_;
};

std::unique_ptr<PreparedImages> FlavaVlModel::prepare_images(
    const std::vector<ImageRequest>& images) const {
  return std::make_unique<FlavaPreparedImages>(rt_, images);
}

}  // namespace

std::unique_ptr<VlModel> open_flava(const fs::path& checkpoint, const ModelOptions& options) {
  std::optional<FlavaHead> head;
  if (options.head == "itm") {
    head = FlavaHead::Itm;
  } else if (options.head == "contrastive") {
    head = FlavaHead::Contrastive;
  } else if (!options.head.empty()) {
    throw UsageError("--head: FLAVA's heads are itm and contrastive, not '" + options.head + "'");
  }
  FlavaRunOptions o;
  o.batch_size = options.batch_size;
  o.on_progress = options.on_progress;
  FlavaRuntime rt = FlavaRuntime::load(checkpoint, head, std::move(o));
  std::string name = checkpoint_name(checkpoint) + "-" + to_string(rt.head);  // flava-full-itm
  return std::make_unique<FlavaVlModel>(std::move(rt), options, std::move(name));
}

}  // namespace winokit
