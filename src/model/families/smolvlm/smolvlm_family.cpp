// SmolVLM / Idefics3 as a VlModel (the registry's "smolvlm" family): VQAScore pair scores through
// the shared adapter (vqascore.hpp: each image's prompt prefix run once into a KV cache, every
// caption paired with it continued from there, all through the pair cache), plus SmolVLM's own
// engine figures for `winokit bench`.
#include <algorithm>
#include <chrono>
#include <map>

#include "model/families/smolvlm/smolvlm_model.hpp"
#include "model/runtime/vqascore.hpp"
#include "winokit/core/error.hpp"
#include "winokit/core/rng.hpp"
#include "winokit/io/image_decode.hpp"
#include "winokit/model/compute.hpp"

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

// The model as the shared VQAScore adapter needs it (it keeps the model alive).
class SmolVlmScorer final : public VqaScorer {
 public:
  explicit SmolVlmScorer(std::shared_ptr<const SmolVlmModel> model) : model_(std::move(model)) {}
  KvCache image_prefix(const DecodedImage& image) const override {
    return model_->image_prefix(image);
  }
  std::vector<double> answer_probabilities(
      const KvCache& prefix, const std::vector<std::string>& captions) const override {
    return model_->answer_probabilities(prefix, captions);
  }
  nlohmann::json engine_bench(const EngineBenchOptions& o) const override;

 private:
  std::shared_ptr<const SmolVlmModel> model_;
};

// Where a pair's time goes, on Winoground-sized photos (1920x1280, synthetic pixels): the
// image's preprocessing, the vision tower (SigLIP + connector), the prompt prefix through the
// decoder (once per image) and the per-caption suffix (2 captions per image, one batch, as
// Winoground pairs them). Each phase is timed apart, through the same calls as score_pairs
// (image_prefix from the features computed beforehand: the same bits; both captions in one
// forward, as score_pairs runs them at any batch size of 2 or more).
nlohmann::json SmolVlmScorer::engine_bench(const EngineBenchOptions& o) const {
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
      (void)model_->answer_probabilities(cache, {kCaptions[0], kCaptions[1]});
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
  // --model-option KEY=VALUE (the registry has checked the keys): question and answer as every
  // VQAScore family reads them, then SmolVLM's image-splitting.
  read_vqascore_settings(options, vqa);
  for (const auto& [key, value] : options.settings) {
    if (key == "image-splitting") {
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
  auto model = std::make_shared<const SmolVlmModel>(SmolVlmModel::load(checkpoint, vqa));
  VqaScoreModelInfo info = vqascore_model_info(
      {"smolvlm", checkpoint, options, model->options(), model->weights_id(),
       model->config().to_json(), model->config().preprocess.to_json(), &model->tokenizer(),
       model->answer_id(),
       "<|im_start|>User:<image tokens>QUESTION<end_of_utterance>\\nAssistant:"});
  return make_vqascore_model(std::move(info), std::make_shared<SmolVlmScorer>(model));
}

}  // namespace winokit
