#include <nlohmann/json.hpp>

#include "winokit/clip.hpp"
#include "winokit/error.hpp"
#include "winokit/files.hpp"

namespace winokit {

namespace fs = std::filesystem;
using nlohmann::json;

const char* to_string(CheckpointLayout layout) {
  return layout == CheckpointLayout::HuggingFace ? "huggingface" : "openclip";
}
const char* to_string(PreprocessPipeline p) {
  return p == PreprocessPipeline::Hf ? "hf" : "openai";
}

nlohmann::json PreprocessConfig::to_json() const {
  return {{"pipeline", to_string(pipeline)},
          {"resize_shortest_edge", resize},
          {"crop", crop},
          {"mean", mean},
          {"std", std},
          {"resample", "PIL bicubic"}};
}

double ClipConfig::vision_gflop() const {
  const double t = vision_tokens(), w = vision.width, m = vision.mlp;
  const double patch_in = 3.0 * patch * patch;
  double macs = (t - 1) * patch_in * w;                               // patch embedding
  macs += vision.layers * (t * w * 3 * w + t * w * w + 2 * t * w * m  // qkv, out, mlp
                           + 2 * t * t * w);                          // scores and weighted sum
  macs += w * embed_dim;
  return 2.0 * macs / 1e9;
}

namespace {

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
  c.text.width = field(tc, "hidden_size", 512, file);
  c.text.mlp = field(tc, "intermediate_size", 2048, file);
  c.text.heads = field(tc, "num_attention_heads", 8, file);
  c.text.layers = field(tc, "num_hidden_layers", 12, file);
  c.text.eps = field(tc, "layer_norm_eps", 1e-5, file);
  c.text.act = activation(field<std::string>(tc, "hidden_act", "quick_gelu", file), file,
                          "text_config.hidden_act");
  c.context_length = field(tc, "max_position_embeddings", 77, file);
  c.vocab_size = field(tc, "vocab_size", 49408, file);
  c.vision.width = field(vc, "hidden_size", 768, file);
  c.vision.mlp = field(vc, "intermediate_size", 3072, file);
  c.vision.heads = field(vc, "num_attention_heads", 12, file);
  c.vision.layers = field(vc, "num_hidden_layers", 12, file);
  c.vision.eps = field(vc, "layer_norm_eps", 1e-5, file);
  c.vision.act = activation(field<std::string>(vc, "hidden_act", "quick_gelu", file), file,
                            "vision_config.hidden_act");
  c.patch = field(vc, "patch_size", 32, file);
  c.image_size = field(vc, "image_size", 224, file);
  c.embed_dim = field(cfg, "projection_dim", 512, file);
  check_heads(c.text, file, "text_config");
  check_heads(c.vision, file, "vision_config");
  c.preprocess.pipeline = PreprocessPipeline::Hf;
  c.preprocess.resize = c.preprocess.crop = c.image_size;
  const fs::path pp = dir / "preprocessor_config.json";
  if (fs::is_regular_file(pp)) {
    json p = read_json(pp);
    if (auto size = p.find("size"); size != p.end()) {
      c.preprocess.resize =
          size->is_number() ? size->get<int>() : field(*size, "shortest_edge", c.image_size, pp);
    }
    if (auto crop = p.find("crop_size"); crop != p.end()) {
      c.preprocess.crop = crop->is_number() ? crop->get<int>() : field(*crop, "height", 224, pp);
    }
    c.preprocess.mean = field(p, "image_mean", c.preprocess.mean, pp);
    c.preprocess.std = field(p, "image_std", c.preprocess.std, pp);
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
  c.embed_dim = field(model, "embed_dim", 512, file);
  Activation act =
      field(model, "quick_gelu", false, file) ? Activation::QuickGelu : Activation::Gelu;
  json vc = model.value("vision_cfg", json::object());
  json tc = model.value("text_cfg", json::object());
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
  c.image_size = field(vc, "image_size", 224, file);
  c.patch = field(vc, "patch_size", 16, file);
  c.vision.width = field(vc, "width", 768, file);
  c.vision.layers = field(vc, "layers", 12, file);
  const int head_width = field(vc, "head_width", 64, file);
  c.vision.heads = head_width > 0 ? c.vision.width / head_width : 0;
  c.vision.mlp = static_cast<int>(c.vision.width * field(vc, "mlp_ratio", 4.0, file));
  c.vision.act = act;
  c.text.width = field(tc, "width", 512, file);
  c.text.layers = field(tc, "layers", 12, file);
  c.text.heads = field(tc, "heads", 8, file);
  c.text.mlp = static_cast<int>(c.text.width * field(tc, "mlp_ratio", 4.0, file));
  c.text.act = act;
  c.context_length = field(tc, "context_length", 77, file);
  c.vocab_size = field(tc, "vocab_size", 49408, file);
  check_heads(c.text, file, "text_cfg");
  check_heads(c.vision, file, "vision_cfg");
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
