#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "model/kernels/gemm.hpp"
#include "model/kernels/ops.hpp"
#include "model/kernels/parallel.hpp"
#include "model/layers/transformer.hpp"
#include "model/lm/lm_runtime.hpp"
#include "model/runtime/checkpoint.hpp"
#include "winokit/core/error.hpp"
#include "winokit/core/rng.hpp"
#include "winokit/io/files.hpp"
#include "winokit/io/safetensors.hpp"
#include "winokit/model/gpt2_model.hpp"
#include "winokit/model/tokenizer.hpp"

namespace winokit {

namespace fs = std::filesystem;
using detail::layer_norm;
using detail::Linear;
using detail::PostOp;
using nlohmann::json;

double Gpt2Config::parameters() const {
  const double w = width, m = inner;
  const double block = 2 * 2 * w + (3 * w * w + 3 * w) + (w * w + w) + (w * m + m) + (m * w + w);
  return vocab_size * w + positions * w + layers * block + 2 * w;
}

namespace {

// The logits of at most this many rows at once (256 x vocabulary floats: 51 MB for GPT-2).
constexpr int kBlockRows = 256;

std::vector<float> transpose(const std::vector<float>& m, int rows, int cols) {
  std::vector<float> t(m.size());
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c)
      t[static_cast<std::size_t>(c) * rows + r] = m[static_cast<std::size_t>(r) * cols + c];
  }
  return t;
}

using Source = detail::TensorSource;

// Seeded weights at GPT-2's initialisation scales: N(0, 0.02^2)-like weights, LayerNorm gains
// 1 + 0.1-scale noise, small biases.
detail::RandomInit gpt2_random_init(const std::string& name, const std::vector<std::int64_t>&) {
  const bool bias = name.size() >= 4 && name.compare(name.size() - 4, 4, "bias") == 0;
  const bool gain = name.find("ln_") != std::string::npos && !bias;
  return {gain ? 1.0 : 0.0, bias ? 0.01 : gain ? 0.1 : 0.02, std::nullopt};
}

}  // namespace

Gpt2Config load_gpt2_config(const fs::path& dir) {
  const fs::path file = dir / "config.json";
  const json cfg = detail::read_config_json(file, true);
  if (auto mt = cfg.find("model_type"); mt != cfg.end() && mt->is_string() && *mt != "gpt2") {
    throw InputError({file.string(), 0, "model_type"},
                     "'" + mt->get<std::string>() + "' is not a GPT-2 model",
                     "perplexity needs a Hugging Face GPT-2 checkpoint (gpt2, distilgpt2, ...)");
  }
  const detail::ConfigReader q(cfg, file);
  Gpt2Config c;
  q.integer("n_layer", c.layers, 1, 1000);
  q.integer("n_head", c.heads, 1, 1000);
  q.integer("n_embd", c.width, 1, 1 << 16);
  q.integer("n_ctx", c.positions, 1, 1 << 20);  // the older name; n_positions wins
  q.integer("n_positions", c.positions, 1, 1 << 20);
  q.integer("vocab_size", c.vocab_size, 1, 1 << 24);
  c.inner = 4 * c.width;  // n_inner null: 4 * n_embd
  q.integer("n_inner", c.inner, 1, 1 << 18);
  if (c.width % c.heads != 0) {
    q.fail("n_head", "n_embd " + std::to_string(c.width) + " is not a multiple of n_head " +
                         std::to_string(c.heads));
  }
  q.positive("layer_norm_epsilon", c.eps);
  std::string act = "gelu_new";
  q.one_of("activation_function", act, {"gelu_new", "gelu_pytorch_tanh", "gelu"});
  c.act = act == "gelu" ? Gpt2Activation::GeluErf : Gpt2Activation::GeluTanh;
  bool by_layer = false, scaled = true;
  q.flag("scale_attn_by_inverse_layer_idx", by_layer);
  q.flag("scale_attn_weights", scaled);
  if (by_layer) {
    q.fail("scale_attn_by_inverse_layer_idx", "not supported (GPT-2 checkpoints leave it off)");
  }
  if (!scaled) {
    q.fail("scale_attn_weights", "not supported (GPT-2 checkpoints scale attention by 1/sqrt(d))");
  }
  return c;
}

struct Gpt2Model::Impl {
  Gpt2Config cfg;
  std::string weights_id;
  std::vector<float> wte, wpe;  // [vocab, width], [positions, width]
  std::vector<detail::EncoderLayer> blocks;
  std::vector<float> lnf_g, lnf_b;
  Linear head;  // logits = h wte^T
  mutable double gemm_seconds = 0;

  void load(Source& src) {
    const std::int64_t w = cfg.width, m = cfg.inner;
    const int wi = cfg.width, mi = cfg.inner;
    wte = src.get("wte.weight", {cfg.vocab_size, w});
    wpe = src.get("wpe.weight", {cfg.positions, w});
    const PostOp act = cfg.act == Gpt2Activation::GeluTanh ? PostOp::GeluTanh : PostOp::Gelu;
    for (int i = 0; i < cfg.layers; ++i) {
      const std::string p = "h." + std::to_string(i) + ".";
      detail::EncoderLayer b;
      b.ln1_g = src.get(p + "ln_1.weight", {w});
      b.ln1_b = src.get(p + "ln_1.bias", {w});
      b.ln2_g = src.get(p + "ln_2.weight", {w});
      b.ln2_b = src.get(p + "ln_2.bias", {w});
      // Conv1D weights are stored [in, out]; Linear takes [out, in].
      b.qkv = Linear(transpose(src.get(p + "attn.c_attn.weight", {w, 3 * w}), wi, 3 * wi),
                     src.get(p + "attn.c_attn.bias", {3 * w}), 3 * wi, wi);
      b.out = Linear(transpose(src.get(p + "attn.c_proj.weight", {w, w}), wi, wi),
                     src.get(p + "attn.c_proj.bias", {w}), wi, wi, PostOp::None,
                     /*accumulate=*/true);
      b.fc1 = Linear(transpose(src.get(p + "mlp.c_fc.weight", {w, m}), wi, mi),
                     src.get(p + "mlp.c_fc.bias", {m}), mi, wi, act);
      b.fc2 = Linear(transpose(src.get(p + "mlp.c_proj.weight", {m, w}), mi, wi),
                     src.get(p + "mlp.c_proj.bias", {w}), wi, mi, PostOp::None,
                     /*accumulate=*/true);
      blocks.push_back(std::move(b));
    }
    lnf_g = src.get("ln_f.weight", {w});
    lnf_b = src.get("ln_f.bias", {w});
    head = Linear(wte, {}, cfg.vocab_size, wi);
  }

  // y = layer(x) on `rows` rows (each row's bits do not depend on the others: gemm.hpp).
  void gemm(const Linear& layer, const float* x, int rows, float* y) const {
    const auto t0 = std::chrono::steady_clock::now();
    layer.forward(x, rows, y);
    gemm_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  // Scores sequences [first, last) of `seqs` into `out`.
  void score_batch(const std::vector<std::vector<int>>& seqs, std::size_t first, std::size_t last,
                   std::vector<SequenceScore>& out) const {
    const int w = cfg.width;
    std::vector<int> start, len;
    int total = 0;
    for (std::size_t s = first; s < last; ++s) {
      start.push_back(total);
      len.push_back(static_cast<int>(seqs[s].size()));
      total += len.back();
    }
    const int rows = total;
    const std::size_t rw = static_cast<std::size_t>(rows) * w;
    std::vector<float> x(rw, 0.f);
    for (std::size_t s = first; s < last; ++s) {
      const auto& seq = seqs[s];
      for (std::size_t t = 0; t < seq.size(); ++t) {
        float* dst = &x[(static_cast<std::size_t>(start[s - first]) + t) * w];
        const float* tok = &wte[static_cast<std::size_t>(seq[t]) * w];
        const float* pos = &wpe[t * w];
        for (int i = 0; i < w; ++i)
          dst[i] = tok[i] + pos[i];
      }
    }
    const std::vector<std::size_t> offsets(start.begin(), start.end()),
        lengths(len.begin(), len.end());
    // Conv1D's layer, written as the shared pre-LN layer with causal attention.
    detail::EncoderRun run{static_cast<std::size_t>(rows),
                           offsets,
                           lengths,
                           cfg.heads,
                           cfg.eps,
                           /*causal=*/true};
    run.gemm_seconds = &gemm_seconds;
    detail::run_encoder_layers(blocks, x, run);
    // Rows that predict a next token: positions 0..n-2 of each sequence, with their targets.
    std::vector<int> pick, target;
    for (std::size_t s = first; s < last; ++s) {
      for (std::size_t t = 0; t + 1 < seqs[s].size(); ++t) {
        pick.push_back(start[s - first] + static_cast<int>(t));
        target.push_back(seqs[s][t + 1]);
      }
    }
    std::vector<double> log_probs(pick.size());
    const int v = cfg.vocab_size;
    std::vector<float> gathered(static_cast<std::size_t>(kBlockRows) * w),
        normed_rows(gathered.size()), logits(static_cast<std::size_t>(kBlockRows) * v);
    for (std::size_t r0 = 0; r0 < pick.size(); r0 += kBlockRows) {
      const std::size_t count = std::min<std::size_t>(kBlockRows, pick.size() - r0);
      for (std::size_t r = 0; r < count; ++r) {
        std::memcpy(&gathered[r * w], &x[static_cast<std::size_t>(pick[r0 + r]) * w],
                    sizeof(float) * w);
      }
      layer_norm(gathered.data(), count, w, lnf_g, lnf_b, cfg.eps, normed_rows.data());
      gemm(head, normed_rows.data(), static_cast<int>(count), logits.data());
      detail::parallel_for(count, [&](std::size_t r) {
        log_probs[r0 + r] = detail::log_softmax_at(&logits[r * v], v, target[r0 + r]);
      });
    }
    std::size_t k = 0;
    for (std::size_t s = first; s < last; ++s) {
      const std::size_t n = seqs[s].size() - 1;
      out[s] = detail::sequence_score({log_probs.begin() + static_cast<std::ptrdiff_t>(k),
                                       log_probs.begin() + static_cast<std::ptrdiff_t>(k + n)});
      k += n;
    }
  }
};

Gpt2Model::Gpt2Model() : impl_(std::make_unique<Impl>()) {}
Gpt2Model::Gpt2Model(Gpt2Model&&) noexcept = default;
Gpt2Model& Gpt2Model::operator=(Gpt2Model&&) noexcept = default;
Gpt2Model::~Gpt2Model() = default;

const Gpt2Config& Gpt2Model::config() const {
  return impl_->cfg;
}
const std::string& Gpt2Model::weights_id() const {
  return impl_->weights_id;
}
double Gpt2Model::gemm_seconds() const {
  return impl_->gemm_seconds;
}

Gpt2Model Gpt2Model::load(const fs::path& dir) {
  Gpt2Model model;
  model.impl_->cfg = load_gpt2_config(dir);
  // transformers' GPT2LMHeadModel files name the weights under "transformer." (GPT2Model's do
  // not).
  detail::CheckpointSource src(detail::open_weights(detail::find_weights(dir)));
  if (src.has("transformer.wte.weight")) src.set_prefix("transformer.");
  model.impl_->weights_id = src.tensors().content_hash();
  model.impl_->load(src);
  return model;
}

Gpt2Model Gpt2Model::random(const Gpt2Config& config, std::uint64_t seed) {
  Gpt2Model model;
  model.impl_->cfg = config;
  model.impl_->weights_id = "random:" + std::to_string(seed);
  detail::RandomSource src(seed, gpt2_random_init);
  model.impl_->load(src);
  return model;
}

std::vector<SequenceScore> Gpt2Model::score(const std::vector<std::vector<int>>& sequences,
                                            const Gpt2Options& options) const {
  const Gpt2Config& c = impl_->cfg;
  std::vector<SequenceScore> out(sequences.size());
  detail::score_in_batches(sequences, c.positions, c.vocab_size,
                           static_cast<std::size_t>(std::max(1, options.batch_tokens)), options,
                           [&](std::size_t first, std::size_t last) {
                             impl_->score_batch(sequences, first, last, out);
                           });
  return out;
}

// ---- the language-model interface ----
namespace detail {
namespace {

class Gpt2LanguageModel final : public LanguageModel {
 public:
  Gpt2LanguageModel(Gpt2Model model, Gpt2Tokenizer tokenizer)
      : model_(std::move(model)), tokenizer_(std::move(tokenizer)) {}
  std::string display_name() const override { return "GPT-2"; }
  const std::string& weights_id() const override { return model_.weights_id(); }
  int context() const override { return model_.config().positions; }
  int vocab_size() const override { return model_.config().vocab_size; }
  std::vector<int> encode(const std::string& text) const override {
    return tokenizer_.encode(text);
  }
  std::optional<int> start_token() const override { return tokenizer_.eos_id(); }
  std::string start_token_text() const override { return "<|endoftext|>"; }
  std::string reference_class() const override { return "GPT2LMHeadModel"; }
  std::vector<SequenceScore> score(const std::vector<std::vector<int>>& sequences,
                                   const LmOptions& options) const override {
    return model_.score(sequences, options);
  }

 private:
  Gpt2Model model_;
  Gpt2Tokenizer tokenizer_;
};

}  // namespace

std::unique_ptr<LanguageModel> load_gpt2_language_model(const fs::path& model,
                                                        const fs::path& tokenizer) {
  Gpt2Model m = Gpt2Model::load(model);
  Gpt2Tokenizer tok = Gpt2Tokenizer::from_directory(tokenizer.empty() ? model : tokenizer);
  if (tok.max_id() >= m.config().vocab_size) {
    throw UsageError("the tokenizer's ids go up to " + std::to_string(tok.max_id()) +
                         " but the model's vocabulary has " +
                         std::to_string(m.config().vocab_size) + " entries",
                     "use the tokenizer files that came with the model");
  }
  return std::make_unique<Gpt2LanguageModel>(std::move(m), std::move(tok));
}

}  // namespace detail
}  // namespace winokit
