// SmolVLM / Idefics3 as a VlModel (the registry's "smolvlm" family): VQAScore pair scores, each
// image's prompt prefix run once into a KV cache and every caption paired with it continued from
// there, batch_size captions per forward, all through the pair cache.
#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>

#include "winokit/core/error.hpp"
#include "winokit/core/rng.hpp"
#include "winokit/io/image_decode.hpp"
#include "winokit/model/compute.hpp"
#include "winokit/model/smolvlm_model.hpp"

namespace winokit {

namespace fs = std::filesystem;

bool is_smolvlm_checkpoint(const fs::path& checkpoint) {
  const std::string type = checkpoint_model_type(checkpoint);
  return type == "idefics3" || type == "smolvlm";
}

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

class SmolVlmVlModel final : public VlModel {
 public:
  SmolVlmVlModel(const fs::path& checkpoint, const ModelOptions& options,
                 const VqaScoreOptions& vqa)
      : checkpoint_(checkpoint),
        options_(options),
        model_(std::make_unique<SmolVlmModel>(SmolVlmModel::load(checkpoint, vqa))) {
    // Weights, kernels, config, vocabulary and the templates: what a cached score depends on
    // (the image processor is part of each pair's key).
    signature_ = "smolvlm-vqascore\n" + model_->weights_id() + "\n" + kernel_version() + "\n" +
                 model_->config().to_json().dump() + "\n" + model_->tokenizer().sha256() + "\n" +
                 vqa.question + "\n" + vqa.answer;
  }

  std::string family() const override { return "smolvlm"; }
  std::string name() const override { return checkpoint_name(checkpoint_); }
  std::vector<Ability> abilities() const override { return {Ability::PairScores}; }
  std::string score_name() const override { return "P(" + model_->options().answer + ")"; }

  nlohmann::json describe() const override {
    const SmolVlmConfig& c = model_->config();
    const VqaScoreOptions& o = model_->options();
    return {{"kind", "smolvlm"},
            {"family", "smolvlm"},
            {"model", checkpoint_.string()},
            {"weights_sha256", model_->weights_id()},
            {"config", c.to_json()},
            {"score",
             "VQAScore: softmax over the whole vocabulary of the next-token logits after "
             "<|im_start|>User:<image tokens>QUESTION<end_of_utterance>\\nAssistant:, at the "
             "answer's first token"},
            {"question_template", o.question},
            {"answer", o.answer},
            {"answer_token_id", model_->answer_id()},
            {"tokenizer",
             {{"kind", "tokenizer.json byte-level BPE"},
              {"sha256", model_->tokenizer().sha256()},
              {"vocab_size", model_->tokenizer().vocab_size()}}},
            {"preprocess", c.preprocess.to_json()},
            {"precision", "float32 (weights converted on load)"},
            {"compute", compute_record()},
            {"threads", compute_threads()},
            {"batch_size", options_.batch_size}};
  }

  std::vector<double> score_pairs(const std::vector<ImageRequest>& images,
                                  const std::vector<std::string>& captions,
                                  const std::vector<PairIndex>& pairs,
                                  EmbedStats* stats) const override {
    return cached_pair_scores(images, captions, pairs, options_, signature_,
                              model_->config().preprocess.to_json().dump(), stats,
                              [&](const std::vector<std::size_t>& misses) {
                                return compute(images, captions, pairs, misses, stats);
                              });
  }

  std::unique_ptr<PreparedImages> prepare_images(
      const std::vector<ImageRequest>& images) const override;

  nlohmann::json engine_bench(const EngineBenchOptions& options) const override;

  KvCache prefix(const ImageRequest& image) const {
    return model_->image_prefix(decode_image(image.read()));
  }

  // The captions' scores against one prefix, batch_size per forward.
  std::vector<double> score_with(const KvCache& prefix,
                                 const std::vector<std::string>& captions) const {
    std::vector<double> out;
    const std::size_t batch = static_cast<std::size_t>(std::max(1, options_.batch_size));
    for (std::size_t b = 0; b < captions.size(); b += batch) {
      const std::vector<std::string> part(
          captions.begin() + static_cast<std::ptrdiff_t>(b),
          captions.begin() + static_cast<std::ptrdiff_t>(std::min(captions.size(), b + batch)));
      const std::vector<double> s = model_->answer_probabilities(prefix, part);
      out.insert(out.end(), s.begin(), s.end());
    }
    return out;
  }

 private:
  std::vector<double> compute(const std::vector<ImageRequest>& images,
                              const std::vector<std::string>& captions,
                              const std::vector<PairIndex>& pairs,
                              const std::vector<std::size_t>& misses, EmbedStats* stats) const {
    std::map<std::size_t, std::vector<std::size_t>> by_image;
    for (std::size_t k = 0; k < misses.size(); ++k)
      by_image[pairs[misses[k]].second].push_back(k);
    std::vector<double> out(misses.size());
    std::size_t done = 0;
    for (const auto& [image, list] : by_image) {
      auto t0 = std::chrono::steady_clock::now();
      const KvCache cache = prefix(images[image]);
      if (stats) {
        stats->image_seconds += seconds_since(t0);
        ++stats->images_computed;
      }
      t0 = std::chrono::steady_clock::now();
      std::vector<std::string> texts;
      for (std::size_t k : list)
        texts.push_back(captions[pairs[misses[k]].first]);
      const std::vector<double> s = score_with(cache, texts);
      for (std::size_t i = 0; i < list.size(); ++i)
        out[list[i]] = s[i];
      if (stats) stats->pair_seconds += seconds_since(t0);
      done += list.size();
      if (options_.on_progress) options_.on_progress("pairs", done, misses.size());
    }
    return out;
  }

  fs::path checkpoint_;
  ModelOptions options_;
  std::unique_ptr<SmolVlmModel> model_;
  std::string signature_;
};

// The pool's image prefixes kept in memory as KV caches; each call continues them with its
// captions' questions.
class SmolVlmPreparedImages final : public PreparedImages {
 public:
  SmolVlmPreparedImages(const SmolVlmVlModel& model, const std::vector<ImageRequest>& images)
      : model_(model) {
    for (const ImageRequest& r : images)
      caches_.push_back(model_.prefix(r));
  }
  std::vector<double> score(const std::vector<std::string>& captions,
                            const std::vector<PairIndex>& pairs) const override {
    std::lock_guard<std::mutex> lock(mutex_);
    std::map<std::size_t, std::vector<std::size_t>> by_image;
    for (std::size_t p = 0; p < pairs.size(); ++p) {
      if (pairs[p].first >= captions.size() || pairs[p].second >= caches_.size()) {
        throw UsageError("SmolVLM: pair index out of range");
      }
      by_image[pairs[p].second].push_back(p);
    }
    std::vector<double> out(pairs.size());
    for (const auto& [image, list] : by_image) {
      std::vector<std::string> texts;
      for (std::size_t p : list)
        texts.push_back(captions[pairs[p].first]);
      const std::vector<double> s = model_.score_with(caches_[image], texts);
      for (std::size_t i = 0; i < list.size(); ++i)
        out[list[i]] = s[i];
    }
    return out;
  }

 private:
  const SmolVlmVlModel& model_;
  std::vector<KvCache> caches_;
  mutable std::mutex mutex_;
};

// Where a pair's time goes, on Winoground-sized photos (1920x1280, synthetic pixels): the
// image's preprocessing, the vision tower (SigLIP + connector), the prompt prefix through the
// decoder (once per image) and the per-caption suffix (2 captions per image, one batch, as
// Winoground pairs them). Each phase is timed apart, through the same calls as score_pairs
// (image_prefix from the features computed beforehand: the same bits).
nlohmann::json SmolVlmVlModel::engine_bench(const EngineBenchOptions& o) const {
  using clock = std::chrono::steady_clock;
  constexpr int kWidth = 1920, kHeight = 1280;
  constexpr int kMaxImages = 4;  // a 256M SmolVLM image is seconds of work on 2 cores
  static const char* const kCaptions[2] = {"an old person kisses a young person",
                                           "a young person kisses an old person"};
  const int images = std::clamp(o.images, 1, kMaxImages);
  DecodedImage im;
  im.width = kWidth;
  im.height = kHeight;
  im.pixels.resize(static_cast<std::size_t>(kWidth) * kHeight * 3);
  Rng rng(26);
  for (std::size_t i = 0; i < im.pixels.size(); ++i) {
    const std::size_t x = (i / 3) % kWidth, y = (i / 3) / kWidth;
    im.pixels[i] = static_cast<std::uint8_t>((x / 8 + y / 5 + rng.below(48)) & 255);
  }
  std::map<std::string, std::vector<double>> ms;  // phase -> per-image ms of each run
  SmolVlmTiles tiles;
  std::size_t prefix_tokens = 0;
  auto run = [&](bool keep) {
    std::map<std::string, double> t;
    for (int i = 0; i < images; ++i) {
      auto t0 = clock::now();
      tiles = smolvlm_preprocess(im, model_->config().preprocess);
      t["preprocess"] += seconds_since(t0);
      t0 = clock::now();
      const std::vector<float> f = model_->image_features(tiles);
      t["vision"] += seconds_since(t0);
      t0 = clock::now();
      const KvCache cache = model_->image_prefix(tiles, f);
      t["prefix"] += seconds_since(t0);
      t0 = clock::now();
      (void)score_with(cache, {kCaptions[0], kCaptions[1]});
      t["suffix"] += seconds_since(t0);
    }
    if (!keep) return;
    for (const auto& [k, v] : t)
      ms[k].push_back(1000.0 * v / images);
  };
  run(false);  // warm-up
  for (int r = 0; r < std::max(1, o.runs); ++r)
    run(true);
  prefix_tokens = model_->prefix_ids(tiles).size();
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  };
  nlohmann::json per_image, shares;
  double total = 0;
  for (const auto& [k, v] : ms) {
    per_image[k] = median(v);
    total += median(v);
  }
  for (const auto& [k, v] : ms)
    shares[k] = median(v) / total;
  return {{"smolvlm_image", std::to_string(kWidth) + "x" + std::to_string(kHeight)},
          {"smolvlm_images_per_run", images},
          {"smolvlm_image_splitting", model_->config().preprocess.do_image_splitting},
          {"smolvlm_tiles_per_image", tiles.count},
          {"smolvlm_prefix_tokens", prefix_tokens},
          {"smolvlm_question_tokens", model_->question_ids(kCaptions[0]).size()},
          {"smolvlm_ms_per_image_median", per_image},
          {"smolvlm_ms_per_image_total", total},
          {"smolvlm_share_of_time", shares},
          {"smolvlm_captions_per_image", 2}};
}

std::unique_ptr<PreparedImages> SmolVlmVlModel::prepare_images(
    const std::vector<ImageRequest>& images) const {
  return std::make_unique<SmolVlmPreparedImages>(*this, images);
}

}  // namespace

std::unique_ptr<VlModel> open_smolvlm(const fs::path& checkpoint, const ModelOptions& options) {
  if (!options.head.empty()) {
    throw UsageError("--head: SmolVLM has one score (VQAScore), no heads to choose from");
  }
  VqaScoreOptions vqa;
  if (options.preprocess == "split") {
    vqa.image_splitting = 1;
  } else if (options.preprocess == "no-split") {
    vqa.image_splitting = 0;
  } else if (!options.preprocess.empty()) {
    throw UsageError("--preprocess: SmolVLM takes split or no-split, not '" + options.preprocess +
                     "'");
  }
  // --model-option KEY=VALUE (the registry has checked the keys).
  for (const auto& [key, value] : options.settings) {
    if (key == "question") {
      if (value.find("{}") == std::string::npos) {
        throw UsageError("--model-option question=" + value + ": no {} for the caption",
                         "e.g. --model-option 'question=Does this figure show \"{}\"? Please "
                         "answer yes or no.'");
      }
      vqa.question = value;
    } else if (key == "answer") {
      if (value.empty()) throw UsageError("--model-option answer= needs an answer (e.g. Yes)");
      vqa.answer = value;
    } else if (key == "image-splitting") {
      if (value != "true" && value != "false") {
        throw UsageError("--model-option image-splitting takes true or false, not '" + value + "'");
      }
      const int want = value == "true" ? 1 : 0;
      if (vqa.image_splitting != -1 && vqa.image_splitting != want) {
        throw UsageError("--model-option image-splitting=" + value + " contradicts --preprocess " +
                         options.preprocess);
      }
      vqa.image_splitting = want;
    }
  }
  return std::make_unique<SmolVlmVlModel>(checkpoint, options, vqa);
}

}  // namespace winokit
