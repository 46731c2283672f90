#include "model/families/smolvlm/smolvlm_model.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>

#include "model/kernels/gemm.hpp"
#include "model/layers/transformer.hpp"
#include "model/runtime/vqascore_parts.hpp"
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

constexpr int kMaxEdge = detail::kMaxImageEdge;

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
  detail::append_normalized(tile, {p.do_rescale, p.do_normalize, p.rescale_factor, p.mean, p.std},
                            out);
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
          const DecodedImage tile = detail::crop_rgb(im, c * ow, r * oh, std::min(c * ow + ow, w),
                                                     std::min(r * oh + oh, h));
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
  const json cfg = detail::read_json_object(file, true);
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
  c.vision_hidden = detail::read_positive_int(vision, "hidden_size", c.vision_hidden, vw);
  c.vision_mlp = detail::read_positive_int(vision, "intermediate_size", c.vision_mlp, vw);
  c.vision_layers =
      detail::read_positive_int(vision, "num_hidden_layers", c.vision_layers, vw, 1000);
  c.vision_heads =
      detail::read_positive_int(vision, "num_attention_heads", c.vision_heads, vw, 1024);
  c.image_size = detail::read_positive_int(vision, "image_size", c.image_size, vw, kMaxEdge);
  c.patch = detail::read_positive_int(vision, "patch_size", c.patch, vw, kMaxEdge);
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
  c.scale_factor = detail::read_positive_int(cfg, "scale_factor", c.scale_factor, where, 64);
  const int side = c.image_size / c.patch;
  if (side % c.scale_factor != 0) {
    throw InputError({where, 0, "scale_factor"},
                     "does not divide the patch grid's side " + std::to_string(side));
  }
  c.image_token_id =
      detail::read_positive_int(cfg, "image_token_id", c.image_token_id, where, INT_MAX);
  const json proc = detail::read_json_object(dir / "processor_config.json", false);
  c.image_seq_len = detail::read_positive_int(
      proc, "image_seq_len", side * side / (c.scale_factor * c.scale_factor), where, 1 << 20);
  if (c.image_seq_len != side * side / (c.scale_factor * c.scale_factor)) {
    throw InputError({(dir / "processor_config.json").string(), 0, "image_seq_len"},
                     "does not match the vision tower's " +
                         std::to_string(side * side / (c.scale_factor * c.scale_factor)) +
                         " tokens per image");
  }
  const fs::path ppf = dir / "preprocessor_config.json";
  const json pp = detail::read_json_object(ppf, false);
  const std::string pw = ppf.string();
  SmolVlmPreprocessConfig& p = c.preprocess;
  p.upper_bound = c.model_type == "idefics3" ? 1820 : 4096;
  p.do_resize = pp.value("do_resize", true);
  p.do_image_splitting = pp.value("do_image_splitting", true);
  p.do_rescale = pp.value("do_rescale", true);
  p.do_normalize = pp.value("do_normalize", true);
  p.longest_edge = detail::read_positive_int(pp.value("size", json::object()), "longest_edge",
                                             4 * 364, pw, kMaxEdge);
  p.max_image_size = detail::read_positive_int(pp.value("max_image_size", json::object()),
                                               "longest_edge", 364, pw, kMaxEdge);
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
  detail::read_three_floats(pp, "image_mean", pw, p.mean);
  detail::read_three_floats(pp, "image_std", pw, p.std);
  return c;
}
}  // namespace

struct SmolVlmModel::Impl {
  SmolVlmConfig cfg;
  VqaScoreOptions options;
  std::string weights_id;
  std::unique_ptr<HfTokenizer> tok;
  std::unique_ptr<LlamaModel> lm;
  detail::SiglipVisionTower vision;
  Linear projection;                        // modality_projection: [text hidden, hidden * s^2]
  std::string turn_start = "<|im_start|>";  // the chat template's text before the first turn
  int answer = 0;

  void load(const SafeTensors& st) {
    const std::int64_t V = cfg.vision_hidden;
    auto get = [&](const std::string& name, const std::vector<std::int64_t>& shape) {
      auto v = st.to_float(name, shape);
      st.release(name);
      return v;
    };
    // Idefics3VisionEmbeddings buckets the patches' fractional coordinates against float32
    // aranges; for a full tile that is meant to be 0..N-1, which is what it gives whenever the
    // grid's side is a power of two (SmolVLM-256M/500M: 32). For other sides (SmolVLM-Instruct:
    // 27) PyTorch's float32 arange rounds differently on CPU (by vector width) and CUDA, and may
    // give a patch its neighbour's id; winokit uses the intended 0..N-1 (docs/models.md).
    detail::SafeTensorsSource src(st);
    vision.load(src, "model.vision_model.",
                {cfg.vision_hidden, cfg.vision_mlp, cfg.vision_layers, cfg.vision_heads,
                 cfg.image_size, cfg.patch, cfg.vision_eps, cfg.vision_act},
                cfg.vision_layers, /*post_layernorm=*/true);
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
    const int H = cfg.vision_hidden, g = cfg.image_size / cfg.patch, N = vision.patches();
    const std::size_t rows = static_cast<std::size_t>(t.count) * N;
    const std::vector<float> normed = vision.forward(t.pixels, t.count);
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

  KvCache prefix(const SmolVlmTiles& t) const { return prefix(t, features(t)); }

  // The prefix from features computed apart (bench: the vision tower and the prefix timed
  // separately); the same bits as prefix(t).
  KvCache prefix(const SmolVlmTiles& t, const std::vector<float>& f) const {
    return detail::run_image_prefix(*lm, prefix_ids(t), cfg.image_token_id, f, "tokenizer.json");
  }

  std::vector<int> question_ids(const std::string& caption) const {
    const std::string q = vqascore_question(options.question, caption);
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
    for (const auto& c : captions)
      ids.push_back(question_ids(c));
    return detail::continuation_probabilities(*lm, cache, ids, answer);
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
  if (const auto chat = detail::read_chat_template(dir)) {
    const std::string& t = chat->text;
    const bool ours = t.find("capitalize") != std::string::npos &&
                      t.find("<end_of_utterance>") != std::string::npos &&
                      t.find("'Assistant:'") != std::string::npos &&
                      t.find("'<image>'") != std::string::npos;
    if (!ours) {
      throw InputError({chat->file.string(), 0, "chat_template"},
                       "not the Idefics3 / SmolVLM chat template (Role:<image>text"
                       "<end_of_utterance>, generation prompt 'Assistant:')",
                       "the VQAScore prompt is that template's rendering");
    }
    I.turn_start = t.substr(0, t.find('{'));
  }
  detail::check_added_tokens(*I.tok, dir,
                             {"<fake_token_around_image>", "<image>", "<global-img>",
                              "<end_of_utterance>", "<|im_start|>"},
                             I.cfg.image_token_id, "image_token_id");
  I.answer = detail::answer_token(*I.tok, options.answer);
  detail::load_checkpoint_weights(dir, "SmolVLM", *I.tok, I.cfg.text.vocab_size,
                                  [&](const SafeTensors& st, const std::string& id) {
                                    I.weights_id = id;
                                    I.load(st);
                                  });
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
