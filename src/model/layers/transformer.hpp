// The transformer layer every model here is built from: pre-LayerNorm (CLIP's ViT and text
// towers, SigLIP, ViLT, FLAVA's three encoders, BLIP's vision tower, GPT-2)
//
//   x += out(attention(qkv(LN1(x))));   x += fc2(act(fc1(LN2(x))))
//
// or post-LayerNorm, BERT's order (BLIP's text encoder; EncoderRun::post_norm)
//
//   x = LN1(x + out(attention(qkv(x))));   [cross-attention];   x = LN2(x + fc2(act(fc1(x))))
//
// A family names its tensors (EncoderLayerNames) and its sizes (EncoderLayerShape); loading and
// running the layers is written once, here. The order of operations is fixed, so a row's bits
// depend only on its own sequence (gemm.hpp). Internal to src/model.
//
//   std::vector<EncoderLayer> layers;
//   for (int i = 0; i < cfg.layers; ++i)
//     layers.push_back(load_encoder_layer(src, "vilt.encoder.layer." + std::to_string(i) + ".",
//                                         kBertViTNames, {hidden, mlp, true, PostOp::Gelu}));
//   run_encoder_layers(layers, x, {rows, offsets, lengths, heads, eps});
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "model/kernels/gemm.hpp"
#include "model/runtime/checkpoint.hpp"

namespace winokit::detail {

struct EncoderLayer {
  std::vector<float> ln1_g, ln1_b, ln2_g, ln2_b;
  Linear qkv;  // [3 * hidden, hidden]: Q, K, V side by side
  Linear out;  // accumulates onto the residual
  Linear fc1;  // with the activation
  Linear fc2;  // accumulates onto the residual
};

// One layer's tensor names, relative to the layer's prefix. LayerNorms and linears get
// ".weight" / ".bias" appended. `qkv`: three names (query, key, value; concatenated in that
// order) or one fused [3 * hidden, hidden] name.
struct EncoderLayerNames {
  std::string ln1, ln2;
  std::vector<std::string> qkv;
  std::string out, fc1, fc2;
};

// Hugging Face's ViT-style BERT layer (ViLT, FLAVA): layernorm_before, attention.attention.*.
extern const EncoderLayerNames kHfVitLayerNames;
// Hugging Face's CLIP encoder layer (CLIP, SigLIP): layer_norm1, self_attn.{q,k,v}_proj, mlp.fc1.
extern const EncoderLayerNames kHfClipLayerNames;
// Hugging Face's BERT layer, post-LayerNorm (BLIP's text encoder): attention.self.{query,key,
// value}, attention.output.{dense,LayerNorm}, intermediate.dense, output.{dense,LayerNorm}.
extern const EncoderLayerNames kHfBertLayerNames;

struct EncoderLayerShape {
  int hidden = 0, mlp = 0;
  bool qkv_bias = true;  // false: the Q, K, V biases are absent and zero
  PostOp act = PostOp::Gelu;
};

// Reads one layer at `prefix` (e.g. "vilt.encoder.layer.3."); a missing or misshapen tensor is
// the source's InputError naming it.
EncoderLayer load_encoder_layer(TensorSource& src, const std::string& prefix,
                                const EncoderLayerNames& names, const EncoderLayerShape& shape);

// How the layers run over x: [padded rows, hidden] holding `rows` real rows (padding rows are
// zeros and stay out of LayerNorm and attention). Sequence s holds rows
// [offsets[s], offsets[s] + lengths[s]).
struct EncoderRun {
  EncoderRun(std::size_t real_rows, const std::vector<std::size_t>& sequence_offsets,
             const std::vector<std::size_t>& sequence_lengths, int attention_heads, double norm_eps,
             bool causal_mask = false)
      : rows(real_rows),
        offsets(&sequence_offsets),
        lengths(&sequence_lengths),
        heads(attention_heads),
        eps(norm_eps),
        causal(causal_mask) {}
  std::size_t rows;
  const std::vector<std::size_t>* offsets;
  const std::vector<std::size_t>* lengths;
  int heads;
  double eps;
  bool causal;
  // Replaces the attention step (qkv [padded, 3 * hidden] -> ctx [padded, hidden]), e.g. for a
  // padding mask; empty: attention() over the sequences above.
  std::function<void(const float* qkv, float* ctx)> attend;
  // Called after layer l (1-based) with x holding its output, e.g. to keep per-layer states.
  std::function<void(int layer)> after_layer;
  // BERT's post-LayerNorm order (above) instead of the pre-LayerNorm one.
  bool post_norm = false;
  // Post-norm only: called in layer l (0-based) between the attention block and the MLP, with
  // x [padded rows, hidden] to update in place (BLIP's cross-attention to the image).
  std::function<void(int layer, float* x)> after_attention;
  // When set, the seconds spent in the layers' GEMMs are added to it (benchmarks).
  double* gemm_seconds = nullptr;
};

// Runs `layers` on x in place.
void run_encoder_layers(const std::vector<EncoderLayer>& layers, std::vector<float>& x,
                        const EncoderRun& run);

// `seqs` sequences of `len` rows, one after another: the offsets and lengths for EncoderRun.
struct FixedSequences {
  std::vector<std::size_t> offsets, lengths;
  FixedSequences(int seqs, int len);
};

}  // namespace winokit::detail
