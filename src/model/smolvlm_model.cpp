#include "winokit/model/smolvlm_model.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>

#include "gemm.hpp"
#include "transformer.hpp"
#include "winokit/core/error.hpp"
#include "winokit/io/files.hpp"
#include "winokit/io/safetensors.hpp"
#include "winokit/model/compute.hpp"
#include "winokit/model/preprocess.hpp"

namespace winokit {

namespace fs = std::filesystem;
using detail::Linear;
using nlohmann::json;

namespace {

constexpr int kMaxEdge = 1 << 14;

json read_json(const fs::path& file, bool required) {
  if (!required && !fs::is_regular_file(file)) return json::object();
  try {
    json j = json::parse(read_file(file));
    if (!j.is_object()) throw InputError({file.string(), 0, ""}, "expected a JSON object");
    return j;
  } catch (const json::exception& e) {
    throw InputError({file.string(), 0, ""}, std::string("malformed JSON: ") + e.what());
  }
}

int read_int(const json& j, const char* name, int fallback, const std::string& where,
             int max_value = kMaxEdge * 64) {
  auto it = j.find(name);
  if (it == j.end() || it->is_null()) return fallback;
  if (!it->is_number_integer() || it->get<long long>() < 1 || it->get<long long>() > max_value) {
    throw InputError({where, 0, name}, "expected a positive integer up to " +
                                           std::to_string(max_value) + ", got " + it->dump());
  }
  return it->get<int>();
}

DecodedImage crop(const DecodedImage& im, int x0, int y0, int x1, int y1) {
  DecodedImage out;
  out.width = x1 - x0;
  out.height = y1 - y0;
  out.mode = PixelMode::RGB;
  out.pixels.resize(static_cast<std::size_t>(out.width) * out.height * 3);
  for (int y = y0; y < y1; ++y) {
    std::memcpy(&out.pixels[static_cast<std::size_t>(y - y0) * out.width * 3],
                &im.pixels[(static_cast<std::size_t>(y) * im.width + x0) * 3],
                static_cast<std::size_t>(out.width) * 3);
  }
  return out;
}

// Idefics3 / SmolVLM's _resize_output_size_rescale_to_max_len then
// _resize_output_size_scale_below_upper_bound: (height, width).
std::pair<int, int> longest_edge_size(int height, int width, int max_len, int upper) {
  const double aspect = static_cast<double>(width) / height;
  if (width >= height) {
    width = max_len;
    height = static_cast<int>(width / aspect);
    if (height % 2 != 0) ++height;
  } else {
    height = max_len;
    width = static_cast<int>(height * aspect);
    if (width % 2 != 0) ++width;
  }
  height = std::max(height, 1);
  width = std::max(width, 1);
  const double aspect2 = static_cast<double>(width) / height;
  if (width >= height && width > upper) {
    width = upper;
    height = static_cast<int>(width / aspect2);
  } else if (height > width && height > upper) {
    height = upper;
    width = static_cast<int>(height * aspect2);
  }
  return {std::max(height, 1), std::max(width, 1)};
}

void append_pixels(const DecodedImage& tile, const SmolVlmPreprocessConfig& p,
                   std::vector<float>& out) {
  const std::size_t n = static_cast<std::size_t>(tile.width) * tile.height;
  const std::size_t base = out.size();
  out.resize(base + 3 * n);
  for (int ch = 0; ch < 3; ++ch) {
    float* dst = &out[base + static_cast<std::size_t>(ch) * n];
    for (std::size_t i = 0; i < n; ++i) {
      // transformers' rescale (float64 product, stored as float32), then normalize in float32.
      float v = static_cast<float>(tile.pixels[i * 3 + static_cast<std::size_t>(ch)]);
      if (p.do_rescale) v = static_cast<float>(static_cast<double>(v) * p.rescale_factor);
      if (p.do_normalize) {
        v = (v - p.mean[static_cast<std::size_t>(ch)]) / p.std[static_cast<std::size_t>(ch)];
      }
      dst[i] = v;
    }
  }
}

// x [seq, d] of one tile -> [seq / s^2, d * s^2]: Idefics3Connector.pixel_shuffle. Output token
// (i, j) holds, for dy, dx in [0, s), the input token (i * s + dy, j * s + dx)'s d features at
// offset (dy * s + dx) * d.
void pixel_shuffle(const float* x, int side, int d, int s, float* out) {
  const int os = side / s;
  for (int i = 0; i < os; ++i) {
    for (int j = 0; j < os; ++j) {
      float* dst = out + (static_cast<std::size_t>(i) * os + j) * d * s * s;
      for (int dy = 0; dy < s; ++dy) {
        for (int dx = 0; dx < s; ++dx) {
          const float* src = x + (static_cast<std::size_t>(i * s + dy) * side + j * s + dx) * d;
          std::memcpy(dst + (static_cast<std::size_t>(dy) * s + dx) * d, src,
                      sizeof(float) * static_cast<std::size_t>(d));
        }
      }
    }
  }
}

// softmax(row)[target] over n logits: max subtracted, the kernels' exp, the sum in float64 in
// 8 interleaved partial sums added in a fixed order (as gpt2_model.cpp's log_prob), then
// exp(row[target] - max) / sum.
double softmax_at(const float* row, int n, int target) {
  float mx = -INFINITY;
  for (int j = 0; j < n; ++j)
    mx = std::max(mx, row[j]);
  std::vector<float> e(static_cast<std::size_t>(n));
  for (int j = 0; j < n; ++j)
    e[static_cast<std::size_t>(j)] = row[j] - mx;
  detail::exp_inplace(e.data(), e.size());
  constexpr int kLanes = 8;
  double part[kLanes] = {};
  for (int j = 0; j < n; ++j)
    part[j % kLanes] += static_cast<double>(e[static_cast<std::size_t>(j)]);
  double sum = 0;
  for (double p : part)
    sum += p;
  // The numerator is the kernels' exp too (no libm call: the same bits on every CPU).
  return static_cast<double>(e[static_cast<std::size_t>(target)]) / sum;
}

}  // namespace

DecodedImage pil_resize_lanczos(const DecodedImage& rgb, int width, int height) {
  if (rgb.mode != PixelMode::RGB) throw Error("pil_resize_lanczos: RGB images only");
  return pil_resize(rgb, width, height, PilFilter::Lanczos);
}

SmolVlmTiles smolvlm_preprocess(const DecodedImage& image, const SmolVlmPreprocessConfig& p) {
  DecodedImage im = to_rgb(image);
  const int M = p.max_image_size;
  if (p.do_resize) {
    const auto [h, w] = longest_edge_size(im.height, im.width, p.longest_edge, p.upper_bound);
    im = pil_resize_lanczos(im, w, h);
  }
  SmolVlmTiles t;
  t.size = M;
  if (p.do_image_splitting) {
    // resize_for_vision_encoder: both edges up to multiples of M.
    int h = im.height, w = im.width;
    const double aspect = static_cast<double>(w) / h;
    if (w >= h) {
      w = (w + M - 1) / M * M;
      h = static_cast<int>(w / aspect);
      h = (h + M - 1) / M * M;
    } else {
      h = (h + M - 1) / M * M;
      w = static_cast<int>(h * aspect);
      w = (w + M - 1) / M * M;
    }
    im = pil_resize_lanczos(im, w, h);
    if (h > M || w > M) {
      t.rows = (h + M - 1) / M;
      t.cols = (w + M - 1) / M;
      const int oh = (h + t.rows - 1) / t.rows, ow = (w + t.cols - 1) / t.cols;
      for (int r = 0; r < t.rows; ++r) {
        for (int c = 0; c < t.cols; ++c) {
          const DecodedImage tile =
              crop(im, c * ow, r * oh, std::min(c * ow + ow, w), std::min(r * oh + oh, h));
          if (tile.width != M || tile.height != M) throw Error("smolvlm: a tile is not square");
          append_pixels(tile, p, t.pixels);
          ++t.count;
        }
      }
      im = pil_resize_lanczos(im, M, M);
    }
  } else {
    im = pil_resize_lanczos(im, M, M);  // SmolVLM's processor squares the unsplit image
  }
  append_pixels(im, p, t.pixels);
  ++t.count;
  return t;
}

std::string smolvlm_image_prompt(int rows, int cols, int image_seq_len) {
  std::string images;
  for (int i = 0; i < image_seq_len; ++i)
    images += "<image>";
  const std::string global =
      "<fake_token_around_image><global-img>" + images + "<fake_token_around_image>";
  if (rows == 0 && cols == 0) return global;
  std::string s;
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      s += "<fake_token_around_image><row_" + std::to_string(r + 1) + "_col_" +
           std::to_string(c + 1) + ">" + images;
    }
    s += "\n";
  }
  return s + "\n" + global;
}

nlohmann::json SmolVlmPreprocessConfig::to_json() const {
  return {{"do_resize", do_resize},
          {"size", {{"longest_edge", longest_edge}}},
          {"do_image_splitting", do_image_splitting},
          {"max_image_size", {{"longest_edge", max_image_size}}},
          {"upper_bound", upper_bound},
          {"resample", "PIL LANCZOS"},
          {"do_rescale", do_rescale},
          {"rescale_factor", rescale_factor},
          {"do_normalize", do_normalize},
          {"image_mean", mean},
          {"image_std", std}};
}

nlohmann::json SmolVlmConfig::to_json() const {
  return {{"model_type", model_type},
          {"text_config", text.to_json()},
          {"vision_config",
           {{"hidden_size", vision_hidden},
            {"intermediate_size", vision_mlp},
            {"num_hidden_layers", vision_layers},
            {"num_attention_heads", vision_heads},
            {"image_size", image_size},
            {"patch_size", patch},
            {"layer_norm_eps", vision_eps},
            {"hidden_act", vision_act}}},
          {"scale_factor", scale_factor},
          {"image_token_id", image_token_id},
          {"image_seq_len", image_seq_len}};
}

namespace {
SmolVlmConfig parse_smolvlm_config(const fs::path& dir);
}

SmolVlmConfig load_smolvlm_config(const fs::path& dir) {
  try {
    return parse_smolvlm_config(dir);
  } catch (const json::exception& e) {  // a field of the wrong type
    throw InputError({dir.string(), 0, ""},
                     std::string("unexpected JSON in its configs: ") + e.what());
  }
}

namespace {
SmolVlmConfig parse_smolvlm_config(const fs::path& dir) {
  const fs::path file = dir / "config.json";
  const std::string where = file.string();
  const json cfg = read_json(file, true);
  SmolVlmConfig c;
  c.model_type = cfg.value("model_type", std::string());
  if (c.model_type != "idefics3" && c.model_type != "smolvlm") {
    throw InputError({where, 0, "model_type"}, "not an Idefics3 / SmolVLM checkpoint");
  }
  json text = cfg.value("text_config", json::object());
  if (!text.contains("model_type")) text["model_type"] = "llama";
  // Idefics3Config's text defaults (transformers): rms_norm_eps 1e-5.
  if (!text.contains("rms_norm_eps")) text["rms_norm_eps"] = 1e-5;
  c.text = llama_config_from_json(text, where + " (text_config)");
  const json vision = cfg.value("vision_config", json::object());
  const std::string vw = where + " (vision_config)";
  c.vision_hidden = read_int(vision, "hidden_size", c.vision_hidden, vw);
  c.vision_mlp = read_int(vision, "intermediate_size", c.vision_mlp, vw);
  c.vision_layers = read_int(vision, "num_hidden_layers", c.vision_layers, vw, 1000);
  c.vision_heads = read_int(vision, "num_attention_heads", c.vision_heads, vw, 1024);
  c.image_size = read_int(vision, "image_size", c.image_size, vw, kMaxEdge);
  c.patch = read_int(vision, "patch_size", c.patch, vw, kMaxEdge);
  if (auto it = vision.find("layer_norm_eps"); it != vision.end() && it->is_number()) {
    c.vision_eps = it->get<double>();
  }
  c.vision_act = vision.value("hidden_act", c.vision_act);
  if (c.vision_act != "gelu_pytorch_tanh" && c.vision_act != "gelu_new" && c.vision_act != "gelu") {
    throw InputError({vw, 0, "hidden_act"}, "unsupported activation '" + c.vision_act + "'");
  }
  if (c.vision_hidden % c.vision_heads != 0) {
    throw InputError({vw, 0, "num_attention_heads"}, "does not divide hidden_size");
  }
  if (c.patch > c.image_size) throw InputError({vw, 0, "patch_size"}, "larger than image_size");
  c.scale_factor = read_int(cfg, "scale_factor", c.scale_factor, where, 64);
  const int side = c.image_size / c.patch;
  if (side % c.scale_factor != 0) {
    throw InputError({where, 0, "scale_factor"},
                     "does not divide the patch grid's side " + std::to_string(side));
  }
  c.image_token_id = read_int(cfg, "image_token_id", c.image_token_id, where, INT_MAX);
  const json proc = read_json(dir / "processor_config.json", false);
  c.image_seq_len = read_int(proc, "image_seq_len", side * side / (c.scale_factor * c.scale_factor),
                             where, 1 << 20);
  if (c.image_seq_len != side * side / (c.scale_factor * c.scale_factor)) {
    throw InputError({(dir / "processor_config.json").string(), 0, "image_seq_len"},
                     "does not match the vision tower's " +
                         std::to_string(side * side / (c.scale_factor * c.scale_factor)) +
                         " tokens per image");
  }
  const fs::path ppf = dir / "preprocessor_config.json";
  const json pp = read_json(ppf, false);
  const std::string pw = ppf.string();
  SmolVlmPreprocessConfig& p = c.preprocess;
  p.upper_bound = c.model_type == "idefics3" ? 1820 : 4096;
  p.do_resize = pp.value("do_resize", true);
  p.do_image_splitting = pp.value("do_image_splitting", true);
  p.do_rescale = pp.value("do_rescale", true);
  p.do_normalize = pp.value("do_normalize", true);
  p.longest_edge =
      read_int(pp.value("size", json::object()), "longest_edge", 4 * 364, pw, kMaxEdge);
  p.max_image_size =
      read_int(pp.value("max_image_size", json::object()), "longest_edge", 364, pw, kMaxEdge);
  p.resample = pp.value("resample", 1);
  if (p.resample != 1) {
    throw InputError({pw, 0, "resample"},
                     "only PIL LANCZOS (1) is supported, got " + std::to_string(p.resample));
  }
  if (p.max_image_size != c.image_size) {
    throw InputError({pw, 0, "max_image_size"}, "tiles of " + std::to_string(p.max_image_size) +
                                                    " pixels, but the vision tower takes " +
                                                    std::to_string(c.image_size));
  }
  if (auto it = pp.find("rescale_factor"); it != pp.end() && it->is_number()) {
    p.rescale_factor = it->get<double>();
  }
  for (const auto& [key, dst] :
       {std::pair<const char*, std::array<float, 3>*>{"image_mean", &p.mean},
        std::pair<const char*, std::array<float, 3>*>{"image_std", &p.std}}) {
    auto it = pp.find(key);
    if (it == pp.end() || it->is_null()) continue;
    if (!it->is_array() || it->size() != 3) throw InputError({pw, 0, key}, "expected 3 numbers");
    for (std::size_t i = 0; i < 3; ++i)
      (*dst)[i] = (*it)[i].get<float>();
  }
  return c;
}
}  // namespace

struct SmolVlmModel::Impl {
  SmolVlmConfig cfg;
  VqaScoreOptions options;
  std::string weights_id;
  std::unique_ptr<HfTokenizer> tok;
  std::unique_ptr<LlamaModel> lm;
  // vision
  Linear patch;
  std::vector<float> position;    // [patches, hidden]
  std::vector<int> position_ids;  // per patch of a full tile
  std::vector<detail::EncoderLayer> layers;
  std::vector<float> post_g, post_b;
  Linear projection;                        // modality_projection: [text hidden, hidden * s^2]
  std::string turn_start = "<|im_start|>";  // the chat template's text before the first turn
  int answer = 0;

  int patches() const { return (cfg.image_size / cfg.patch) * (cfg.image_size / cfg.patch); }

  void load(const SafeTensors& st) {
    const std::int64_t V = cfg.vision_hidden, P = cfg.patch;
    const std::string e = "model.vision_model.embeddings.";
    auto get = [&](const std::string& name, const std::vector<std::int64_t>& shape) {
      auto v = st.to_float(name, shape);
      st.release(name);
      return v;
    };
    patch = Linear(get(e + "patch_embedding.weight", {V, 3, P, P}),
                   get(e + "patch_embedding.bias", {V}), cfg.vision_hidden,
                   static_cast<int>(3 * P * P), detail::PostOp::None, /*accumulate=*/true);
    position = get(e + "position_embedding.weight", {patches(), V});
    // Idefics3VisionEmbeddings buckets the patches' fractional coordinates against float32
    // aranges; for a full tile that is meant to be 0..N-1, which is what it gives whenever the
    // grid's side is a power of two (SmolVLM-256M/500M: 32). For other sides (SmolVLM-Instruct:
    // 27) PyTorch's float32 arange rounds differently on CPU (by vector width) and CUDA, and may
    // give a patch its neighbour's id; winokit uses the intended 0..N-1 (docs/models.md).
    position_ids.resize(static_cast<std::size_t>(patches()));
    for (int i = 0; i < patches(); ++i)
      position_ids[static_cast<std::size_t>(i)] = i;
    // The shared layer loader reads through a TensorSource.
    struct Source final : detail::TensorSource {
      const SafeTensors& st;
      explicit Source(const SafeTensors& s) : st(s) {}
      std::vector<float> get(const std::string& name,
                             const std::vector<std::int64_t>& shape) override {
        auto v = st.to_float(name, shape);
        st.release(name);
        return v;
      }
    } src(st);
    const detail::PostOp act =
        cfg.vision_act == "gelu" ? detail::PostOp::Gelu : detail::PostOp::GeluTanh;
    for (int i = 0; i < cfg.vision_layers; ++i) {
      layers.push_back(detail::load_encoder_layer(
          src, "model.vision_model.encoder.layers." + std::to_string(i) + ".",
          detail::kHfClipLayerNames, {cfg.vision_hidden, cfg.vision_mlp, true, act}));
    }
    post_g = get("model.vision_model.post_layernorm.weight", {V});
    post_b = get("model.vision_model.post_layernorm.bias", {V});
    const int s2 = cfg.scale_factor * cfg.scale_factor;
    projection =
        Linear(get("model.connector.modality_projection.proj.weight", {cfg.text.hidden, V * s2}),
               {}, cfg.text.hidden, cfg.vision_hidden * s2);
    // The lm_head: its own tensor when the file has one, else tied to the embeddings.
    LlamaConfig text = cfg.text;
    text.tie_embeddings = st.find("lm_head.weight") == nullptr;
    lm = std::make_unique<LlamaModel>(
        LlamaModel::load(st, text, "model.text_model.", "lm_head.weight", weights_id));
  }

  // [tiles * image_seq_len, text hidden]
  std::vector<float> features(const SmolVlmTiles& t) const {
    const int H = cfg.vision_hidden, P = cfg.patch, S = cfg.image_size, g = S / P, N = patches();
    const std::size_t rows = static_cast<std::size_t>(t.count) * N;
    const std::size_t K = static_cast<std::size_t>(3) * P * P;
    std::vector<float> cols(rows * K);
#pragma omp parallel for schedule(static)
    for (std::size_t r = 0; r < rows; ++r) {
      const std::size_t img = r / static_cast<std::size_t>(N);
      const int p = static_cast<int>(r % static_cast<std::size_t>(N));
      const int gy = p / g, gx = p % g;
      float* dst = &cols[r * K];
      for (int ch = 0; ch < 3; ++ch) {
        for (int ky = 0; ky < P; ++ky) {
          const float* src = t.pixels.data() +
                             ((img * 3 + static_cast<std::size_t>(ch)) * S +
                              static_cast<std::size_t>(gy * P + ky)) *
                                 S +
                             static_cast<std::size_t>(gx * P);
          std::copy_n(src, P, dst + (static_cast<std::size_t>(ch) * P + ky) * P);
        }
      }
    }
    // Position embeddings (every tile is a full image), then patch W^T + b on top.
    std::vector<float> x(rows * H);
    for (std::size_t r = 0; r < rows; ++r) {
      const std::size_t id =
          static_cast<std::size_t>(position_ids[r % static_cast<std::size_t>(N)]);
      std::memcpy(&x[r * H], &position[id * H], sizeof(float) * H);
    }
    patch.forward(cols.data(), static_cast<int>(rows), x.data());
    cols = {};
    const detail::FixedSequences seqs(t.count, N);
    detail::EncoderRun run{rows, seqs.offsets, seqs.lengths, cfg.vision_heads, cfg.vision_eps};
    detail::run_encoder_layers(layers, x, run);
    std::vector<float> normed(rows * H);
    detail::layer_norm(x.data(), rows, H, post_g, post_b, cfg.vision_eps, normed.data());
    const int s = cfg.scale_factor, s2 = s * s;
    const std::size_t out_rows = rows / static_cast<std::size_t>(s2);
    std::vector<float> shuffled(rows * H);
    for (int i = 0; i < t.count; ++i) {
      pixel_shuffle(&normed[static_cast<std::size_t>(i) * N * H], g, H, s,
                    &shuffled[static_cast<std::size_t>(i) * N * H]);
    }
    std::vector<float> out(out_rows * cfg.text.hidden);
    projection.forward(shuffled.data(), static_cast<int>(out_rows), out.data());
    return out;
  }

  std::vector<int> prefix_ids(const SmolVlmTiles& t) const {
    // The processor tokenises the whole prompt with add_special_tokens: the template's prefix
    // starts it, its suffix ends it (question_ids).
    std::vector<int> ids = tok->special_prefix();
    const std::vector<int> text = tok->encode(
        turn_start + "User:" + smolvlm_image_prompt(t.rows, t.cols, cfg.image_seq_len), false);
    ids.insert(ids.end(), text.begin(), text.end());
    return ids;
  }

  KvCache prefix(const SmolVlmTiles& t) const {
    return prefix(t, features(t));
  }

  KvCache prefix(const SmolVlmTiles& t, const std::vector<float>& f) const {
    std::vector<int> ids = prefix_ids(t);
    std::vector<float> x = lm->embed(ids);
    const std::size_t h = static_cast<std::size_t>(cfg.text.hidden);
    std::size_t next = 0;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      if (ids[i] != cfg.image_token_id) continue;
      if (next * h >= f.size()) throw Error("smolvlm: more <image> tokens than image features");
      std::memcpy(&x[i * h], &f[next * h], sizeof(float) * h);
      ++next;
    }
    if (next * h != f.size()) {
      throw InputError({"tokenizer.json", 0, ""},
                       "the prompt holds " + std::to_string(next) + " <image> tokens (id " +
                           std::to_string(cfg.image_token_id) + ") for " +
                           std::to_string(f.size() / h) + " image features");
    }
    KvCache cache;
    lm->forward({{x.data(), static_cast<int>(ids.size()), nullptr, &cache}}, LogitRows::None);
    return cache;
  }

  std::vector<int> question_ids(const std::string& caption) const {
    std::string q = options.question;
    const auto at = q.find("{}");
    if (at != std::string::npos) q.replace(at, 2, caption);
    // The whole prompt through the tokenizer, minus the prefix: the split falls on the added
    // token that ends the image part, so the ids are those of the full prompt.
    std::vector<int> ids = tok->encode(q + "<end_of_utterance>\nAssistant:", false);
    // The post_processor's suffix (if any) ends the whole prompt.
    ids.insert(ids.end(), tok->special_suffix().begin(), tok->special_suffix().end());
    return ids;
  }

  std::vector<double> probabilities(const KvCache& cache,
                                    const std::vector<std::string>& captions) const {
    std::vector<std::vector<int>> ids;
    std::vector<std::vector<float>> x;
    for (const auto& c : captions) {
      ids.push_back(question_ids(c));
      x.push_back(lm->embed(ids.back()));
    }
    std::vector<LlamaSequence> seqs;
    for (std::size_t i = 0; i < ids.size(); ++i)
      seqs.push_back({x[i].data(), static_cast<int>(ids[i].size()), &cache, nullptr});
    const std::vector<float> logits = lm->forward(seqs, LogitRows::Last);
    const int v = cfg.text.vocab_size;
    std::vector<double> out(captions.size());
    for (std::size_t i = 0; i < captions.size(); ++i)
      out[i] = softmax_at(&logits[i * static_cast<std::size_t>(v)], v, answer);
    return out;
  }
};

SmolVlmModel::SmolVlmModel() : impl_(std::make_unique<Impl>()) {}
SmolVlmModel::SmolVlmModel(SmolVlmModel&&) noexcept = default;
SmolVlmModel& SmolVlmModel::operator=(SmolVlmModel&&) noexcept = default;
SmolVlmModel::~SmolVlmModel() = default;

SmolVlmModel SmolVlmModel::load(const fs::path& dir, const VqaScoreOptions& options) {
  SmolVlmModel m;
  Impl& I = *m.impl_;
  I.cfg = load_smolvlm_config(dir);
  I.options = options;
  if (options.image_splitting >= 0) I.cfg.preprocess.do_image_splitting = options.image_splitting;
  I.tok = std::make_unique<HfTokenizer>(HfTokenizer::from_file(dir / "tokenizer.json"));
  // The chat template (chat_template.json, else tokenizer_config.json's) is Jinja; the prompt is
  // its rendering for one user turn (image, then text) and the generation prompt, which holds
  // for the Idefics3 / SmolVLM template family: its literal start ("<|im_start|>" for SmolVLM,
  // "<|begin_of_text|>" for Idefics3-8B) is read from it, the rest is checked for the markers.
  for (const char* name : {"chat_template.json", "tokenizer_config.json"}) {
    const fs::path file = dir / name;
    if (!fs::is_regular_file(file)) continue;
    const json j = read_json(file, true);
    auto it = j.find("chat_template");
    if (it == j.end() || !it->is_string()) continue;
    const std::string t = it->get<std::string>();
    const bool ours = t.find("capitalize") != std::string::npos &&
                      t.find("<end_of_utterance>") != std::string::npos &&
                      t.find("'Assistant:'") != std::string::npos &&
                      t.find("'<image>'") != std::string::npos;
    if (!ours) {
      throw InputError({file.string(), 0, "chat_template"},
                       "not the Idefics3 / SmolVLM chat template (Role:<image>text"
                       "<end_of_utterance>, generation prompt 'Assistant:')",
                       "the VQAScore prompt is that template's rendering");
    }
    I.turn_start = t.substr(0, t.find('{'));
    break;
  }
  for (const char* t : {"<fake_token_around_image>", "<image>", "<global-img>",
                        "<end_of_utterance>", "<|im_start|>"}) {
    if (I.tok->token_id(t) < 0) {
      throw InputError({(dir / "tokenizer.json").string(), 0, "added_tokens"},
                       std::string("no ") + t + " token");
    }
  }
  if (I.tok->token_id("<image>") != I.cfg.image_token_id) {
    throw InputError({(dir / "config.json").string(), 0, "image_token_id"},
                     std::to_string(I.cfg.image_token_id) + " but tokenizer.json's <image> is " +
                         std::to_string(I.tok->token_id("<image>")));
  }
  const std::vector<int> answer = I.tok->encode(options.answer, false);
  if (answer.empty()) throw UsageError("the VQAScore answer is empty");
  I.answer = answer[0];
  fs::path weights = dir / "model.safetensors";
  if (!fs::is_regular_file(weights)) weights = dir / "model.safetensors.index.json";
  if (!fs::is_regular_file(weights)) {
    throw IoError((dir / "model.safetensors").string() + ": not found",
                  "a SmolVLM folder holds model.safetensors or model.safetensors.index.json");
  }
  const SafeTensors st = SafeTensors::open(weights);
  I.weights_id = st.content_hash();
  I.load(st);
  if (static_cast<std::size_t>(I.tok->vocab_size()) >
      static_cast<std::size_t>(I.cfg.text.vocab_size)) {
    throw InputError(
        {(dir / "tokenizer.json").string(), 0, ""},
        "more tokens than the model's vocab_size " + std::to_string(I.cfg.text.vocab_size));
  }
  return m;
}

const SmolVlmConfig& SmolVlmModel::config() const {
  return impl_->cfg;
}
const HfTokenizer& SmolVlmModel::tokenizer() const {
  return *impl_->tok;
}
const LlamaModel& SmolVlmModel::text_model() const {
  return *impl_->lm;
}
const std::string& SmolVlmModel::weights_id() const {
  return impl_->weights_id;
}
const VqaScoreOptions& SmolVlmModel::options() const {
  return impl_->options;
}
int SmolVlmModel::answer_id() const {
  return impl_->answer;
}
std::vector<float> SmolVlmModel::image_features(const SmolVlmTiles& tiles) const {
  return impl_->features(tiles);
}
std::vector<int> SmolVlmModel::prefix_ids(const SmolVlmTiles& tiles) const {
  return impl_->prefix_ids(tiles);
}
std::vector<int> SmolVlmModel::question_ids(const std::string& caption) const {
  return impl_->question_ids(caption);
}
KvCache SmolVlmModel::image_prefix(const SmolVlmTiles& tiles) const {
  return impl_->prefix(tiles);
}
KvCache SmolVlmModel::image_prefix(const SmolVlmTiles& tiles,
                                   const std::vector<float>& features) const {
  if (features.size() != static_cast<std::size_t>(tiles.count) * impl_->cfg.image_seq_len *
                             static_cast<std::size_t>(impl_->cfg.text.hidden)) {
    throw UsageError("smolvlm: image_prefix given features of another size than its tiles'");
  }
  return impl_->prefix(tiles, features);
}
KvCache SmolVlmModel::image_prefix(const DecodedImage& image) const {
  return impl_->prefix(smolvlm_preprocess(image, impl_->cfg.preprocess));
}
std::vector<double> SmolVlmModel::answer_probabilities(
    const KvCache& prefix, const std::vector<std::string>& captions) const {
  return impl_->probabilities(prefix, captions);
}

}  // namespace winokit
