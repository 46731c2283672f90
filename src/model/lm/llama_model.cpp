#include "model/lm/llama_model.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <optional>

#include "model/kernels/gemm.hpp"
#include "model/kernels/ops.hpp"
#include "model/kernels/parallel.hpp"
#include "model/lm/lm_runtime.hpp"
#include "model/runtime/checkpoint.hpp"
#include "model/text/hf_tokenizer.hpp"
#include "winokit/core/error.hpp"
#include "winokit/io/files.hpp"
#include "winokit/io/safetensors.hpp"

namespace winokit {

namespace fs = std::filesystem;
using detail::Linear;
using nlohmann::json;

namespace {

using detail::rms_norm;

struct Layer {
  std::vector<float> ln1, ln2;
  Linear qkv;      // [(heads + 2 kv_heads) * head_dim, hidden]: q, k, v side by side
  Linear o;        // accumulates onto the residual
  Linear gate_up;  // [2 * intermediate, hidden]: gate then up
  Linear down;     // accumulates onto the residual
};

}  // namespace

nlohmann::json LlamaConfig::to_json() const {
  return {{"model_type", model_type},
          {"vocab_size", vocab_size},
          {"hidden_size", hidden},
          {"intermediate_size", intermediate},
          {"num_hidden_layers", layers},
          {"num_attention_heads", heads},
          {"num_key_value_heads", kv_heads},
          {"head_dim", head_dim},
          {"max_position_embeddings", max_positions},
          {"rms_norm_eps", rms_eps},
          {"rope_theta", rope_theta},
          {"tie_word_embeddings", tie_embeddings},
          {"qkv_bias", qkv_bias},
          {"o_bias", o_bias},
          {"mlp_bias", mlp_bias}};
}

std::size_t KvCache::bytes() const {
  std::size_t n = 0;
  for (const auto& x : k)
    n += x.size() * sizeof(float);
  for (const auto& x : v)
    n += x.size() * sizeof(float);
  return n;
}

LlamaConfig llama_config_from_json(const json& cfg, const std::string& where) {
  if (!cfg.is_object()) throw InputError({where, 0, ""}, "expected a JSON object");
  const detail::ConfigReader q(cfg, where);
  LlamaConfig c;
  if (auto it = cfg.find("model_type"); it != cfg.end() && it->is_string()) {
    c.model_type = it->get<std::string>();
  }
  if (c.model_type != "llama" && c.model_type != "qwen2") {
    q.fail("model_type", "'" + c.model_type + "' is not a Llama or Qwen2 language model");
  }
  const bool qwen = c.model_type == "qwen2";
  if (qwen) {  // Qwen2Config's defaults
    c.vocab_size = 151936;
    c.hidden = 4096;
    c.intermediate = 22016;
    c.heads = 32;
    c.kv_heads = 32;
    c.max_positions = 32768;
  }
  q.integer("vocab_size", c.vocab_size, 1, 1 << 24);
  q.integer("hidden_size", c.hidden, 1, 1 << 16);
  q.integer("intermediate_size", c.intermediate, 1, 1 << 18);
  q.integer("num_hidden_layers", c.layers, 1, 1000);
  q.integer("num_attention_heads", c.heads, 1, 1024);
  c.kv_heads = c.heads;  // absent: num_attention_heads
  q.integer("num_key_value_heads", c.kv_heads, 1, 1024);
  q.integer("max_position_embeddings", c.max_positions, 1, 1 << 24);
  if (c.hidden % c.heads != 0 && !q.has("head_dim")) {
    q.fail("num_attention_heads", "hidden_size " + std::to_string(c.hidden) +
                                      " is not a multiple of " + std::to_string(c.heads));
  }
  c.head_dim = c.hidden / c.heads;
  q.integer("head_dim", c.head_dim, 1, 1 << 12);
  if (c.head_dim % 2 != 0) q.fail("head_dim", "rotary embeddings need an even head_dim");
  if (c.heads % c.kv_heads != 0) {
    q.fail("num_key_value_heads", std::to_string(c.heads) +
                                      " attention heads are not a multiple of " +
                                      std::to_string(c.kv_heads) + " key/value heads");
  }
  q.positive("rms_norm_eps", c.rms_eps);
  q.positive("rope_theta", c.rope_theta);
  q.flag("tie_word_embeddings", c.tie_embeddings);
  if (qwen) {
    c.qkv_bias = true;
  } else {
    q.flag("attention_bias", c.qkv_bias);
    c.o_bias = c.qkv_bias;
    q.flag("mlp_bias", c.mlp_bias);
  }
  std::string act = "silu";
  q.one_of("hidden_act", act, {"silu"});
  if (auto it = cfg.find("rope_scaling"); it != cfg.end() && !it->is_null()) {
    const json& rs = *it;
    const auto type =
        rs.is_object() ? rs.value("rope_type", rs.value("type", std::string())) : std::string();
    if (type != "default") {
      throw InputError({where, 0, "rope_scaling"}, "unsupported rope_scaling " + rs.dump(),
                       "only unscaled rotary embeddings are implemented");
    }
  }
  bool sliding = false;
  if (qwen) q.flag("use_sliding_window", sliding);
  if (sliding) q.fail("use_sliding_window", "sliding-window attention is not supported");
  return c;
}

struct LlamaModel::Impl {
  LlamaConfig cfg;
  std::string weights_id;
  std::vector<float> embed_tokens;  // [vocab, hidden]
  std::vector<Layer> layers;
  std::vector<float> norm;
  Linear head;
  std::vector<float> inv_freq;  // [head_dim / 2]

  int q_width() const { return cfg.heads * cfg.head_dim; }
  int kv_width() const { return cfg.kv_heads * cfg.head_dim; }

  void load(const SafeTensors& st, const std::string& prefix, const std::string& head_name) {
    const std::int64_t h = cfg.hidden, m = cfg.intermediate, d = cfg.head_dim;
    const std::int64_t qw = q_width(), kw = kv_width();
    auto get = [&](const std::string& name, const std::vector<std::int64_t>& shape) {
      auto v = st.to_float(name, shape);
      st.release(name);
      return v;
    };
    auto concat = [](std::vector<float> a, const std::vector<float>& b) {
      a.insert(a.end(), b.begin(), b.end());
      return a;
    };
    embed_tokens = get(prefix + "embed_tokens.weight", {cfg.vocab_size, h});
    for (int i = 0; i < cfg.layers; ++i) {
      const std::string p = prefix + "layers." + std::to_string(i) + ".";
      Layer l;
      l.ln1 = get(p + "input_layernorm.weight", {h});
      l.ln2 = get(p + "post_attention_layernorm.weight", {h});
      std::vector<float> w = concat(concat(get(p + "self_attn.q_proj.weight", {qw, h}),
                                           get(p + "self_attn.k_proj.weight", {kw, h})),
                                    get(p + "self_attn.v_proj.weight", {kw, h}));
      std::vector<float> b;
      if (cfg.qkv_bias) {
        b = concat(
            concat(get(p + "self_attn.q_proj.bias", {qw}), get(p + "self_attn.k_proj.bias", {kw})),
            get(p + "self_attn.v_proj.bias", {kw}));
      }
      const int qkv_n = static_cast<int>(qw + 2 * kw);
      l.qkv = Linear(w, b, qkv_n, cfg.hidden);
      l.o = Linear(get(p + "self_attn.o_proj.weight", {h, qw}),
                   cfg.o_bias ? get(p + "self_attn.o_proj.bias", {h}) : std::vector<float>{},
                   cfg.hidden, static_cast<int>(qw), detail::PostOp::None, /*accumulate=*/true);
      w = concat(get(p + "mlp.gate_proj.weight", {m, h}), get(p + "mlp.up_proj.weight", {m, h}));
      b.clear();
      if (cfg.mlp_bias)
        b = concat(get(p + "mlp.gate_proj.bias", {m}), get(p + "mlp.up_proj.bias", {m}));
      l.gate_up = Linear(w, b, 2 * cfg.intermediate, cfg.hidden);
      l.down = Linear(get(p + "mlp.down_proj.weight", {h, m}),
                      cfg.mlp_bias ? get(p + "mlp.down_proj.bias", {h}) : std::vector<float>{},
                      cfg.hidden, cfg.intermediate, detail::PostOp::None, /*accumulate=*/true);
      layers.push_back(std::move(l));
    }
    norm = get(prefix + "norm.weight", {h});
    if (cfg.tie_embeddings) {
      head = Linear(embed_tokens, {}, cfg.vocab_size, cfg.hidden);
    } else {
      head = Linear(get(head_name, {cfg.vocab_size, h}), {}, cfg.vocab_size, cfg.hidden);
    }
    // transformers' default rope: inv_freq = 1 / theta^(arange(0, d, 2) / d) in float32.
    inv_freq.resize(static_cast<std::size_t>(d / 2));
    for (std::int64_t i = 0; i < d / 2; ++i) {
      const float e = static_cast<float>(2 * i) / static_cast<float>(d);
      const float p = static_cast<float>(std::pow(
          static_cast<double>(static_cast<float>(cfg.rope_theta)), static_cast<double>(e)));
      inv_freq[static_cast<std::size_t>(i)] = 1.0f / p;
    }
  }

  // The rotary angles of position `pos`: cos/sin of pos * inv_freq (in float, as
  // transformers), each evaluated in double and rounded to float (ops.hpp's rotary_rows applies
  // them).
  void angles(int pos, float* cosv, float* sinv) const {
    const int half = cfg.head_dim / 2;
    for (int i = 0; i < half; ++i) {
      const float f = static_cast<float>(pos) * inv_freq[static_cast<std::size_t>(i)];
      cosv[i] = static_cast<float>(std::cos(static_cast<double>(f)));
      sinv[i] = static_cast<float>(std::sin(static_cast<double>(f)));
    }
  }

  std::vector<float> forward(const std::vector<LlamaSequence>& seqs, LogitRows which) const {
    const int hid = cfg.hidden, d = cfg.head_dim, qw = q_width(), kw = kv_width();
    const int qkv_n = qw + 2 * kw, inter = cfg.intermediate;
    const std::size_t ns = seqs.size();
    std::vector<int> start(ns), past(ns);
    int rows = 0;
    for (std::size_t s = 0; s < ns; ++s) {
      start[s] = rows;
      past[s] = seqs[s].past ? seqs[s].past->length : 0;
      if (seqs[s].past && static_cast<int>(seqs[s].past->k.size()) != cfg.layers) {
        throw UsageError("a KV cache of " + std::to_string(seqs[s].past->k.size()) +
                         " layers given to a model of " + std::to_string(cfg.layers));
      }
      if (past[s] + seqs[s].length > cfg.max_positions) {
        throw UsageError("sequence " + std::to_string(s) + " reaches position " +
                         std::to_string(past[s] + seqs[s].length) + ", beyond the model's " +
                         std::to_string(cfg.max_positions) + " (max_position_embeddings)");
      }
      rows += seqs[s].length;
    }
    const std::size_t R = static_cast<std::size_t>(rows);
    std::vector<float> x(R * hid), normed(R * hid), qkv(R * qkv_n), ctx(R * qw), mlp(R * 2 * inter),
        act(R * inter);
    for (std::size_t s = 0; s < ns; ++s) {
      if (seqs[s].length > 0) {
        std::memcpy(&x[static_cast<std::size_t>(start[s]) * hid], seqs[s].embeds,
                    sizeof(float) * static_cast<std::size_t>(seqs[s].length) * hid);
      }
    }
    // The rotary angles of every row (by its position).
    const int half = d / 2;
    std::vector<float> cosv(R * half), sinv(R * half);
    for (std::size_t s = 0; s < ns; ++s) {
      for (int t = 0; t < seqs[s].length; ++t) {
        const std::size_t r = static_cast<std::size_t>(start[s] + t);
        angles(past[s] + t, &cosv[r * half], &sinv[r * half]);
      }
    }
    // Per sequence and layer: the keys and values of all its positions [past + length, kw].
    std::vector<std::vector<std::vector<float>>> keys(ns), values(ns);
    for (std::size_t s = 0; s < ns; ++s) {
      keys[s].resize(layers.size());
      values[s].resize(layers.size());
    }
    const int heads = cfg.heads, group = cfg.heads / cfg.kv_heads;
    const float scale = 1.0f / std::sqrt(static_cast<float>(d));
    for (std::size_t li = 0; li < layers.size(); ++li) {
      const Layer& L = layers[li];
      rms_norm(x.data(), R, hid, L.ln1, cfg.rms_eps, normed.data());
      L.qkv.forward(normed.data(), rows, qkv.data());
      detail::rotary_rows(qkv.data(), R, static_cast<std::size_t>(qkv_n), heads + cfg.kv_heads, d,
                          cosv.data(), sinv.data());
      for (std::size_t s = 0; s < ns; ++s) {
        const int n = seqs[s].length, T = past[s] + n;
        auto& K = keys[s][li];
        auto& V = values[s][li];
        K.resize(static_cast<std::size_t>(T) * kw);
        V.resize(K.size());
        if (past[s] > 0) {
          std::memcpy(K.data(), seqs[s].past->k[li].data(),
                      sizeof(float) * static_cast<std::size_t>(past[s]) * kw);
          std::memcpy(V.data(), seqs[s].past->v[li].data(),
                      sizeof(float) * static_cast<std::size_t>(past[s]) * kw);
        }
        for (int t = 0; t < n; ++t) {
          const float* row = &qkv[static_cast<std::size_t>(start[s] + t) * qkv_n];
          std::memcpy(&K[static_cast<std::size_t>(past[s] + t) * kw], row + qw, sizeof(float) * kw);
          std::memcpy(&V[static_cast<std::size_t>(past[s] + t) * kw], row + qw + kw,
                      sizeof(float) * kw);
        }
      }
      // Causal attention per (sequence, head): query t (position past + t) sees keys
      // 0..past + t; the probabilities beyond are exact zeros in the P V chain.
      detail::attend_heads(static_cast<int>(ns) * heads, d, scale, [&](int t) {
        const std::size_t s = static_cast<std::size_t>(t / heads);
        const int h = t % heads, kvh = h / group;
        detail::HeadTask task;
        task.q = qkv.data() + static_cast<std::size_t>(start[s]) * qkv_n +
                 static_cast<std::size_t>(h) * d;
        task.ldq = static_cast<std::size_t>(qkv_n);
        task.queries = seqs[s].length;
        task.k = keys[s][li].data() + static_cast<std::size_t>(kvh) * d;
        task.v = values[s][li].data() + static_cast<std::size_t>(kvh) * d;
        task.ldkv = static_cast<std::size_t>(kw);
        task.keys = past[s] + seqs[s].length;
        task.out =
            ctx.data() + static_cast<std::size_t>(start[s]) * qw + static_cast<std::size_t>(h) * d;
        task.ldo = static_cast<std::size_t>(qw);
        task.causal_past = past[s];
        return task;
      });
      // A sequence that keeps no cache needs this layer's keys and values no longer (a batch of
      // captions over one long image prefix holds one layer's copy each, not all layers').
      for (std::size_t s = 0; s < ns; ++s) {
        if (!seqs[s].store) {
          keys[s][li] = {};
          values[s][li] = {};
        }
      }
      L.o.forward(ctx.data(), rows, x.data());
      rms_norm(x.data(), R, hid, L.ln2, cfg.rms_eps, normed.data());
      L.gate_up.forward(normed.data(), rows, mlp.data());
      // silu(gate) * up: gate / (1 + exp(-gate)) with the kernels' exp (the same bits on every
      // CPU), times up.
      detail::silu_mul_rows(mlp.data(), R, inter, act.data());
      L.down.forward(act.data(), rows, x.data());
    }
    for (std::size_t s = 0; s < ns; ++s) {
      if (!seqs[s].store) continue;
      KvCache c;
      c.length = past[s] + seqs[s].length;
      c.k = std::move(keys[s]);
      c.v = std::move(values[s]);
      *seqs[s].store = std::move(c);
    }
    std::vector<std::size_t> pick;
    if (which == LogitRows::All) {
      for (std::size_t r = 0; r < R; ++r)
        pick.push_back(r);
    } else if (which == LogitRows::Last) {
      for (std::size_t s = 0; s < ns; ++s) {
        if (seqs[s].length == 0) throw UsageError("a sequence without rows has no last logits");
        pick.push_back(static_cast<std::size_t>(start[s] + seqs[s].length - 1));
      }
    }
    std::vector<float> gathered(pick.size() * hid), out(pick.size() * cfg.vocab_size);
    for (std::size_t i = 0; i < pick.size(); ++i)
      std::memcpy(&gathered[i * hid], &x[pick[i] * hid], sizeof(float) * hid);
    rms_norm(gathered.data(), pick.size(), hid, norm, cfg.rms_eps, gathered.data());
    head.forward(gathered.data(), static_cast<int>(pick.size()), out.data());
    return out;
  }
};

LlamaModel::LlamaModel() : impl_(std::make_unique<Impl>()) {}
LlamaModel::LlamaModel(LlamaModel&&) noexcept = default;
LlamaModel& LlamaModel::operator=(LlamaModel&&) noexcept = default;
LlamaModel::~LlamaModel() = default;

const LlamaConfig& LlamaModel::config() const {
  return impl_->cfg;
}
const std::string& LlamaModel::weights_id() const {
  return impl_->weights_id;
}

LlamaModel LlamaModel::load(const SafeTensors& weights, const LlamaConfig& config,
                            const std::string& prefix, const std::string& head,
                            const std::string& weights_id) {
  LlamaModel m;
  m.impl_->cfg = config;
  m.impl_->weights_id = weights_id;
  m.impl_->load(weights, prefix, head);
  return m;
}

LlamaModel LlamaModel::load(const fs::path& dir) {
  const fs::path file = dir / "config.json";
  const LlamaConfig c = llama_config_from_json(detail::read_config_json(file, true), file.string());
  fs::path weights = dir / "model.safetensors";
  if (!fs::is_regular_file(weights)) weights = dir / "model.safetensors.index.json";
  if (!fs::is_regular_file(weights)) {
    throw IoError((dir / "model.safetensors").string() + ": not found",
                  "a checkpoint folder holds model.safetensors or model.safetensors.index.json");
  }
  const SafeTensors st = SafeTensors::open(weights);
  return load(st, c, "model.", "lm_head.weight", st.content_hash());
}

std::vector<float> LlamaModel::embed(const std::vector<int>& ids) const {
  const int hid = impl_->cfg.hidden;
  std::vector<float> out(ids.size() * static_cast<std::size_t>(hid));
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= impl_->cfg.vocab_size) {
      throw UsageError("token id " + std::to_string(ids[i]) + " outside the vocabulary of " +
                       std::to_string(impl_->cfg.vocab_size));
    }
    std::memcpy(&out[i * hid], &impl_->embed_tokens[static_cast<std::size_t>(ids[i]) * hid],
                sizeof(float) * hid);
  }
  return out;
}

std::vector<float> LlamaModel::forward(const std::vector<LlamaSequence>& sequences,
                                       LogitRows rows) const {
  return impl_->forward(sequences, rows);
}

// ---- the language-model interface ----
namespace detail {
namespace {

// The logits one forward of score() may hold (64 MB): a batch has at most this many / vocab rows
// (at least one sequence).
constexpr std::size_t kScoreLogitFloats = std::size_t{16} << 20;

class LlamaLanguageModel final : public LanguageModel {
 public:
  LlamaLanguageModel(LlamaModel model, HfTokenizer tokenizer, std::optional<int> bos)
      : model_(std::move(model)), tokenizer_(std::move(tokenizer)), bos_(bos) {}
  std::string display_name() const override {
    return model_.config().model_type == "qwen2" ? "Qwen2" : "Llama";
  }
  const std::string& weights_id() const override { return model_.weights_id(); }
  int context() const override { return model_.config().max_positions; }
  int vocab_size() const override { return model_.config().vocab_size; }
  std::vector<int> encode(const std::string& text) const override {
    return tokenizer_.encode(text);
  }
  std::optional<int> start_token() const override { return bos_; }
  std::string start_token_text() const override {
    return bos_ ? tokenizer_.token(*bos_) : std::string();
  }
  std::string reference_class() const override {
    return model_.config().model_type == "qwen2" ? "Qwen2ForCausalLM" : "LlamaForCausalLM";
  }
  // Sequences back to back in one forward (each attends to its own rows only), all logits, then
  // each predicted token's log-softmax.
  std::vector<SequenceScore> score(const std::vector<std::vector<int>>& sequences,
                                   const LmOptions& options) const override {
    const int v = vocab_size();
    const std::size_t budget =
        std::min(static_cast<std::size_t>(std::max(1, options.batch_tokens)),
                 std::max<std::size_t>(1, kScoreLogitFloats / static_cast<std::size_t>(v)));
    std::vector<SequenceScore> out(sequences.size());
    score_in_batches(
        sequences, context(), v, budget, options, [&](std::size_t first, std::size_t last) {
          std::vector<std::vector<float>> embeds;
          std::vector<LlamaSequence> batch;
          embeds.reserve(last - first);
          std::vector<std::size_t> pick, target;
          std::size_t row = 0;
          for (std::size_t s = first; s < last; ++s) {
            const auto& ids = sequences[s];
            embeds.push_back(model_.embed(ids));
            batch.push_back({embeds.back().data(), static_cast<int>(ids.size()), nullptr, nullptr});
            for (std::size_t t = 0; t + 1 < ids.size(); ++t) {
              pick.push_back(row + t);
              target.push_back(static_cast<std::size_t>(ids[t + 1]));
            }
            row += ids.size();
          }
          const std::vector<float> logits = model_.forward(batch, LogitRows::All);
          std::vector<double> log_probs(pick.size());
          parallel_for(pick.size(), [&](std::size_t k) {
            log_probs[k] = log_softmax_at(&logits[pick[k] * static_cast<std::size_t>(v)], v,
                                          static_cast<int>(target[k]));
          });
          std::size_t k = 0;
          for (std::size_t s = first; s < last; ++s) {
            const std::size_t n = sequences[s].size() - 1;
            out[s] = sequence_score({log_probs.begin() + static_cast<std::ptrdiff_t>(k),
                                     log_probs.begin() + static_cast<std::ptrdiff_t>(k + n)});
            k += n;
          }
        });
    return out;
  }

 private:
  LlamaModel model_;
  HfTokenizer tokenizer_;
  std::optional<int> bos_;
};

}  // namespace

std::unique_ptr<LanguageModel> load_llama_language_model(const fs::path& model,
                                                         const fs::path& tokenizer) {
  LlamaModel m = LlamaModel::load(model);
  const fs::path where = tokenizer.empty() ? model : tokenizer;
  const fs::path file = fs::is_directory(where) ? where / "tokenizer.json" : where;
  HfTokenizer tok = HfTokenizer::from_file(file);
  if (tok.vocab_size() > static_cast<std::size_t>(m.config().vocab_size)) {
    throw UsageError(file.string() + ": the tokenizer's ids go up to " +
                         std::to_string(tok.vocab_size() - 1) + " but the model's vocabulary has " +
                         std::to_string(m.config().vocab_size) + " entries",
                     "use the tokenizer.json that came with the model");
  }
  // The start token: config.json's bos_token_id, else the one token the tokenizer's
  // post_processor puts before a text (Llama's <s>), else none.
  std::optional<int> bos;
  const fs::path config = model / "config.json";
  const json cfg = read_config_json(config, true);
  const ConfigReader q(cfg, config);
  if (q.has("bos_token_id")) {
    int id = 0;
    q.integer("bos_token_id", id, 0, m.config().vocab_size - 1);
    bos = id;
  } else if (tok.special_prefix().size() == 1) {
    bos = tok.special_prefix().front();
  }
  return std::make_unique<LlamaLanguageModel>(std::move(m), std::move(tok), bos);
}

}  // namespace detail
}  // namespace winokit
