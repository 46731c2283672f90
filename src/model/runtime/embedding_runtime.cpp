#include "model/runtime/embedding_runtime.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include <cstring>

#include <exception>

#include "model/runtime/dual_encoder.hpp"
#include "winokit/core/error.hpp"
#include "winokit/core/hash.hpp"
#include "winokit/io/files.hpp"
#include "winokit/io/image_decode.hpp"
#include "winokit/io/safetensors.hpp"
#include "winokit/model/compute.hpp"
#include "winokit/model/preprocess.hpp"

namespace winokit {

namespace fs = std::filesystem;

namespace {

detail::DualRunOptions run_options(const ClipRunOptions& o) {
  return {o.batch_size, o.use_cache, o.cache_dir, o.on_progress};
}

}  // namespace

ClipRuntime ClipRuntime::load(const fs::path& dir, ClipRunOptions options) {
  ClipRuntime rt;
  // The weights' hash (the cache key) is remembered in the cache folder, so that a run whose
  // embeddings are all cached reads neither the weights nor their hash.
  rt.model = std::make_shared<ClipModel>(
      ClipModel::load(dir, options.use_cache ? run_options(options).hash_index() : fs::path{}));
  fs::path tok = options.tokenizer.value_or(dir);
  if (!options.tokenizer && fs::is_regular_file(dir)) {
    // OpenAI's .pt files hold no tokenizer: openai/CLIP ships it as a separate file.
    tok = dir.parent_path() / "bpe_simple_vocab_16e6.txt.gz";
    if (!fs::is_regular_file(tok)) {
      throw UsageError(dir.string() + " holds no tokenizer, and there is no " + tok.string(),
                       "pass --tokenizer bpe_simple_vocab_16e6.txt.gz (openai/CLIP's "
                       "clip/bpe_simple_vocab_16e6.txt.gz) or a folder with vocab.json + "
                       "merges.txt, or put that file beside the .pt");
    }
  }
  if (fs::is_directory(tok)) {
    rt.tokenizer = std::make_shared<ClipTokenizer>(ClipTokenizer::from_directory(tok));
  } else if (tok.extension() == ".gz") {
    rt.tokenizer = std::make_shared<ClipTokenizer>(ClipTokenizer::from_openai(tok));
  } else {
    throw UsageError("--tokenizer: expected a folder or bpe_simple_vocab_16e6.txt.gz, got " +
                     tok.string());
  }
  rt.options = std::move(options);
  rt.source = dir.string();
  return rt;
}

ClipRuntime ClipRuntime::random(const ClipConfig& config, std::uint64_t seed,
                                std::shared_ptr<ClipTokenizer> tokenizer, ClipRunOptions options) {
  ClipRuntime rt;
  rt.model = std::make_shared<ClipModel>(ClipModel::random(config, seed));
  rt.tokenizer = std::move(tokenizer);
  rt.options = std::move(options);
  rt.source = "random weights (seed " + std::to_string(seed) + ")";
  return rt;
}

PreprocessConfig ClipRuntime::preprocess() const {
  PreprocessConfig p = model->config().preprocess;
  if (options.pipeline) p.pipeline = *options.pipeline;
  return p;
}

nlohmann::json ClipRuntime::describe() const {
  const ClipConfig& c = model->config();
  return {{"kind", "clip"},
          {"model", source},
          {"weights_sha256", model->weights_id()},
          {"layout", to_string(c.layout)},
          {"vision",
           {{"width", c.vision.width},
            {"layers", c.vision.layers},
            {"heads", c.vision.heads},
            {"patch", c.patch},
            {"image_size", c.image_size}}},
          {"text", {{"width", c.text.width}, {"layers", c.text.layers}, {"heads", c.text.heads}}},
          {"embed_dim", c.embed_dim},
          {"activation", c.vision.act == Activation::QuickGelu ? "quick_gelu" : "gelu"},
          {"preprocess", preprocess().to_json()},
          {"precision", "float32"},
          {"compute", compute_record()},
          {"threads", compute_threads()},
          {"batch_size", options.batch_size}};
}

ImageRequest image_file_request(const std::string& path, std::string name) {
  if (name.empty()) name = path;
  return {name,
          [path, name] {
            ImageBytes b;
            b.name = name;
            b.source = path;
            b.bytes = read_file(path);
            b.format = sniff_image_format(b.bytes);
            return b;
          },
          [path]() -> std::optional<fs::path> { return fs::path(path); }};
}

double clip_score(const float* text, const float* image, int dim, double logit_scale_exp) {
  double tt = 0, ii = 0, ti = 0;
  for (int k = 0; k < dim; ++k) {
    tt += static_cast<double>(text[k]) * text[k];
    ii += static_cast<double>(image[k]) * image[k];
    ti += static_cast<double>(text[k]) * image[k];
  }
  return logit_scale_exp * ti / (std::sqrt(tt) * std::sqrt(ii));
}

namespace {

// CLIP's two towers for the dual-encoder runtime.
class ClipTowers final : public detail::DualTowers {
 public:
  explicit ClipTowers(const ClipRuntime& rt) : rt_(rt), cfg_(rt.model->config()) {}
  int embed_dim() const override { return cfg_.embed_dim; }
  std::string source() const override { return rt_.source; }
  // Keyed by the weights and by what computes them (a new kernel version may round
  // differently: never mix its embeddings with an older version's).
  std::string cache_signature() const override {
    return rt_.model->weights_id() + "\n" + rt_.model->compute_signature();
  }
  void check_image_settings() const override {
    if (rt_.preprocess().crop != cfg_.image_size) {
      throw UsageError("the preprocessing crop (" + std::to_string(rt_.preprocess().crop) +
                       ") differs from the model's image size (" + std::to_string(cfg_.image_size) +
                       ")");
    }
  }
  std::string preprocess_json() const override { return rt_.preprocess().to_json().dump(); }
  std::size_t image_floats() const override {
    const std::size_t side = static_cast<std::size_t>(cfg_.image_size);
    return 3 * side * side;
  }
  std::vector<float> preprocess(const DecodedImage& image) const override {
    return winokit::preprocess(image, pp_);
  }
  double image_batch_bytes(int batch) const override {
    const double tokens = cfg_.vision_tokens();
    const double rows = static_cast<double>(batch) * tokens;
    const double w = cfg_.vision.width, heads = cfg_.vision.heads;
    // Activations: x, normed, qkv, attention output, MLP hidden, attention probabilities,
    // im2col, pixels; float32.
    return 4.0 * (rows * (w * 6 + cfg_.vision.mlp) + batch * heads * tokens * tokens +
                  2.0 * batch * 3.0 * cfg_.image_size * cfg_.image_size);
  }
  TowerOutput encode_images(const float* pixels, int count,
                            const EncodeOptions& encode) const override {
    return rt_.model->encode_images(pixels, count, encode);
  }
  int image_levels() const override { return cfg_.vision.layers + 1; }
  int image_width() const override { return cfg_.vision.width; }
  detail::TextTokens tokenize(const std::string& caption) const override {
    return {rt_.tokenizer->encode(caption, cfg_.context_length), {}};
  }
  // Batches fill a budget of token rows (shortest captions first, so little padding).
  detail::TextBatching text_batching(int) const override {
    constexpr std::size_t kTextRows = 2048;
    return {true, kTextRows, std::numeric_limits<std::size_t>::max()};
  }
  TowerOutput encode_texts(const std::vector<detail::TextTokens>& captions,
                           const EncodeOptions& encode) const override {
    std::vector<std::vector<int>> ids;
    ids.reserve(captions.size());
    for (const detail::TextTokens& t : captions)
      ids.push_back(t.ids);
    return rt_.model->encode_texts(ids, encode);
  }
  int text_levels() const override { return cfg_.text.layers + 1; }
  int text_width() const override { return cfg_.text.width; }

 private:
  const ClipRuntime& rt_;
  const ClipConfig& cfg_;
  const PreprocessConfig pp_ = rt_.preprocess();
};

}  // namespace

std::vector<float> embed_images(const ClipRuntime& rt, const std::vector<ImageRequest>& requests,
                                EmbedStats* stats, const EncodeOptions& encode, TowerOutput* full) {
  return detail::run_image_embeddings(ClipTowers(rt), run_options(rt.options), requests, stats,
                                      encode, full);
}

std::vector<float> embed_texts(const ClipRuntime& rt, const std::vector<std::string>& captions,
                               EmbedStats* stats, const EncodeOptions& encode, TowerOutput* full) {
  return detail::run_text_embeddings(ClipTowers(rt), run_options(rt.options), captions, stats,
                                     encode, full);
}

}  // namespace winokit
