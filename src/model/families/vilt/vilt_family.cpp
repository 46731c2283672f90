// ViLT behind the model interface: its runtime (moved from eval/), pair scoring with each image
// embedded once, the pair cache, and the registry's hooks.
#include "model/families/vilt/vilt_family.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <mutex>

#include "model/families/vilt/vilt_alignment.hpp"
#include "model/runtime/cross_encoder.hpp"
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

namespace {

// At most this many embedded images are held while their pairs wait for a forward (an image's
// patch embedding is patches x hidden floats: 0.4 MB for ViLT-B/32 at 384 pixels, 11 MB at the
// largest size the config allows).
constexpr std::size_t kMaxLiveImages = 8;

// ViLT's encodings (the image's patch embedding; the caption's ids) and its scorer (the joint
// transformer) for the cross-encoder runtime.
class ViltTowers final : public detail::CrossTowers<ViltImageEmbeds, std::vector<int>> {
 public:
  explicit ViltTowers(const ViltRuntime& rt) : rt_(rt) {}
  std::vector<ViltImageEmbeds> encode_images(
      const std::vector<std::function<ImageBytes()>>& images) const override {
    std::vector<ViltImageEmbeds> out;
    for (const auto& read : images)
      out.push_back(
          rt_.model->embed_image(vilt_preprocess(decode_image(read()), rt_.model->config())));
    return out;
  }
  std::vector<std::vector<int>> encode_texts(
      const std::vector<const std::string*>& captions) const override {
    std::vector<std::vector<int>> out;
    for (const std::string* c : captions)
      out.push_back(rt_.encode(*c));
    return out;
  }
  std::vector<double> score(const std::vector<const std::vector<int>*>& texts,
                            const std::vector<const ViltImageEmbeds*>& images) const override {
    std::vector<std::vector<int>> ids;
    for (const std::vector<int>* t : texts)
      ids.push_back(*t);
    return rt_.model->score(ids, images).scores;
  }
  std::size_t image_group() const override { return 1; }
  std::size_t max_live_images() const override { return kMaxLiveImages; }
  std::size_t pair_batch() const override {
    return static_cast<std::size_t>(std::max(1, rt_.options.batch_size));
  }
  std::size_t text_batch() const override { return std::numeric_limits<std::size_t>::max(); }

 private:
  const ViltRuntime& rt_;
};

}  // namespace

std::vector<double> vilt_score_pairs(
    const ViltRuntime& rt, const std::vector<std::function<ImageBytes()>>& images,
    const std::vector<std::string>& captions,
    const std::vector<std::pair<std::size_t, std::size_t>>& pairs) {
  return detail::score_all_pairs(ViltTowers(rt), images, captions, pairs, "ViLT",
                                 rt.options.on_progress);
}

namespace {

class ViltVlModel final : public detail::CrossEncoderModel<ViltImageEmbeds, std::vector<int>> {
 public:
  ViltVlModel(ViltRuntime rt, ModelOptions options, std::string name)
      : CrossEncoderModel(std::move(options)), rt_(std::move(rt)), name_(std::move(name)) {}
  ViltVlModel(const ViltVlModel&) = delete;  // towers_ refers to rt_
  ViltVlModel& operator=(const ViltVlModel&) = delete;
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

 protected:
  const detail::CrossTowers<ViltImageEmbeds, std::vector<int>>& towers() const override {
    return towers_;
  }
  // What a cached pair score depends on: the weights, the kernels, the config and the vocabulary.
  std::string signature() const override {
    return "vilt\n" + rt_.model->weights_id() + "\n" + kernel_version() + "\n" +
           rt_.model->config().to_json().dump() + "\n" + rt_.tokenizer->vocab_sha256();
  }

 private:
  ViltRuntime rt_;
  std::string name_;
  ViltTowers towers_{rt_};
};

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
