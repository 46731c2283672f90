// The shared transformer layer, pre- or post-LayerNorm (transformer.hpp).
#include "model/layers/transformer.hpp"

#include <chrono>
#include <cstdint>

namespace winokit::detail {

const EncoderLayerNames kHfVitLayerNames = {
    "layernorm_before",
    "layernorm_after",
    {"attention.attention.query", "attention.attention.key", "attention.attention.value"},
    "attention.output.dense",
    "intermediate.dense",
    "output.dense"};

const EncoderLayerNames kHfClipLayerNames = {
    "layer_norm1",
    "layer_norm2",
    {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj"},
    "self_attn.out_proj",
    "mlp.fc1",
    "mlp.fc2"};

const EncoderLayerNames kHfBertLayerNames = {
    "attention.output.LayerNorm",
    "output.LayerNorm",
    {"attention.self.query", "attention.self.key", "attention.self.value"},
    "attention.output.dense",
    "intermediate.dense",
    "output.dense"};

EncoderLayer load_encoder_layer(TensorSource& src, const std::string& prefix,
                                const EncoderLayerNames& names, const EncoderLayerShape& shape) {
  const std::int64_t H = shape.hidden, M = shape.mlp;
  EncoderLayer L;
  L.ln1_g = src.get(prefix + names.ln1 + ".weight", {H});
  L.ln1_b = src.get(prefix + names.ln1 + ".bias", {H});
  L.ln2_g = src.get(prefix + names.ln2 + ".weight", {H});
  L.ln2_b = src.get(prefix + names.ln2 + ".bias", {H});
  std::vector<float> w, b;
  if (names.qkv.size() == 1) {
    w = src.get(prefix + names.qkv[0] + ".weight", {3 * H, H});
    b = shape.qkv_bias ? src.get(prefix + names.qkv[0] + ".bias", {3 * H})
                       : std::vector<float>(static_cast<std::size_t>(3 * H), 0.0f);
  } else {
    for (const std::string& part : names.qkv) {
      auto pw = src.get(prefix + part + ".weight", {H, H});
      w.insert(w.end(), pw.begin(), pw.end());
      if (shape.qkv_bias) {
        auto pb = src.get(prefix + part + ".bias", {H});
        b.insert(b.end(), pb.begin(), pb.end());
      } else {
        b.insert(b.end(), static_cast<std::size_t>(H), 0.0f);
      }
    }
  }
  L.qkv = Linear(w, b, 3 * shape.hidden, shape.hidden);
  L.out = Linear(src.get(prefix + names.out + ".weight", {H, H}),
                 src.get(prefix + names.out + ".bias", {H}), shape.hidden, shape.hidden,
                 PostOp::None, /*accumulate=*/true);
  L.fc1 = Linear(src.get(prefix + names.fc1 + ".weight", {M, H}),
                 src.get(prefix + names.fc1 + ".bias", {M}), shape.mlp, shape.hidden, shape.act);
  L.fc2 = Linear(src.get(prefix + names.fc2 + ".weight", {H, M}),
                 src.get(prefix + names.fc2 + ".bias", {H}), shape.hidden, shape.mlp, PostOp::None,
                 /*accumulate=*/true);
  return L;
}

void run_encoder_layers(const std::vector<EncoderLayer>& layers, std::vector<float>& x,
                        const EncoderRun& run) {
  if (layers.empty()) return;
  const int H = layers.front().out.n();
  const int M = layers.front().fc1.n();
  const std::size_t padded = x.size() / static_cast<std::size_t>(H);
  const int R = static_cast<int>(padded);
  // Padding rows of `normed` and `ctx` stay zero: LayerNorm and attention write real rows only.
  std::vector<float> normed(padded * H, 0.0f), qkv(padded * 3 * H), ctx(padded * H, 0.0f),
      mid(padded * static_cast<std::size_t>(M));
  const auto dense = [&](const Linear& layer, const float* in, float* out) {
    if (run.gemm_seconds == nullptr) return layer.forward(in, R, out);
    const auto t0 = std::chrono::steady_clock::now();
    layer.forward(in, R, out);
    *run.gemm_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  const auto attend = [&] {
    if (run.attend) {
      run.attend(qkv.data(), ctx.data());
    } else {
      attention(qkv.data(), *run.offsets, *run.lengths, H, run.heads, run.causal, ctx.data());
    }
  };
  if (run.post_norm) {
    // `normed` holds the residual sum before each LayerNorm.
    for (std::size_t l = 0; l < layers.size(); ++l) {
      const EncoderLayer& L = layers[l];
      dense(L.qkv, x.data(), qkv.data());
      attend();
      normed = x;
      dense(L.out, ctx.data(), normed.data());  // x + attention output
      layer_norm(normed.data(), run.rows, H, L.ln1_g, L.ln1_b, run.eps, x.data());
      if (run.after_attention) run.after_attention(static_cast<int>(l), x.data());
      dense(L.fc1, x.data(), mid.data());
      normed = x;
      dense(L.fc2, mid.data(), normed.data());  // x + MLP output
      layer_norm(normed.data(), run.rows, H, L.ln2_g, L.ln2_b, run.eps, x.data());
      if (run.after_layer) run.after_layer(static_cast<int>(l) + 1);
    }
    return;
  }
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const EncoderLayer& L = layers[l];
    layer_norm(x.data(), run.rows, H, L.ln1_g, L.ln1_b, run.eps, normed.data());
    dense(L.qkv, normed.data(), qkv.data());
    attend();
    dense(L.out, ctx.data(), x.data());  // x += attention output
    layer_norm(x.data(), run.rows, H, L.ln2_g, L.ln2_b, run.eps, normed.data());
    dense(L.fc1, normed.data(), mid.data());
    dense(L.fc2, mid.data(), x.data());  // x += MLP output
    if (run.after_layer) run.after_layer(static_cast<int>(l) + 1);
  }
}

FixedSequences::FixedSequences(int seqs, int len) {
  for (int s = 0; s < seqs; ++s) {
    offsets.push_back(static_cast<std::size_t>(s) * static_cast<std::size_t>(len));
    lengths.push_back(static_cast<std::size_t>(len));
  }
}

}  // namespace winokit::detail
