#include "model/families/llava_onevision/llava_onevision_model.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>

#include "model/kernels/gemm.hpp"
#include "model/runtime/vqascore_parts.hpp"
#include "winokit/core/error.hpp"
#include "winokit/io/safetensors.hpp"
#include "winokit/model/compute.hpp"
#include "winokit/model/preprocess.hpp"

namespace winokit {

namespace fs = std::filesystem;
using detail::Linear;
using nlohmann::json;

namespace {

constexpr int kMaxEdge = detail::kMaxImageEdge;
// pack_image_features downscales when the cropped grid exceeds max_num_patches tiles' worth by
// more than this ratio (modeling_llava_onevision.py).
constexpr double kDownscaleRatio = 1.1;
// LlavaOnevisionProcessor._get_unpadded_features writes the 9 of anyres_max_9 as a constant.
constexpr int kProcessorMaxPatches = 9;

// Python's float floor division a // b (CPython's float_floor_div: fmod, then floor of the
// exact quotient), as `int(curr_height // ratio)` computes it.
double py_floordiv(double a, double b) {
  double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0.0 && ((b < 0) != (mod < 0))) div -= 1.0;
  if (div == 0.0) return std::copysign(0.0, a / b);
  double floordiv = std::floor(div);
  if (div - floordiv > 0.5) floordiv += 1.0;
  return floordiv;
}

// int(round(x, 7)) for x >= 0: x's integer part, or the next integer when x lies within
// 5e-8 below it.
int py_int_round7(double x) {
  const double up = std::ceil(x);
  if (up > x && up - x <= 5e-8) return static_cast<int>(up);
  return static_cast<int>(std::floor(x));
}

// Python's a // b for integers, b > 0.
int floordiv_int(int a, int b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

std::vector<std::pair<int, int>> read_pinpoints(const json& j, const std::string& where) {
  auto it = j.find("image_grid_pinpoints");
  std::vector<std::pair<int, int>> out;
  if (it == j.end() || it->is_null()) {
    // LlavaOnevisionConfig's and the image processor's default: 384 x {1..6} squared.
    for (int a = 1; a <= 6; ++a)
      for (int b = 1; b <= 6; ++b)
        out.emplace_back(384 * a, 384 * b);
    return out;
  }
  if (!it->is_array() || it->empty()) {
    throw InputError({where, 0, "image_grid_pinpoints"}, "expected a list of [height, width]");
  }
  for (const auto& p : *it) {
    if (!p.is_array() || p.size() != 2 || !p[0].is_number_integer() || !p[1].is_number_integer() ||
        p[0].get<long long>() < 1 || p[1].get<long long>() < 1 ||
        p[0].get<long long>() > kMaxEdge || p[1].get<long long>() > kMaxEdge) {
      throw InputError({where, 0, "image_grid_pinpoints"},
                       "expected [height, width] pairs of positive integers, got " + p.dump());
    }
    out.emplace_back(p[0].get<int>(), p[1].get<int>());
  }
  return out;
}

LlavaOnevisionConfig parse_config(const fs::path& dir) {
  const fs::path file = dir / "config.json";
  const std::string where = file.string();
  const json cfg = detail::read_json_object(file, true);
  if (cfg.value("model_type", std::string()) != "llava_onevision") {
    throw InputError({where, 0, "model_type"}, "not a LLaVA-OneVision checkpoint");
  }
  LlavaOnevisionConfig c;
  json text = cfg.value("text_config", json::object());
  if (!text.contains("model_type")) text["model_type"] = "qwen2";
  c.text = llama_config_from_json(text, where + " (text_config)");
  const json vision = cfg.value("vision_config", json::object());
  const std::string vw = where + " (vision_config)";
  if (vision.value("model_type", std::string("siglip_vision_model")) != "siglip_vision_model") {
    throw InputError({vw, 0, "model_type"}, "only SigLIP vision towers (siglip_vision_model)",
                     "LLaVA-OneVision checkpoints use SigLIP");
  }
  c.vision_hidden = detail::read_positive_int(vision, "hidden_size", c.vision_hidden, vw);
  c.vision_mlp = detail::read_positive_int(vision, "intermediate_size", c.vision_mlp, vw);
  c.vision_layers =
      detail::read_positive_int(vision, "num_hidden_layers", c.vision_layers, vw, 1000);
  c.vision_heads =
      detail::read_positive_int(vision, "num_attention_heads", c.vision_heads, vw, 1024);
  c.image_size = detail::read_positive_int(vision, "image_size", c.image_size, vw, kMaxEdge);
  c.patch = detail::read_positive_int(vision, "patch_size", c.patch, vw, kMaxEdge);
  if (detail::read_positive_int(vision, "num_channels", 3, vw, 3) != 3) {
    throw InputError({vw, 0, "num_channels"}, "expected 3");
  }
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

  c.image_token_id =
      detail::read_positive_int(cfg, "image_token_index", c.image_token_id, where, INT_MAX);
  if (auto it = cfg.find("vision_feature_layer"); it != cfg.end() && !it->is_null()) {
    if (!it->is_number_integer()) {
      throw InputError({where, 0, "vision_feature_layer"},
                       "only one layer is supported, got " + it->dump());
    }
    c.vision_feature_layer = it->get<int>();
  }
  const int states = c.vision_layers + 1;  // hidden_states: the embeddings, then each layer
  if (c.vision_feature_layer < -states || c.vision_feature_layer >= states) {
    throw InputError({where, 0, "vision_feature_layer"},
                     std::to_string(c.vision_feature_layer) + " is outside the vision tower's " +
                         std::to_string(states) + " hidden states");
  }
  c.select_strategy = cfg.value("vision_feature_select_strategy", c.select_strategy);
  if (c.select_strategy != "full") {
    throw InputError({where, 0, "vision_feature_select_strategy"},
                     "only \"full\" is supported, got \"" + c.select_strategy + "\"",
                     "\"default\" drops a SigLIP patch, which anyres packing cannot lay out");
  }
  c.aspect_ratio = cfg.value("vision_aspect_ratio", c.aspect_ratio);
  {
    // int(vision_aspect_ratio.strip("anyres_max_")): digits after the prefix.
    const std::string prefix = "anyres_max_";
    const std::string digits =
        c.aspect_ratio.rfind(prefix, 0) == 0 ? c.aspect_ratio.substr(prefix.size()) : std::string();
    if (digits.empty() || digits.size() > 4 ||
        !std::all_of(digits.begin(), digits.end(),
                     [](char ch) { return ch >= '0' && ch <= '9'; }) ||
        std::stoi(digits) < 1) {
      throw InputError({where, 0, "vision_aspect_ratio"},
                       "expected anyres_max_N, got \"" + c.aspect_ratio + "\"");
    }
    c.max_num_patches = std::stoi(digits);
  }
  c.projector_act = cfg.value("projector_hidden_act", c.projector_act);
  if (c.projector_act != "gelu") {
    throw InputError({where, 0, "projector_hidden_act"},
                     "only gelu is supported, got \"" + c.projector_act + "\"");
  }
  if (auto it = cfg.find("multimodal_projector_bias"); it != cfg.end() && it->is_boolean()) {
    c.projector_bias = it->get<bool>();
  }
  c.pinpoints = read_pinpoints(cfg, where);

  const fs::path ppf = dir / "preprocessor_config.json";
  const json pp = detail::read_json_object(ppf, false);
  const std::string pw = ppf.string();
  LlavaOnevisionPreprocessConfig& p = c.preprocess;
  p.do_resize = pp.value("do_resize", true);
  p.do_rescale = pp.value("do_rescale", true);
  p.do_normalize = pp.value("do_normalize", true);
  p.do_convert_rgb = pp.value("do_convert_rgb", true);
  if (!p.do_resize || !p.do_convert_rgb) {
    throw InputError({pw, 0, p.do_resize ? "do_convert_rgb" : "do_resize"},
                     "false is not supported (every tile is resized and converted to RGB)");
  }
  const json size = pp.value("size", json::object());
  if (size.contains("height") || size.contains("width")) {
    p.size = detail::read_positive_int(size, "height", 384, pw, kMaxEdge);
    if (detail::read_positive_int(size, "width", 384, pw, kMaxEdge) != p.size) {
      throw InputError({pw, 0, "size"}, "tiles must be square");
    }
  } else {
    p.size = detail::read_positive_int(size, "shortest_edge", 384, pw, kMaxEdge);
  }
  p.resample = pp.value("resample", 3);
  if (p.resample != 3) {
    throw InputError({pw, 0, "resample"},
                     "only PIL BICUBIC (3) is supported, got " + std::to_string(p.resample));
  }
  if (auto it = pp.find("rescale_factor"); it != pp.end() && it->is_number()) {
    p.rescale_factor = it->get<double>();
  }
  detail::read_three_floats(pp, "image_mean", pw, p.mean);
  detail::read_three_floats(pp, "image_std", pw, p.std);
  p.pinpoints = pp.contains("image_grid_pinpoints") ? read_pinpoints(pp, pw) : c.pinpoints;
  if (p.size != c.image_size) {
    throw InputError({pw, 0, "size"}, "tiles of " + std::to_string(p.size) +
                                          " pixels, but the vision tower takes " +
                                          std::to_string(c.image_size));
  }
  if (p.pinpoints != c.pinpoints) {
    throw InputError({pw, 0, "image_grid_pinpoints"},
                     "differ from config.json's, which lay out the features");
  }
  for (const auto& [h, w] : c.pinpoints) {
    if (h % c.image_size != 0 || w % c.image_size != 0) {
      throw InputError({where, 0, "image_grid_pinpoints"},
                       std::to_string(h) + " x " + std::to_string(w) +
                           " is not a whole number of " + std::to_string(c.image_size) +
                           "-pixel tiles");
    }
  }
  return c;
}

// The packed features of one image: the base tile's tokens, then the grid's rows with a newline
// each. feats: [tiles * N, hidden] after the projector.
std::vector<float> pack_features(const LlavaOnevisionConfig& c, const LlavaFeatureLayout& L,
                                 const std::vector<float>& feats, const std::vector<float>& newline,
                                 int hidden) {
  const int g = c.image_size / c.patch, N = g * g;
  const int tiles_w = L.grid_cols / g;
  const std::size_t h = static_cast<std::size_t>(hidden);
  std::vector<float> out(static_cast<std::size_t>(L.tokens()) * h);
  std::memcpy(out.data(), feats.data(), sizeof(float) * h * static_cast<std::size_t>(N));
  // The grid's feature at (y, x) of the cropped grid.
  auto at = [&](int y, int x) -> const float* {
    y += L.crop_top;
    x += L.crop_left;
    const int tile = 1 + (y / g) * tiles_w + x / g;
    const int pos = (y % g) * g + x % g;
    return &feats[(static_cast<std::size_t>(tile) * N + static_cast<std::size_t>(pos)) * h];
  };
  float* dst = out.data() + static_cast<std::size_t>(N) * h;
  if (!L.downscaled) {
    for (int y = 0; y < L.rows; ++y) {
      for (int x = 0; x < L.cols; ++x, dst += h)
        std::memcpy(dst, at(y, x), sizeof(float) * h);
      std::memcpy(dst, newline.data(), sizeof(float) * h);
      dst += h;
    }
    return out;
  }
  // torch.nn.functional.interpolate(mode="bilinear", align_corners=False) in float32, as
  // PyTorch's CPU kernel: scale = in / out, src = scale * (i + 0.5) - 0.5 clamped at 0, the
  // lower index floor(src) (at most in - 1), the upper one further only inside the input,
  // weights 1 - l and l; out = (a * w0 + b * w1) * h0 + (c * w0 + d * w1) * h1.
  struct Tap {
    int i0 = 0, i1 = 0;
    float w0 = 1, w1 = 0;
  };
  auto taps = [](int in, int out_n) {
    std::vector<Tap> t(static_cast<std::size_t>(out_n));
    const float scale = static_cast<float>(in) / static_cast<float>(out_n);
    for (int i = 0; i < out_n; ++i) {
      float src = scale * (static_cast<float>(i) + 0.5f) - 0.5f;
      if (src < 0) src = 0;
      const int i0 = std::min(static_cast<int>(std::floor(src)), in - 1);
      const float l = std::min(std::max(src - static_cast<float>(i0), 0.0f), 1.0f);
      t[static_cast<std::size_t>(i)] = {i0, i0 + (i0 < in - 1 ? 1 : 0), 1.0f - l, l};
    }
    return t;
  };
  const std::vector<Tap> ty = taps(L.crop_rows, L.rows), tx = taps(L.crop_cols, L.cols);
  for (int y = 0; y < L.rows; ++y) {
    const Tap& a = ty[static_cast<std::size_t>(y)];
    for (int x = 0; x < L.cols; ++x, dst += h) {
      const Tap& b = tx[static_cast<std::size_t>(x)];
      const float* p00 = at(a.i0, b.i0);
      const float* p01 = at(a.i0, b.i1);
      const float* p10 = at(a.i1, b.i0);
      const float* p11 = at(a.i1, b.i1);
      for (std::size_t k = 0; k < h; ++k) {
        const float t0 = p00[k] * b.w0 + p01[k] * b.w1;
        const float t1 = p10[k] * b.w0 + p11[k] * b.w1;
        dst[k] = t0 * a.w0 + t1 * a.w1;
      }
    }
    std::memcpy(dst, newline.data(), sizeof(float) * h);
    dst += h;
  }
  return out;
}

// The chat template's pieces for one user turn (images first, then the text) and the
// generation prompt. The Jinja is not executed: the llava-hf OneVision template family is
// recognised by its literal parts, anything else is refused.
struct ChatPrompt {
  std::string role_sep = "\n";      // after '<|im_start|>' + role
  std::string image = "<image>\n";  // what each image renders as
  std::string before_text;          // before the user's text ('\n' + text in some versions)
  std::string turn_end = "<|im_end|>\n";
  std::string generation = "<|im_start|>assistant\n";
};

std::string quoted_after(const std::string& t, const std::string& marker) {
  const auto at = t.find(marker);
  if (at == std::string::npos) return std::string(1, '\0');
  const auto end = t.find('\'', at + marker.size());
  if (end == std::string::npos) return std::string(1, '\0');
  return t.substr(at + marker.size(), end - at - marker.size());
}

ChatPrompt chat_prompt(const fs::path& dir) {
  ChatPrompt c;
  if (const auto chat = detail::read_chat_template(dir)) {
    const fs::path& file = chat->file;
    std::string t = chat->text;
    // A Jinja string's \n escape and a JSON-decoded newline render the same.
    for (std::size_t at = t.find("\\n"); at != std::string::npos; at = t.find("\\n", at + 1))
      t.replace(at, 2, "\n");
    auto refuse = [&](const std::string& what) {
      return InputError({file.string(), 0, "chat_template"},
                        "not the LLaVA-OneVision chat template (" + what + ")",
                        "the VQAScore prompt is the rendering of llava-hf's OneVision template: "
                        "<|im_start|>user\\n<image>\\nQUESTION<|im_end|>\\n<|im_start|>"
                        "assistant\\n");
    };
    c.role_sep = quoted_after(t, "'<|im_start|>' + message['role'] + '");
    if (c.role_sep != "\n" && c.role_sep != " ") throw refuse("the role's separator");
    c.image = quoted_after(t, "{{ '<image>");
    if (c.image != "\n" && !c.image.empty()) throw refuse("the image's rendering");
    c.image = "<image>" + c.image;
    const auto image_at = t.find("{{ '<image>");
    std::size_t text_at = t.find("{{ content['text'] }}");
    if (text_at == std::string::npos) {
      text_at = t.find("{{ '\n' + content['text'] }}");
      c.before_text = "\n";
    }
    if (text_at == std::string::npos || text_at < image_at) throw refuse("the text's rendering");
    if (t.find("'<|im_end|>' + '\n'") == std::string::npos &&
        t.find("'<|im_end|>\n'") == std::string::npos) {
      throw refuse("the end of a turn");
    }
    if (t.find("'<|im_start|>assistant\n'") == std::string::npos) {
      throw refuse("the generation prompt");
    }
  }
  return c;
}

}  // namespace

nlohmann::json LlavaOnevisionPreprocessConfig::to_json() const {
  json pins = json::array();
  for (const auto& [h, w] : pinpoints)
    pins.push_back({h, w});
  return {{"do_resize", do_resize},
          {"size", size},
          {"image_grid_pinpoints", pins},
          {"resample", "PIL BICUBIC"},
          {"pad", "zeros, centred"},
          {"do_rescale", do_rescale},
          {"rescale_factor", rescale_factor},
          {"do_normalize", do_normalize},
          {"image_mean", mean},
          {"image_std", std}};
}

nlohmann::json LlavaOnevisionConfig::to_json() const {
  return {{"model_type", "llava_onevision"},
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
          {"image_token_index", image_token_id},
          {"vision_feature_layer", vision_feature_layer},
          {"vision_feature_select_strategy", select_strategy},
          {"vision_aspect_ratio", aspect_ratio},
          {"projector_hidden_act", projector_act},
          {"multimodal_projector_bias", projector_bias}};
}

LlavaOnevisionConfig load_llava_onevision_config(const fs::path& dir) {
  try {
    return parse_config(dir);
  } catch (const json::exception& e) {  // a field of the wrong type
    throw InputError({dir.string(), 0, ""},
                     std::string("unexpected JSON in its configs: ") + e.what());
  }
}

std::pair<int, int> llava_best_resolution(int height, int width,
                                          const std::vector<std::pair<int, int>>& pinpoints) {
  std::pair<int, int> best{0, 0};
  long long max_effective = 0;
  long long min_wasted = LLONG_MAX;
  for (const auto& [h, w] : pinpoints) {
    const double scale = std::min(static_cast<double>(w) / width, static_cast<double>(h) / height);
    const long long dw = static_cast<long long>(width * scale);
    const long long dh = static_cast<long long>(height * scale);
    const long long effective = std::min(dw * dh, static_cast<long long>(width) * height);
    const long long wasted = static_cast<long long>(w) * h - effective;
    if (effective > max_effective || (effective == max_effective && wasted < min_wasted)) {
      max_effective = effective;
      min_wasted = wasted;
      best = {h, w};
    }
  }
  if (best.first == 0) throw Error("llava_best_resolution: no pinpoint fits");
  return best;
}

LlavaOnevisionTiles llava_onevision_preprocess(const DecodedImage& image,
                                               const LlavaOnevisionPreprocessConfig& p) {
  const DecodedImage im = to_rgb(image);
  LlavaOnevisionTiles t;
  t.height = im.height;
  t.width = im.width;
  t.size = p.size;
  const auto [bh, bw] = llava_best_resolution(im.height, im.width, p.pinpoints);
  t.grid_h = bh;
  t.grid_w = bw;
  // get_patch_output_size: the image fitted into the pinpoint.
  const double scale_w = static_cast<double>(bw) / im.width;
  const double scale_h = static_cast<double>(bh) / im.height;
  int nh = bh, nw = bw;
  if (scale_w < scale_h) {
    nh = std::min(static_cast<int>(std::ceil(im.height * scale_w)), bh);
  } else {
    nw = std::min(static_cast<int>(std::ceil(im.width * scale_h)), bw);
  }
  const DecodedImage resized = pil_resize(im, nw, nh, PilFilter::Bicubic);
  // Zero padding, the odd pixel after (divmod(target - size, 2)).
  DecodedImage padded;
  padded.width = bw;
  padded.height = bh;
  padded.mode = PixelMode::RGB;
  padded.pixels.assign(static_cast<std::size_t>(bw) * bh * 3, 0);
  const int top = (bh - nh) / 2, left = (bw - nw) / 2;
  for (int y = 0; y < nh; ++y) {
    std::memcpy(&padded.pixels[(static_cast<std::size_t>(y + top) * bw + left) * 3],
                &resized.pixels[static_cast<std::size_t>(y) * nw * 3],
                static_cast<std::size_t>(nw) * 3);
  }
  const detail::PixelNormalization norm{p.do_rescale, p.do_normalize, p.rescale_factor, p.mean,
                                        p.std};
  detail::append_normalized(pil_resize(im, p.size, p.size, PilFilter::Bicubic), norm, t.pixels);
  ++t.count;
  for (int y = 0; y < bh; y += p.size) {
    for (int x = 0; x < bw; x += p.size) {
      DecodedImage tile =
          detail::crop_rgb(padded, x, y, std::min(x + p.size, bw), std::min(y + p.size, bh));
      tile = pil_resize(tile, p.size, p.size, PilFilter::Bicubic);  // the same size: a copy
      detail::append_normalized(tile, norm, t.pixels);
      ++t.count;
    }
  }
  return t;
}

LlavaFeatureLayout llava_onevision_layout(const LlavaOnevisionConfig& c, int height, int width) {
  const int g = c.image_size / c.patch;
  LlavaFeatureLayout L;
  L.base = g * g;
  const auto [bh, bw] = llava_best_resolution(height, width, c.pinpoints);
  L.grid_rows = bh / c.image_size * g;
  L.grid_cols = bw / c.image_size * g;
  // unpad_image
  L.crop_rows = L.grid_rows;
  L.crop_cols = L.grid_cols;
  const double original_aspect = static_cast<double>(width) / height;
  const double current_aspect = static_cast<double>(L.grid_cols) / L.grid_rows;
  if (original_aspect > current_aspect) {
    const double scale = static_cast<double>(L.grid_cols) / width;
    const int new_height = py_int_round7(height * scale);
    const int padding = floordiv_int(L.grid_rows - new_height, 2);
    L.crop_top = padding;
    L.crop_rows = std::max(0, L.grid_rows - 2 * padding);
  } else {
    const double scale = static_cast<double>(L.grid_rows) / height;
    const int new_width = py_int_round7(width * scale);
    const int padding = floordiv_int(L.grid_cols - new_width, 2);
    L.crop_left = padding;
    L.crop_cols = std::max(0, L.grid_cols - 2 * padding);
  }
  L.rows = L.crop_rows;
  L.cols = L.crop_cols;
  const double ratio = std::sqrt(static_cast<double>(L.crop_rows) * L.crop_cols /
                                 (static_cast<double>(c.max_num_patches) * g * g));
  if (ratio > kDownscaleRatio) {
    L.downscaled = true;
    L.rows = static_cast<int>(py_floordiv(L.crop_rows, ratio));
    L.cols = static_cast<int>(py_floordiv(L.crop_cols, ratio));
  }
  if (L.rows < 1 || L.cols < 1) {
    throw InputError({"", 0, ""}, "an image of " + std::to_string(width) + " x " +
                                      std::to_string(height) +
                                      " leaves no features after unpadding");
  }
  return L;
}

int llava_onevision_processor_tokens(const LlavaOnevisionConfig& c, int height, int width) {
  const int size = c.preprocess.size;
  const auto [bh, bw] = llava_best_resolution(height, width, c.preprocess.pinpoints);
  const int ph = size / c.patch, pw = size / c.patch;
  int cur_h = ph * (bh / size), cur_w = pw * (bw / size);
  const double original_aspect = static_cast<double>(width) / height;
  const double current_aspect = static_cast<double>(cur_w) / cur_h;
  if (original_aspect > current_aspect) {
    const int new_height = static_cast<int>(height * (static_cast<double>(cur_w) / width));
    cur_h -= floordiv_int(cur_h - new_height, 2) * 2;
  } else {
    const int new_width = static_cast<int>(width * (static_cast<double>(cur_h) / height));
    cur_w -= floordiv_int(cur_w - new_width, 2) * 2;
  }
  int unpadded = cur_h * cur_w, newlines = cur_h;
  const double ratio = std::sqrt(static_cast<double>(cur_h) * cur_w /
                                 (static_cast<double>(kProcessorMaxPatches) * ph * ph));
  if (ratio > kDownscaleRatio) {
    const int rows = static_cast<int>(py_floordiv(cur_h, ratio));
    unpadded = rows * static_cast<int>(py_floordiv(cur_w, ratio));
    newlines = rows;
  }
  return unpadded + newlines + ph * pw;
}

struct LlavaOnevisionModel::Impl {
  LlavaOnevisionConfig cfg;
  VqaScoreOptions options;
  std::string weights_id;
  std::unique_ptr<HfTokenizer> tok;
  std::unique_ptr<LlamaModel> lm;
  detail::SiglipVisionTower vision;
  Linear linear_1, linear_2;   // the projector: gelu after linear_1
  std::vector<float> newline;  // image_newline: [text hidden]
  ChatPrompt chat;
  int answer = 0;

  // The two layouts transformers has written: the hub's (before 4.52) and the newer one.
  void load(const SafeTensors& st) {
    const bool hub = st.find("image_newline") != nullptr;
    const std::string root = hub ? "" : "model.";
    const std::string text = hub ? "language_model.model." : "model.language_model.";
    const std::string head = hub ? "language_model.lm_head.weight" : "lm_head.weight";
    detail::SafeTensorsSource src(st);
    const int states = cfg.vision_layers + 1;
    const int index =
        cfg.vision_feature_layer < 0 ? states + cfg.vision_feature_layer : cfg.vision_feature_layer;
    vision.load(src, root + "vision_tower.vision_model.",
                {cfg.vision_hidden, cfg.vision_mlp, cfg.vision_layers, cfg.vision_heads,
                 cfg.image_size, cfg.patch, cfg.vision_eps, cfg.vision_act},
                index, /*post_layernorm=*/false);
    const std::int64_t V = cfg.vision_hidden, T = cfg.text.hidden;
    const std::string m = root + "multi_modal_projector.";
    auto bias = [&](const std::string& name) {
      return cfg.projector_bias ? src.get(name, {T}) : std::vector<float>{};
    };
    linear_1 = Linear(src.get(m + "linear_1.weight", {T, V}), bias(m + "linear_1.bias"),
                      cfg.text.hidden, cfg.vision_hidden, detail::PostOp::Gelu);
    linear_2 = Linear(src.get(m + "linear_2.weight", {T, T}), bias(m + "linear_2.bias"),
                      cfg.text.hidden, cfg.text.hidden);
    newline = src.get(root + "image_newline", {T});
    // The lm_head: its own tensor when the file has one, else tied to the embeddings.
    LlamaConfig tc = cfg.text;
    tc.tie_embeddings = st.find(head) == nullptr;
    lm = std::make_unique<LlamaModel>(LlamaModel::load(st, tc, text, head, weights_id));
  }

  std::vector<float> features(const LlavaOnevisionTiles& t) const {
    const LlavaFeatureLayout L = llava_onevision_layout(cfg, t.height, t.width);
    const int expected_tiles = 1 + (L.grid_rows / (cfg.image_size / cfg.patch)) *
                                       (L.grid_cols / (cfg.image_size / cfg.patch));
    if (t.count != expected_tiles || t.size != cfg.image_size) {
      throw UsageError("llava-onevision: " + std::to_string(t.count) + " tiles of " +
                       std::to_string(t.size) + " pixels where the layout needs " +
                       std::to_string(expected_tiles) + " of " + std::to_string(cfg.image_size));
    }
    const std::vector<float> states = vision.forward(t.pixels, t.count);
    const int rows = t.count * vision.patches();
    std::vector<float> hidden(static_cast<std::size_t>(rows) * cfg.text.hidden);
    linear_1.forward(states.data(), rows, hidden.data());
    std::vector<float> projected(hidden.size());
    linear_2.forward(hidden.data(), rows, projected.data());
    return pack_features(cfg, L, projected, newline, cfg.text.hidden);
  }

  std::vector<int> prefix_ids(const LlavaOnevisionTiles& t) const {
    const int n = llava_onevision_processor_tokens(cfg, t.height, t.width);
    std::string images;
    for (int i = 0; i < n; ++i)
      images += "<image>";
    // The processor tokenises the whole prompt: the post_processor's prefix (none for Qwen2)
    // starts it; the text after the last <image> goes with the question (question_ids).
    std::vector<int> ids = tok->special_prefix();
    const std::vector<int> text = tok->encode("<|im_start|>user" + chat.role_sep + images, false);
    ids.insert(ids.end(), text.begin(), text.end());
    return ids;
  }

  KvCache image_prefix(const LlavaOnevisionTiles& t) const {
    const std::vector<float> f = features(t);
    const std::size_t produced = f.size() / static_cast<std::size_t>(cfg.text.hidden);
    const int inserted = llava_onevision_processor_tokens(cfg, t.height, t.width);
    if (static_cast<std::size_t>(inserted) != produced) {
      throw InputError({"config.json", 0, ""},
                       "for a " + std::to_string(t.width) + " x " + std::to_string(t.height) +
                           " image the processor inserts " + std::to_string(inserted) +
                           " <image> tokens but the model packs " + std::to_string(produced) +
                           " features (transformers refuses this image too)");
    }
    return detail::run_image_prefix(*lm, prefix_ids(t), cfg.image_token_id, f, "tokenizer.json");
  }

  KvCache image_prefix(const DecodedImage& image) const {
    return image_prefix(llava_onevision_preprocess(image, cfg.preprocess));
  }

  std::vector<int> question_ids(const std::string& caption) const {
    const std::string rest = chat.image.substr(std::string("<image>").size());
    std::vector<int> ids =
        tok->encode(rest + chat.before_text + vqascore_question(options.question, caption) +
                        chat.turn_end + chat.generation,
                    false);
    ids.insert(ids.end(), tok->special_suffix().begin(), tok->special_suffix().end());
    return ids;
  }

  std::vector<std::vector<int>> all_question_ids(const std::vector<std::string>& captions) const {
    std::vector<std::vector<int>> ids;
    for (const auto& c : captions)
      ids.push_back(question_ids(c));
    return ids;
  }

  std::vector<double> answer_probabilities(const KvCache& cache,
                                           const std::vector<std::string>& captions) const {
    return detail::continuation_probabilities(*lm, cache, all_question_ids(captions), answer);
  }
};

LlavaOnevisionModel::LlavaOnevisionModel() : impl_(std::make_unique<Impl>()) {}
LlavaOnevisionModel::LlavaOnevisionModel(LlavaOnevisionModel&&) noexcept = default;
LlavaOnevisionModel& LlavaOnevisionModel::operator=(LlavaOnevisionModel&&) noexcept = default;
LlavaOnevisionModel::~LlavaOnevisionModel() = default;

LlavaOnevisionModel LlavaOnevisionModel::load(const fs::path& dir, const VqaScoreOptions& options) {
  LlavaOnevisionModel m;
  Impl& I = *m.impl_;
  I.cfg = load_llava_onevision_config(dir);
  I.options = options;
  I.tok = std::make_unique<HfTokenizer>(HfTokenizer::from_file(dir / "tokenizer.json"));
  I.chat = chat_prompt(dir);
  detail::check_added_tokens(*I.tok, dir, {"<image>", "<|im_start|>", "<|im_end|>"},
                             I.cfg.image_token_id, "image_token_index");
  I.answer = detail::answer_token(*I.tok, options.answer);
  detail::load_checkpoint_weights(dir, "LLaVA-OneVision", *I.tok, I.cfg.text.vocab_size,
                                  [&](const SafeTensors& st, const std::string& id) {
                                    I.weights_id = id;
                                    I.load(st);
                                  });
  return m;
}

const LlavaOnevisionConfig& LlavaOnevisionModel::config() const {
  return impl_->cfg;
}
const HfTokenizer& LlavaOnevisionModel::tokenizer() const {
  return *impl_->tok;
}
const LlamaModel& LlavaOnevisionModel::text_model() const {
  return *impl_->lm;
}
const std::string& LlavaOnevisionModel::weights_id() const {
  return impl_->weights_id;
}
const VqaScoreOptions& LlavaOnevisionModel::options() const {
  return impl_->options;
}
int LlavaOnevisionModel::answer_id() const {
  return impl_->answer;
}
std::vector<float> LlavaOnevisionModel::image_features(const LlavaOnevisionTiles& tiles) const {
  return impl_->features(tiles);
}
std::vector<int> LlavaOnevisionModel::prefix_ids(const LlavaOnevisionTiles& tiles) const {
  return impl_->prefix_ids(tiles);
}
std::vector<int> LlavaOnevisionModel::question_ids(const std::string& caption) const {
  return impl_->question_ids(caption);
}
KvCache LlavaOnevisionModel::image_prefix(const LlavaOnevisionTiles& tiles) const {
  return impl_->image_prefix(tiles);
}
KvCache LlavaOnevisionModel::image_prefix(const DecodedImage& image) const {
  return impl_->image_prefix(image);
}
std::vector<double> LlavaOnevisionModel::answer_probabilities(
    const KvCache& prefix, const std::vector<std::string>& captions) const {
  return impl_->answer_probabilities(prefix, captions);
}
std::vector<float> LlavaOnevisionModel::answer_logits(
    const KvCache& prefix, const std::vector<std::string>& captions) const {
  return detail::continuation_logits(*impl_->lm, prefix, impl_->all_question_ids(captions));
}

}  // namespace winokit
