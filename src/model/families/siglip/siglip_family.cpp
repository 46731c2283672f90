// SigLIP behind the one model interface (vl_model.hpp): a dual encoder on the shared
// dual-encoder runtime (runtime/dual_encoder.hpp: the embedding cache keyed by the weights, the
// kernels, the tokenizer and the preprocessing; batching, read-ahead, progress).
#include <algorithm>
#include <limits>

#include "model/families/siglip/siglip_model.hpp"
#include "model/runtime/dual_encoder.hpp"
#include "winokit/core/error.hpp"
#include "winokit/model/compute.hpp"

namespace winokit {

namespace fs = std::filesystem;

namespace {

constexpr const char* kScoreFormula =
    "exp(logit_scale) * cos(text, image) + logit_bias (a logit; P(match) = sigmoid(score))";

// SigLIP's towers for the dual-encoder runtime.
class SiglipTowers final : public detail::DualTowers {
 public:
  SiglipTowers(const fs::path& checkpoint, const SiglipModel& model,
               const SiglipTokenizer& tokenizer)
      : checkpoint_(checkpoint), model_(model), tokenizer_(tokenizer) {}
  int embed_dim() const override { return model_.config().embed_dim(); }
  std::string source() const override { return checkpoint_.string(); }
  // Keyed by the weights and by what computes the embeddings: the kernels' version and the
  // tokenizer (its spiece.model and settings, the mask among them). The preprocessing is in
  // every image key.
  std::string cache_signature() const override {
    return model_.weights_id() + "\n" + model_.compute_signature() + "\nsiglip\n" +
           tokenizer_.to_json().dump();
  }
  std::string preprocess_json() const override {
    return model_.config().preprocess.to_json().dump();
  }
  std::size_t image_floats() const override {
    const std::size_t side = static_cast<std::size_t>(model_.config().image_size);
    return 3 * side * side;
  }
  std::vector<float> preprocess(const DecodedImage& image) const override {
    return siglip_preprocess(image, model_.config().preprocess);
  }
  double image_batch_bytes(int batch) const override {
    const SiglipConfig& cfg = model_.config();
    const double rows = static_cast<double>(batch) * cfg.patches();
    const double w = cfg.vision.hidden;
    // Activations: x, normed, qkv, context, the MLP's hidden, the post-LN copy and the head's
    // keys and values; im2col patches and pixels; float32.
    return 4.0 * (rows * (w * 9 + cfg.vision.mlp) + rows * cfg.channels * cfg.patch * cfg.patch +
                  static_cast<double>(batch) * 3.0 * cfg.image_size * cfg.image_size);
  }
  TowerOutput encode_images(const float* pixels, int count, const EncodeOptions&) const override {
    TowerOutput t;
    t.count = count;
    t.embeds = model_.encode_images(pixels, count);
    return t;
  }
  detail::TextTokens tokenize(const std::string& caption) const override {
    SiglipTokens t = tokenizer_.encode(caption);
    return {std::move(t.ids), std::move(t.mask)};
  }
  // Every caption is max_length ids (padded): batches of batch_size captions, in order.
  detail::TextBatching text_batching(int batch_size) const override {
    return {false, std::numeric_limits<std::size_t>::max(), static_cast<std::size_t>(batch_size)};
  }
  TowerOutput encode_texts(const std::vector<detail::TextTokens>& captions,
                           const EncodeOptions&) const override {
    std::vector<SiglipTokens> tokens;
    tokens.reserve(captions.size());
    for (const detail::TextTokens& c : captions)
      tokens.push_back({c.ids, c.mask});
    TowerOutput t;
    t.count = static_cast<int>(captions.size());
    t.embeds = model_.encode_texts(tokens, tokenizer_.uses_attention_mask());
    return t;
  }

 private:
  const fs::path& checkpoint_;
  const SiglipModel& model_;
  const SiglipTokenizer& tokenizer_;
};

class SiglipVlModel final : public VlModel, public DualEncoder {
 public:
  SiglipVlModel(const fs::path& checkpoint, const ModelOptions& options)
      : checkpoint_(checkpoint),
        options_(options),
        run_{options.batch_size, options.use_cache, options.cache_dir, options.on_progress},
        model_(SiglipModel::load(checkpoint, options.use_cache ? run_.hash_index() : fs::path{})),
        tokenizer_(SiglipTokenizer::from_directory(checkpoint)),
        towers_(checkpoint_, model_, tokenizer_) {
    if (tokenizer_.max_length() != model_.config().max_positions) {
      throw InputError({(checkpoint / "tokenizer_config.json").string(), 0, "model_max_length"},
                       "pads to " + std::to_string(tokenizer_.max_length()) +
                           " ids, but the text tower pools position " +
                           std::to_string(model_.config().max_positions - 1) +
                           " (max_position_embeddings " +
                           std::to_string(model_.config().max_positions) + ")");
    }
  }

  SiglipVlModel(const SiglipVlModel&) = delete;  // towers_ refers to the members
  SiglipVlModel& operator=(const SiglipVlModel&) = delete;

  // ---- VlModel ----
  std::string family() const override { return "siglip"; }
  std::string name() const override { return checkpoint_name(checkpoint_); }
  std::vector<Ability> abilities() const override {
    return {Ability::PairScores, Ability::Embeddings};
  }
  std::string score_name() const override { return "exp(logit_scale) * cos + logit_bias"; }
  nlohmann::json describe() const override {
    const SiglipConfig& c = model_.config();
    return {{"kind", "siglip"},
            {"family", "siglip"},
            {"model", checkpoint_.string()},
            {"weights_sha256", model_.weights_id()},
            {"config", c.to_json()},
            {"tokenizer", tokenizer_.to_json()},
            {"preprocess", c.preprocess.to_json()},
            {"score", kScoreFormula},
            {"logit_scale", model_.logit_scale()},
            {"logit_bias", model_.logit_bias()},
            {"embeddings", "pooled features before normalisation (get_image/text_features)"},
            {"precision", "float32"},
            {"compute", compute_record()},
            {"threads", compute_threads()},
            {"batch_size", options_.batch_size}};
  }
  std::vector<double> score_pairs(const std::vector<ImageRequest>& images,
                                  const std::vector<std::string>& captions,
                                  const std::vector<PairIndex>& pairs,
                                  EmbedStats* stats) const override {
    return dual_encoder_pair_scores(*this, images, captions, pairs, stats);
  }
  const DualEncoder* dual_encoder() const override { return this; }
  std::unique_ptr<PreparedImages> prepare_images(
      const std::vector<ImageRequest>& images) const override {
    return prepare_embedded_images(*this, images);
  }

  // ---- DualEncoder ----
  int embed_dim() const override { return model_.config().embed_dim(); }
  double score(const float* text, const float* image) const override {
    return model_.score(text, image);
  }
  std::vector<float> embed_images(const std::vector<ImageRequest>& images, EmbedStats* stats,
                                  const EncodeOptions& encode, TowerOutput* full) const override {
    refuse_states(encode, full);
    return detail::run_image_embeddings(towers_, run_, images, stats);
  }
  std::vector<float> embed_texts(const std::vector<std::string>& texts, EmbedStats* stats,
                                 const EncodeOptions& encode, TowerOutput* full) const override {
    refuse_states(encode, full);
    return detail::run_text_embeddings(towers_, run_, texts, stats);
  }

 private:
  // SigLIP has no Ability::States: per-layer or per-token states are refused.
  static void refuse_states(const EncodeOptions& encode, const TowerOutput* full) {
    if (encode.hidden_states || encode.token_states || encode.pooled_states || full != nullptr) {
      throw UsageError("SigLIP does not expose its towers' states (no probes or maps for it)");
    }
  }
  fs::path checkpoint_;
  ModelOptions options_;
  detail::DualRunOptions run_;
  SiglipModel model_;
  SiglipTokenizer tokenizer_;
  SiglipTowers towers_;
};

}  // namespace

bool is_siglip_checkpoint(const fs::path& checkpoint) {
  std::error_code ec;
  if (!fs::is_directory(checkpoint, ec)) return false;
  return checkpoint_model_type(checkpoint) == "siglip";
}

std::unique_ptr<VlModel> open_siglip(const fs::path& checkpoint, const ModelOptions& options) {
  if (!options.head.empty()) {
    throw UsageError(
        "--head does not apply to SigLIP (it has one head: " + std::string(kScoreFormula) + ")");
  }
  return std::make_unique<SiglipVlModel>(checkpoint, options);
}

}  // namespace winokit
