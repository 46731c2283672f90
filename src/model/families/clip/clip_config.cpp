#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "winokit/io/safetensors.hpp"

#include "model/families/clip/clip_model.hpp"
#include "winokit/core/error.hpp"
#include "winokit/io/files.hpp"

namespace winokit {

namespace fs = std::filesystem;
using nlohmann::json;

const char* to_string(CheckpointLayout layout) {
  return layout == CheckpointLayout::HuggingFace ? "huggingface" : "openclip";
}
namespace {
// Multiply-adds of openai/CLIP's ModifiedResNet on one image (convolutions and the attention
// pool; pooling and BatchNorm, folded into the convolutions, are not counted).
double resnet_macs(const ClipConfig& c) {
  double macs = 0;
  auto conv = [&](double in, double out, double k, double side) {
    macs += in * out * k * k * side * side;
  };
  const double w = c.vision.width;
  double side = c.image_size / 2.0;
  conv(3, w / 2, 3, side);
  conv(w / 2, w / 2, 3, side);
  conv(w / 2, w, 3, side);
  side /= 2;
  double inplanes = w;
  for (int stage = 0; stage < 4; ++stage) {
    const double planes = w * (1 << stage);
    for (int b = 0; b < c.resnet_layers[static_cast<std::size_t>(stage)]; ++b) {
      const int stride = (b == 0 && stage > 0) ? 2 : 1;
      conv(inplanes, planes, 1, side);
      conv(planes, planes, 3, side);
      const double out_side = side / stride;
      conv(planes, planes * 4, 1, out_side);
      if (stride > 1 || inplanes != planes * 4) conv(inplanes, planes * 4, 1, out_side);
      inplanes = planes * 4;
      side = out_side;
    }
  }
  const double t = side * side + 1, e = inplanes;
  macs += e * e + 2 * t * e * e + 2 * t * e + e * c.embed_dim;  // q, k, v, scores/values, c_proj
  return macs;
}
}  // namespace

double ClipConfig::vision_gflop() const {
  if (vision_arch == VisionArch::ResNet) return 2.0 * resnet_macs(*this) / 1e9;
  const double t = vision_tokens(), w = vision.width, m = vision.mlp;
  const double patch_in = 3.0 * patch * patch;
  double macs = (t - 1) * patch_in * w;                               // patch embedding
  macs += vision.layers * (t * w * 3 * w + t * w * w + 2 * t * w * m  // qkv, out, mlp
                           + 2 * t * t * w);                          // scores and weighted sum
  macs += w * embed_dim;
  return 2.0 * macs / 1e9;
}

namespace {

// Image sides beyond this are not models (RN50x64 uses 448, ViT-L/14@336px 336).
constexpr std::int64_t kMaxImageSize = 4096;
// openai/CLIP's ModifiedResNet: stem (/4) and three strided stages (/8): an output stride of 32.
constexpr int kResNetStride = 32;

json read_json(const fs::path& path) {
  try {
    json doc = json::parse(read_file(path));
    if (!doc.is_object()) throw InputError({path.string(), 0, ""}, "expected a JSON object");
    return doc;
  } catch (const json::parse_error& e) {
    throw InputError({path.string(), 0, ""}, std::string("malformed JSON: ") + e.what());
  } catch (const json::exception& e) {
    // out_of_range.406: a number beyond a double ("layer_norm_eps": 1e705; found by fuzz_config).
    throw InputError({path.string(), 0, ""}, std::string("number out of range: ") + e.what());
  }
}

template <typename T>
T field(const json& obj, const char* name, T fallback, const fs::path& file) {
  auto it = obj.find(name);
  if (it == obj.end() || it->is_null()) return fallback;
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    throw InputError({file.string(), 0, name}, std::string("unexpected type ") + it->type_name());
  }
}

// A per-channel triple (image_mean, image_std): three numbers, or one number for all three.
std::array<float, 3> channel_field(const json& obj, const char* name, std::array<float, 3> fallback,
                                   const fs::path& file) {
  auto it = obj.find(name);
  if (it == obj.end() || it->is_null()) return fallback;
  if (it->is_number()) {
    fallback.fill(it->get<float>());
    return fallback;
  }
  if (!it->is_array() || it->size() != 3 ||
      !std::all_of(it->begin(), it->end(), [](const json& v) { return v.is_number(); })) {
    throw InputError({file.string(), 0, name},
                     "3 values expected (one per RGB channel), got " + it->dump());
  }
  for (std::size_t k = 0; k < 3; ++k)
    fallback[k] = (*it)[k].get<float>();
  return fallback;
}

// Sizes far beyond any real model (and small enough that products of two stay in int64 and
// tensor element counts in size_t): a bigger value is a broken file, not a model.
constexpr std::int64_t kMaxSize = 1 << 20;

// A size field: an integer in [1, max] (a JSON float such as 64.5, a negative number or one
// past 2^63 are refused; they would otherwise be truncated or wrap).
int size_field(const json& obj, const char* name, int fallback, const fs::path& file,
               const std::string& section, std::int64_t max = kMaxSize) {
  auto it = obj.find(name);
  if (it == obj.end() || it->is_null()) return fallback;
  const std::string where = section.empty() ? name : section + "." + name;
  const std::string got = it->dump();
  if (!it->is_number_integer() || it->is_number_float()) {
    throw InputError({file.string(), 0, where},
                     "expected a positive integer, got " + got +
                         (it->is_number_float() ? " (not an integer, or out of range)" : ""));
  }
  const bool in_range = it->is_number_unsigned()
                            ? it->get<std::uint64_t>() <= static_cast<std::uint64_t>(max) &&
                                  it->get<std::uint64_t>() >= 1
                            : it->get<std::int64_t>() >= 1 && it->get<std::int64_t>() <= max;
  if (!in_range) {
    throw InputError({file.string(), 0, where},
                     "expected an integer from 1 to " + std::to_string(max) + ", got " + got);
  }
  return static_cast<int>(it->get<std::int64_t>());
}

// A positive finite real (layer_norm_eps, mlp_ratio).
double positive_field(const json& obj, const char* name, double fallback, const fs::path& file,
                      const std::string& section, bool zero_allowed = false) {
  auto it = obj.find(name);
  if (it == obj.end() || it->is_null()) return fallback;
  const std::string where = section.empty() ? name : section + "." + name;
  if (!it->is_number()) {
    throw InputError({file.string(), 0, where}, "expected a number, got " + it->dump());
  }
  const double v = it->get<double>();
  if (!std::isfinite(v) || v < 0 || (v == 0 && !zero_allowed) || v > kMaxSize) {
    throw InputError({file.string(), 0, where}, std::string("expected a ") +
                                                    (zero_allowed ? "non-negative" : "positive") +
                                                    " finite number, got " + it->dump());
  }
  return v;
}

Activation activation(const std::string& name, const fs::path& file, const char* field_name) {
  if (name == "quick_gelu") return Activation::QuickGelu;
  if (name == "gelu") return Activation::Gelu;
  throw InputError({file.string(), 0, field_name}, "unsupported activation '" + name + "'",
                   "quick_gelu and gelu are supported");
}

void check_heads(const TowerConfig& t, const fs::path& file, const char* tower) {
  if (t.width <= 0 || t.layers <= 0 || t.heads <= 0 || t.mlp <= 0 || t.width % t.heads != 0) {
    throw InputError({file.string(), 0, tower},
                     "inconsistent sizes: width " + std::to_string(t.width) + ", heads " +
                         std::to_string(t.heads) + ", layers " + std::to_string(t.layers));
  }
}

ClipConfig load_hf(const fs::path& dir) {
  const fs::path file = dir / "config.json";
  json cfg = read_json(file);
  ClipConfig c;
  c.layout = CheckpointLayout::HuggingFace;
  // Defaults are those of transformers' CLIPTextConfig / CLIPVisionConfig.
  // Older configs keep the towers under text_config_dict / vision_config_dict.
  auto tower = [&](const char* key, const char* legacy) {
    for (const char* k : {key, legacy}) {
      auto it = cfg.find(k);
      if (it != cfg.end() && it->is_object() && !it->empty()) return *it;
    }
    return json::object();
  };
  json tc = tower("text_config", "text_config_dict");
  json vc = tower("vision_config", "vision_config_dict");
  const std::string ts = "text_config", vs = "vision_config";
  c.text.width = size_field(tc, "hidden_size", 512, file, ts);
  c.text.mlp = size_field(tc, "intermediate_size", 2048, file, ts);
  c.text.heads = size_field(tc, "num_attention_heads", 8, file, ts);
  c.text.layers = size_field(tc, "num_hidden_layers", 12, file, ts);
  c.text.eps = positive_field(tc, "layer_norm_eps", 1e-5, file, ts);
  c.text.act = activation(field<std::string>(tc, "hidden_act", "quick_gelu", file), file,
                          "text_config.hidden_act");
  c.context_length = size_field(tc, "max_position_embeddings", 77, file, ts);
  c.vocab_size = size_field(tc, "vocab_size", 49408, file, ts);
  c.vision.width = size_field(vc, "hidden_size", 768, file, vs);
  c.vision.mlp = size_field(vc, "intermediate_size", 3072, file, vs);
  c.vision.heads = size_field(vc, "num_attention_heads", 12, file, vs);
  c.vision.layers = size_field(vc, "num_hidden_layers", 12, file, vs);
  c.vision.eps = positive_field(vc, "layer_norm_eps", 1e-5, file, vs);
  c.vision.act = activation(field<std::string>(vc, "hidden_act", "quick_gelu", file), file,
                            "vision_config.hidden_act");
  c.image_size = size_field(vc, "image_size", 224, file, vs, kMaxImageSize);
  c.patch = size_field(vc, "patch_size", 32, file, vs, c.image_size);
  c.embed_dim = size_field(cfg, "projection_dim", 512, file, "");
  check_heads(c.text, file, "text_config");
  check_heads(c.vision, file, "vision_config");
  c.preprocess.pipeline = PreprocessPipeline::Hf;
  c.preprocess.resize = c.preprocess.crop = c.image_size;
  const fs::path pp = dir / "preprocessor_config.json";
  if (fs::is_regular_file(pp)) {
    json p = read_json(pp);
    if (auto size = p.find("size"); size != p.end()) {
      c.preprocess.resize =
          size->is_number()
              ? size_field(p, "size", c.image_size, pp, "", kMaxImageSize)
              : size_field(*size, "shortest_edge", c.image_size, pp, "size", kMaxImageSize);
    }
    if (auto crop = p.find("crop_size"); crop != p.end()) {
      c.preprocess.crop = crop->is_number()
                              ? size_field(p, "crop_size", 224, pp, "", kMaxImageSize)
                              : size_field(*crop, "height", 224, pp, "crop_size", kMaxImageSize);
    }
    c.preprocess.mean = channel_field(p, "image_mean", c.preprocess.mean, pp);
    c.preprocess.std = channel_field(p, "image_std", c.preprocess.std, pp);
    int resample = field(p, "resample", 3, pp);
    if (resample != 3) {
      throw InputError({pp.string(), 0, "resample"}, "only PIL bicubic (3) is supported");
    }
  }
  return c;
}

ClipConfig load_openclip(const fs::path& dir) {
  const fs::path file = dir / "open_clip_config.json";
  json cfg = read_json(file);
  json model = cfg.value("model_cfg", cfg);
  ClipConfig c;
  c.layout = CheckpointLayout::OpenClip;
  c.embed_dim = size_field(model, "embed_dim", 512, file, "");
  Activation act =
      field(model, "quick_gelu", false, file) ? Activation::QuickGelu : Activation::Gelu;
  json vc = model.value("vision_cfg", json::object());
  json tc = model.value("text_cfg", json::object());
  const std::string vs = "vision_cfg", ts = "text_cfg";
  for (const char* unsupported : {"attentional_pool", "ls_init_value", "no_ln_pre",
                                  "final_ln_after_pool", "timm_model_name", "hf_model_name"}) {
    for (const json* part : {&vc, &tc}) {
      auto it = part->find(unsupported);
      if (it != part->end() && !it->is_null() && *it != false) {
        throw InputError({file.string(), 0, unsupported}, "this OpenCLIP variant is not supported",
                         "standard ViT CLIP towers are");
      }
    }
  }
  c.image_size = size_field(vc, "image_size", 224, file, vs, kMaxImageSize);
  const int head_width = size_field(vc, "head_width", 64, file, vs);
  if (auto layers = vc.find("layers"); layers != vc.end() && layers->is_array()) {
    // A ModifiedResNet (OpenCLIP's RN50 / RN101 / RN50x4 ... configs): Bottlenecks per stage.
    if (layers->size() != 4) {
      throw InputError({file.string(), 0, "vision_cfg.layers"},
                       "expected 4 stages, got " + std::to_string(layers->size()));
    }
    c.vision_arch = VisionArch::ResNet;
    c.vision.layers = 0;
    for (std::size_t s = 0; s < 4; ++s) {
      json stage = {{"layers", (*layers)[s]}};
      c.resnet_layers[s] = size_field(stage, "layers", 1, file, vs);
      c.vision.layers += c.resnet_layers[s];
    }
    c.vision.width = size_field(vc, "width", 64, file, vs);
    c.vision.heads = c.vision.width * 32 / head_width;
    c.vision.mlp = 0;
    c.patch = kResNetStride;
    if (c.image_size % kResNetStride != 0 || c.vision.heads <= 0 ||
        (c.vision.width * 32) % c.vision.heads != 0) {
      throw InputError({file.string(), 0, "vision_cfg"},
                       "a ResNet tower needs image_size a multiple of 32 and width * 32 divisible "
                       "by the heads (width * 32 / head_width)");
    }
  } else {
    c.patch = size_field(vc, "patch_size", 16, file, vs, c.image_size);
    c.vision.width = size_field(vc, "width", 768, file, vs);
    c.vision.layers = size_field(vc, "layers", 12, file, vs);
    c.vision.heads = c.vision.width / head_width;
    c.vision.mlp =
        static_cast<int>(c.vision.width * positive_field(vc, "mlp_ratio", 4.0, file, vs));
  }
  c.vision.act = act;
  c.text.width = size_field(tc, "width", 512, file, ts);
  c.text.layers = size_field(tc, "layers", 12, file, ts);
  c.text.heads = size_field(tc, "heads", 8, file, ts);
  c.text.mlp = static_cast<int>(c.text.width * positive_field(tc, "mlp_ratio", 4.0, file, ts));
  c.text.act = act;
  c.context_length = size_field(tc, "context_length", 77, file, ts);
  c.vocab_size = size_field(tc, "vocab_size", 49408, file, ts);
  check_heads(c.text, file, "text_cfg");
  if (c.vision_arch == VisionArch::Vit) check_heads(c.vision, file, "vision_cfg");
  c.preprocess.pipeline = PreprocessPipeline::OpenAi;
  c.preprocess.resize = c.preprocess.crop = c.image_size;
  json pp = cfg.value("preprocess_cfg", json::object());
  c.preprocess.mean = field(pp, "mean", c.preprocess.mean, file);
  c.preprocess.std = field(pp, "std", c.preprocess.std, file);
  std::string interpolation = field<std::string>(pp, "interpolation", "bicubic", file);
  std::string resize_mode = field<std::string>(pp, "resize_mode", "shortest", file);
  if (interpolation != "bicubic" || resize_mode != "shortest") {
    throw InputError({file.string(), 0, "preprocess_cfg"},
                     "only bicubic resizing of the shortest edge is supported");
  }
  return c;
}

}  // namespace

ClipConfig infer_openai_config(const std::map<std::string, std::vector<std::int64_t>>& shapes,
                               const std::string& source) {
  auto shape = [&](const std::string& name, std::size_t rank) -> const std::vector<std::int64_t>& {
    auto it = shapes.find(name);
    if (it == shapes.end()) {
      throw InputError({source, 0, name}, "missing tensor",
                       "an openai/CLIP checkpoint (RN50.pt, ViT-B-32.pt, ...) is expected");
    }
    if (it->second.size() != rank) {
      throw InputError({source, 0, name}, "expected " + std::to_string(rank) +
                                              " dimensions, found " + shape_text(it->second));
    }
    for (auto d : it->second) {
      if (d < 1 || d > kMaxSize) {
        throw InputError({source, 0, name}, "implausible shape " + shape_text(it->second));
      }
    }
    return it->second;
  };
  // Distinct values of the name part after `prefix` (block indices), as build_model counts them.
  auto count_blocks = [&](const std::string& prefix) {
    std::set<std::string> ids;
    for (const auto& [name, s] : shapes) {
      if (name.rfind(prefix, 0) != 0) continue;
      ids.insert(name.substr(prefix.size(), name.find('.', prefix.size()) - prefix.size()));
    }
    return static_cast<int>(ids.size());
  };
  auto side_of = [&](std::int64_t tokens) {
    const int grid = static_cast<int>(std::lround(std::sqrt(static_cast<double>(tokens - 1))));
    if (static_cast<std::int64_t>(grid) * grid + 1 != tokens) {
      throw InputError({source, 0, "positional_embedding"},
                       "token count " + std::to_string(tokens) + " is not a square grid plus one");
    }
    return grid;
  };
  ClipConfig c;
  c.layout = CheckpointLayout::OpenClip;  // openai/CLIP's names
  c.preprocess.pipeline = PreprocessPipeline::OpenAi;
  // The image tower (openai/CLIP build_model).
  if (shapes.count("visual.proj") != 0) {
    c.vision_arch = VisionArch::Vit;
    const auto& conv = shape("visual.conv1.weight", 4);
    c.vision.width = static_cast<int>(conv[0]);
    c.patch = static_cast<int>(conv[3]);
    int layers = 0;
    for (const auto& [name, s] : shapes) {
      if (name.rfind("visual.", 0) == 0 && name.size() > 20 &&
          name.compare(name.size() - 20, 20, ".attn.in_proj_weight") == 0)
        ++layers;
    }
    c.vision.layers = layers;
    c.image_size = c.patch * side_of(shape("visual.positional_embedding", 2)[0]);
    c.vision.heads = c.vision.width / 64;
    c.vision.mlp = 4 * c.vision.width;
  } else {
    c.vision_arch = VisionArch::ResNet;
    c.vision.layers = 0;
    for (int s = 0; s < 4; ++s) {
      c.resnet_layers[static_cast<std::size_t>(s)] =
          count_blocks("visual.layer" + std::to_string(s + 1) + ".");
      c.vision.layers += c.resnet_layers[static_cast<std::size_t>(s)];
    }
    c.vision.width = static_cast<int>(shape("visual.layer1.0.conv1.weight", 4)[0]);
    c.image_size = kResNetStride * side_of(shape("visual.attnpool.positional_embedding", 2)[0]);
    c.vision.heads = c.vision.width * 32 / 64;
    c.patch = kResNetStride;
  }
  c.vision.act = c.text.act = Activation::QuickGelu;
  c.embed_dim = static_cast<int>(shape("text_projection", 2)[1]);
  c.context_length = static_cast<int>(shape("positional_embedding", 2)[0]);
  c.vocab_size = static_cast<int>(shape("token_embedding.weight", 2)[0]);
  c.text.width = static_cast<int>(shape("ln_final.weight", 1)[0]);
  c.text.heads = c.text.width / 64;
  c.text.layers = count_blocks("transformer.resblocks.");
  c.text.mlp = 4 * c.text.width;
  const fs::path file(source);
  check_heads(c.text, file, "text tower");
  if (c.vision_arch == VisionArch::Vit) {
    check_heads(c.vision, file, "image tower");
  } else if (c.vision.heads <= 0 || std::count(c.resnet_layers.begin(), c.resnet_layers.end(), 0)) {
    throw InputError({source, 0, "visual"}, "incomplete ResNet image tower");
  }
  c.preprocess.resize = c.preprocess.crop = c.image_size;
  return c;
}

ClipConfig load_clip_config(const fs::path& dir) {
  if (!fs::is_directory(dir)) {
    throw IoError(dir.string() + ": not a checkpoint directory",
                  "pass a Hugging Face or OpenCLIP checkpoint folder with --model");
  }
  try {
    if (fs::is_regular_file(dir / "open_clip_config.json")) return load_openclip(dir);
    if (fs::is_regular_file(dir / "config.json")) return load_hf(dir);
  } catch (const json::exception& e) {
    // A value of the wrong JSON type where an object or number is expected (found by
    // fuzz_config: a config that is a bare number).
    throw InputError({dir.string(), 0, ""},
                     std::string("unexpected config structure: ") + e.what());
  }
  throw IoError(
      dir.string() + ": no config.json (Hugging Face) or open_clip_config.json (OpenCLIP)",
      "pass a CLIP checkpoint folder with --model");
}

ClipConfig vit_b32_config() {
  ClipConfig c;
  c.vision = {768, 12, 12, 3072, 1e-5, Activation::QuickGelu};
  c.text = {512, 12, 8, 2048, 1e-5, Activation::QuickGelu};
  c.patch = 32;
  c.image_size = 224;
  c.embed_dim = 512;
  return c;
}

}  // namespace winokit
