// CLIP configuration: the towers' sizes, the architecture (ViT or ModifiedResNet), the checkpoint
// layout and the preprocessing, read from a checkpoint folder or inferred from OpenAI's tensors.
//
//   winokit::ClipConfig config = winokit::load_clip_config("clip-vit-base-patch32/");
//   int tokens = config.vision_tokens();  // 50 for ViT-B/32
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "winokit/model/preprocess.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(model);

namespace winokit {

enum class Activation { QuickGelu, Gelu };
// The image tower: a ViT, or openai/CLIP's ModifiedResNet (3-conv stem, anti-aliased
// Bottlenecks, attention pooling).
enum class VisionArch { Vit, ResNet };
enum class CheckpointLayout { HuggingFace, OpenClip };

const char* to_string(CheckpointLayout layout);

struct TowerConfig {
  int width = 0;
  int layers = 0;
  int heads = 0;
  int mlp = 0;  // hidden size of the MLP
  double eps = 1e-5;
  Activation act = Activation::QuickGelu;
};

struct ClipConfig {
  CheckpointLayout layout = CheckpointLayout::HuggingFace;
  // ResNet: vision.width is the stem width (64 for RN50), vision.heads the attention pool's
  // heads (width * 32 / 64), vision.layers the number of Bottlenecks, vision.mlp unused.
  VisionArch vision_arch = VisionArch::Vit;
  std::array<int, 4> resnet_layers{};  // Bottlenecks per stage (ResNet): {3, 4, 6, 3} for RN50
  TowerConfig vision, text;
  int patch = 32;  // ViT patch side; ResNet: the output stride (32)
  int image_size = 224;
  int context_length = 77;
  int vocab_size = 49408;
  int embed_dim = 512;
  PreprocessConfig preprocess;
  int vision_tokens() const { return (image_size / patch) * (image_size / patch) + 1; }
  // GFLOP of one image through the vision tower (multiply-add = 2 FLOP).
  double vision_gflop() const;
};

// Reads config.json + preprocessor_config.json (Hugging Face) or open_clip_config.json. Every
// size is checked to be a positive integer in range (InputError naming the file and field).
ClipConfig load_clip_config(const std::filesystem::path& dir);
// The architecture implied by the tensors of an openai/CLIP state dict (OpenAI's .pt files),
// as openai/CLIP's build_model infers it; `shapes` maps tensor names to shapes.
ClipConfig infer_openai_config(const std::map<std::string, std::vector<std::int64_t>>& shapes,
                               const std::string& source);
// The ViT-B/32 shapes (used for the demo and benchmarks with random weights).
ClipConfig vit_b32_config();

}  // namespace winokit
