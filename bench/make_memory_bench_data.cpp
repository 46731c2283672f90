// Makes the inputs of bench/run_memory_bench.sh: a Winoground-layout dataset of N examples (2N
// photo-like 1920x1280 JPEGs, as bench_clip_e2e makes them) and a ViT-B/32-shaped CLIP checkpoint
// folder in the Hugging Face layout with seeded random float32 weights (config.json,
// preprocessor_config.json, model.safetensors, and the real CLIP tokenizer files copied from
// ../shared/golden/clip/vocab). The safetensors file is written tensor by tensor, so the
// generator never holds the 605 MB of weights at once. Existing outputs are kept.
//
//   build/bench/make_memory_bench_data --out /tmp/winokit-mem [--examples 400]
#include <cstddef>
#include <cstdio>

#include <jpeglib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "winokit/core/rng.hpp"
#include "winokit/io/files.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr int kImageWidth = 1920;
constexpr int kImageHeight = 1280;
constexpr int kJpegQuality = 90;

// A photo-like image: smooth colour fields, edges and sensor noise.
std::string photo_jpeg(int w, int h, std::uint64_t seed) {
  winokit::Rng rng(seed);
  std::vector<unsigned char> rgb(static_cast<std::size_t>(w) * h * 3);
  const double fx = 2 + rng.uniform() * 6, fy = 2 + rng.uniform() * 6, phase = rng.uniform() * 6.28;
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const double u = static_cast<double>(x) / w, v = static_cast<double>(y) / h;
      for (int c = 0; c < 3; ++c) {
        double val = 128 + 90 * std::sin(fx * u * (c + 1) + phase) * std::cos(fy * v + c) +
                     (((x / 97) + (y / 61)) % 2 ? 20 : -20) + (rng.uniform() - 0.5) * 24;
        rgb[(static_cast<std::size_t>(y) * w + x) * 3 + c] =
            static_cast<unsigned char>(std::clamp(val, 0.0, 255.0));
      }
    }
  }
  jpeg_compress_struct cinfo{};
  jpeg_error_mgr jerr{};
  cinfo.err = jpeg_std_error(&jerr);
  jpeg_create_compress(&cinfo);
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&cinfo, &buffer, &size);
  cinfo.image_width = static_cast<JDIMENSION>(w);
  cinfo.image_height = static_cast<JDIMENSION>(h);
  cinfo.input_components = 3;
  cinfo.in_color_space = JCS_RGB;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, kJpegQuality, TRUE);
  jpeg_start_compress(&cinfo, TRUE);
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW row = &rgb[static_cast<std::size_t>(cinfo.next_scanline) * w * 3];
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  std::string out(reinterpret_cast<char*>(buffer), size);
  jpeg_destroy_compress(&cinfo);
  std::free(buffer);
  return out;
}

void make_dataset(const fs::path& data, int examples) {
  if (fs::exists(data / "examples.jsonl")) return;
  static const char* kCaptions[][2] = {
      {"an old person kisses a young person", "a young person kisses an old person"},
      {"there is a mug in some grass", "there is some grass in a mug"},
      {"the person with the ponytail buys stuff and the other packs it",
       "the person with the ponytail packs stuff and the other buys it"}};
  fs::create_directories(data / "images");
  std::string jsonl;
  for (int i = 0; i < examples; ++i) {
    for (int k = 0; k < 2; ++k) {
      winokit::write_file_atomic(
          data / "images" / ("ex_" + std::to_string(i) + "_img_" + std::to_string(k) + ".jpg"),
          photo_jpeg(kImageWidth, kImageHeight, static_cast<std::uint64_t>(i * 2 + k)), false);
    }
    const auto& c = kCaptions[i % 3];
    json line = {{"id", i},
                 {"caption_0", std::string(c[0]) + " " + std::to_string(i)},
                 {"caption_1", std::string(c[1]) + " " + std::to_string(i)},
                 {"image_0", "ex_" + std::to_string(i) + "_img_0"},
                 {"image_1", "ex_" + std::to_string(i) + "_img_1"}};
    jsonl += line.dump() + "\n";
  }
  winokit::write_file_atomic(data / "examples.jsonl", jsonl);
}

struct Spec {
  std::string name;
  std::vector<std::int64_t> shape;
};

// openai/clip-vit-base-patch32's tensors, Hugging Face names.
std::vector<Spec> vit_b32_tensors() {
  constexpr std::int64_t kVision = 768, kVisionMlp = 3072, kText = 512, kTextMlp = 2048;
  constexpr std::int64_t kEmbed = 512, kPatch = 32, kVisionTokens = 50, kContext = 77;
  constexpr std::int64_t kVocab = 49408;
  constexpr int kLayers = 12;
  std::vector<Spec> s = {
      {"logit_scale", {}},
      {"text_projection.weight", {kEmbed, kText}},
      {"visual_projection.weight", {kEmbed, kVision}},
      {"vision_model.embeddings.class_embedding", {kVision}},
      {"vision_model.embeddings.patch_embedding.weight", {kVision, 3, kPatch, kPatch}},
      {"vision_model.embeddings.position_embedding.weight", {kVisionTokens, kVision}},
      {"vision_model.pre_layrnorm.weight", {kVision}},
      {"vision_model.pre_layrnorm.bias", {kVision}},
      {"vision_model.post_layernorm.weight", {kVision}},
      {"vision_model.post_layernorm.bias", {kVision}},
      {"text_model.embeddings.token_embedding.weight", {kVocab, kText}},
      {"text_model.embeddings.position_embedding.weight", {kContext, kText}},
      {"text_model.final_layer_norm.weight", {kText}},
      {"text_model.final_layer_norm.bias", {kText}},
  };
  for (auto [tower, w, m] : {std::tuple{"vision_model", kVision, kVisionMlp},
                             std::tuple{"text_model", kText, kTextMlp}}) {
    for (int i = 0; i < kLayers; ++i) {
      const std::string p = std::string(tower) + ".encoder.layers." + std::to_string(i) + ".";
      for (const char* ln : {"layer_norm1", "layer_norm2"}) {
        s.push_back({p + ln + ".weight", {w}});
        s.push_back({p + ln + ".bias", {w}});
      }
      for (const char* proj : {"q_proj", "k_proj", "v_proj", "out_proj"}) {
        s.push_back({p + "self_attn." + proj + ".weight", {w, w}});
        s.push_back({p + "self_attn." + proj + ".bias", {w}});
      }
      s.push_back({p + "mlp.fc1.weight", {m, w}});
      s.push_back({p + "mlp.fc1.bias", {m}});
      s.push_back({p + "mlp.fc2.weight", {w, m}});
      s.push_back({p + "mlp.fc2.bias", {w}});
    }
  }
  std::sort(s.begin(), s.end(), [](const Spec& a, const Spec& b) { return a.name < b.name; });
  return s;
}

std::int64_t numel(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (auto d : shape)
    n *= d;
  return n;
}

void write_weights(const fs::path& file) {
  const auto specs = vit_b32_tensors();
  json header = json::object();
  std::size_t offset = 0;
  for (const auto& t : specs) {
    const std::size_t bytes = static_cast<std::size_t>(numel(t.shape)) * sizeof(float);
    header[t.name] = {
        {"dtype", "F32"}, {"shape", t.shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  header["__metadata__"] = {{"format", "pt"}};
  std::string h = header.dump();
  while ((8 + h.size()) % 8 != 0)
    h.push_back(' ');
  const fs::path tmp = file.string() + ".tmp";
  std::ofstream out(tmp, std::ios::binary);
  const std::uint64_t len = h.size();
  out.write(reinterpret_cast<const char*>(&len), sizeof len);
  out.write(h.data(), static_cast<std::streamsize>(h.size()));
  winokit::Rng rng(20261123);
  std::vector<float> values;
  for (const auto& t : specs) {
    values.assign(static_cast<std::size_t>(numel(t.shape)), 0.0f);
    const bool is_bias = t.name.size() > 5 && t.name.compare(t.name.size() - 5, 5, ".bias") == 0;
    const bool is_norm = t.name.find("norm") != std::string::npos;
    // Reference-like scales (as ClipModel::random): small weights, unit LayerNorm gains.
    const double scale = is_bias ? 0.01 : t.shape.size() >= 2 ? 0.02 : 0.1;
    const double offset_value = is_norm && !is_bias ? 1.0 : 0.0;
    for (auto& v : values)
      v = static_cast<float>(offset_value + std::sqrt(3.0) * scale * (2 * rng.uniform() - 1));
    if (t.name == "logit_scale") values.assign(1, std::log(1.0f / 0.07f));
    out.write(reinterpret_cast<const char*>(values.data()),
              static_cast<std::streamsize>(values.size() * sizeof(float)));
  }
  out.close();
  if (!out) throw std::runtime_error("cannot write " + tmp.string());
  fs::rename(tmp, file);
}

void make_checkpoint(const fs::path& dir, const fs::path& vocab) {
  fs::create_directories(dir);
  const json config = {{"architectures", {"CLIPModel"}},
                       {"model_type", "clip"},
                       {"projection_dim", 512},
                       {"logit_scale_init_value", 2.6592},
                       {"torch_dtype", "float32"},
                       {"text_config",
                        {{"hidden_act", "quick_gelu"},
                         {"hidden_size", 512},
                         {"intermediate_size", 2048},
                         {"layer_norm_eps", 1e-05},
                         {"max_position_embeddings", 77},
                         {"model_type", "clip_text_model"},
                         {"num_attention_heads", 8},
                         {"num_hidden_layers", 12},
                         {"projection_dim", 512},
                         {"vocab_size", 49408},
                         {"bos_token_id", 49406},
                         {"eos_token_id", 49407},
                         {"pad_token_id", 1}}},
                       {"vision_config",
                        {{"hidden_act", "quick_gelu"},
                         {"hidden_size", 768},
                         {"intermediate_size", 3072},
                         {"image_size", 224},
                         {"layer_norm_eps", 1e-05},
                         {"model_type", "clip_vision_model"},
                         {"num_attention_heads", 12},
                         {"num_channels", 3},
                         {"num_hidden_layers", 12},
                         {"patch_size", 32},
                         {"projection_dim", 512}}}};
  winokit::write_file_atomic(dir / "config.json", config.dump(2) + "\n");
  const json preprocessor = {{"crop_size", {{"height", 224}, {"width", 224}}},
                             {"do_center_crop", true},
                             {"do_convert_rgb", true},
                             {"do_normalize", true},
                             {"do_rescale", true},
                             {"do_resize", true},
                             {"image_mean", {0.48145466, 0.4578275, 0.40821073}},
                             {"image_std", {0.26862954, 0.26130258, 0.27577711}},
                             {"image_processor_type", "CLIPImageProcessor"},
                             {"resample", 3},
                             {"rescale_factor", 0.00392156862745098},
                             {"size", {{"shortest_edge", 224}}}};
  winokit::write_file_atomic(dir / "preprocessor_config.json", preprocessor.dump(2) + "\n");
  for (const char* f :
       {"vocab.json", "merges.txt", "special_tokens_map.json", "tokenizer_config.json"}) {
    if (fs::exists(vocab / f)) {
      fs::copy_file(vocab / f, dir / f, fs::copy_options::overwrite_existing);
    }
  }
  if (!fs::exists(dir / "model.safetensors")) write_weights(dir / "model.safetensors");
}

}  // namespace

int main(int argc, char** argv) {
  int examples = 400;
  fs::path out;
  fs::path vocab = fs::path(WINOKIT_SHARED_DIR) / "golden" / "clip" / "vocab";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--examples")) examples = std::stoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--out")) out = argv[i + 1];
    if (!std::strcmp(argv[i], "--vocab")) vocab = argv[i + 1];
  }
  if (out.empty() || examples < 1) {
    std::cerr << "usage: make_memory_bench_data --out DIR [--examples N] [--vocab DIR]\n";
    return 2;
  }
  try {
    make_dataset(out / ("winoground-" + std::to_string(examples)), examples);
    make_checkpoint(out / "vit-b32-random-hf", vocab);
  } catch (const std::exception& e) {
    std::cerr << "make_memory_bench_data: " << e.what() << "\n";
    return 1;
  }
  std::cout << (out / ("winoground-" + std::to_string(examples))).string() << "\n"
            << (out / "vit-b32-random-hf").string() << "\n";
  return 0;
}
