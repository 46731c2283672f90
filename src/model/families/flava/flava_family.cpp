// FLAVA behind the model interface: its runtime (moved from eval/), pair scoring with either
// head, the pair cache, and the registry's hooks.
#include "model/families/flava/flava_family.hpp"

#include <algorithm>

#include "model/runtime/cross_encoder.hpp"
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

namespace {

// FLAVA's encodings (the image and text encoders' outputs) and its scorer (the ITM head on the
// multimodal encoder, or the contrastive cosine) for the cross-encoder runtime.
class FlavaTowers final : public detail::CrossTowers<FlavaEmbeds, FlavaEmbeds> {
 public:
  explicit FlavaTowers(const FlavaRuntime& rt) : rt_(rt) {}
  std::vector<FlavaEmbeds> encode_images(
      const std::vector<std::function<ImageBytes()>>& images) const override {
    std::vector<FlavaImage> pixels;
    for (const auto& read : images)
      pixels.push_back(flava_preprocess(decode_image(read()), rt_.model->config()));
    std::vector<const FlavaImage*> ptrs;
    for (const auto& px : pixels)
      ptrs.push_back(&px);
    return rt_.model->embed_images(ptrs);
  }
  std::vector<FlavaEmbeds> encode_texts(
      const std::vector<const std::string*>& captions) const override {
    std::vector<std::vector<int>> ids;
    for (const std::string* c : captions)
      ids.push_back(rt_.encode(*c));
    return rt_.model->embed_texts(ids);
  }
  std::vector<double> score(const std::vector<const FlavaEmbeds*>& texts,
                            const std::vector<const FlavaEmbeds*>& images) const override {
    if (rt_.head == FlavaHead::Itm) {
      const FlavaItmOutput o = rt_.model->itm(texts, images);
      return std::vector<double>(o.probabilities.begin(), o.probabilities.end());
    }
    std::vector<double> out(texts.size());
    for (std::size_t k = 0; k < texts.size(); ++k)
      out[k] = rt_.model->contrastive(*images[k], *texts[k]);
    return out;
  }
  std::size_t image_group() const override { return image_batch(); }
  std::size_t max_live_images() const override { return image_batch(); }
  std::size_t pair_batch() const override { return batch(); }
  std::size_t text_batch() const override { return batch(); }

 private:
  std::size_t batch() const {
    return static_cast<std::size_t>(std::max(1, rt_.options.batch_size));
  }
  std::size_t image_batch() const {
    return static_cast<std::size_t>(std::max(1, rt_.options.image_batch));
  }
  const FlavaRuntime& rt_;
};

}  // namespace

std::vector<double> flava_score_pairs(
    const FlavaRuntime& rt, const std::vector<std::function<ImageBytes()>>& images,
    const std::vector<std::string>& captions,
    const std::vector<std::pair<std::size_t, std::size_t>>& pairs) {
  return detail::score_all_pairs(FlavaTowers(rt), images, captions, pairs, "FLAVA",
                                 rt.options.on_progress);
}

namespace {

class FlavaVlModel final : public detail::CrossEncoderModel<FlavaEmbeds, FlavaEmbeds> {
 public:
  FlavaVlModel(FlavaRuntime rt, ModelOptions options, std::string name)
      : CrossEncoderModel(std::move(options)), rt_(std::move(rt)), name_(std::move(name)) {}
  FlavaVlModel(const FlavaVlModel&) = delete;  // towers_ refers to rt_
  FlavaVlModel& operator=(const FlavaVlModel&) = delete;
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

 protected:
  const detail::CrossTowers<FlavaEmbeds, FlavaEmbeds>& towers() const override { return towers_; }
  // What a cached pair score depends on: the weights, the kernels, the head, the config and the
  // vocabulary.
  std::string signature() const override {
    return "flava\n" + rt_.model->weights_id() + "\n" + kernel_version() +
           "\nhead=" + to_string(rt_.head) + "\n" + rt_.model->config().to_json().dump() + "\n" +
           rt_.tokenizer->vocab_sha256();
  }

 private:
  FlavaRuntime rt_;
  std::string name_;
  FlavaTowers towers_{rt_};
};

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
