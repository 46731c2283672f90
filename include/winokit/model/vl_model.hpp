// One interface for every vision-language model, chosen from a registry by what the checkpoint
// says it is. Every command, benchmark and the game's rival use only this: a model is described
// (family, name, heads, what it can do), scores (caption, image) pairs, and a dual encoder also
// hands out its embeddings (where the embedding cache, read-ahead and batching live). A model
// that cannot do what a command needs is refused by require(), with one message naming what it
// can do.
//
//   std::unique_ptr<winokit::VlModel> m = winokit::open_model("blip-itm-base-coco/", {});
//   std::vector<winokit::ImageRequest> images = {winokit::image_file_request("dog.jpg")};
//   std::vector<double> s = m->score_pairs(images, {"a dog", "a cat"}, {{0, 0}, {1, 0}});
//   if (const winokit::DualEncoder* d = m->dual_encoder()) {
//     std::vector<float> e = d->embed_images(images);   // [n, d->embed_dim()]
//   }
//
// Adding a family: its files in model/ (the model, and a builder that returns a VlModel), and
// one line in model_registry.cpp (CONTRIBUTING, "Add a model architecture").
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "winokit/io/image_store.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(model);

namespace winokit {

// An image to read (lazily). `file`, when set, is the plain file read() reads (none for a zip
// member): the image's cache key then comes from the file's SHA-256 remembered in the cache
// folder, and a fully cached run does not read the image at all.
struct ImageRequest {
  std::string name;
  std::function<ImageBytes()> read;
  std::function<std::optional<std::filesystem::path>()> file;
};
// A request that reads an image file (named `name`, or its path when empty), with `file` set.
ImageRequest image_file_request(const std::string& path, std::string name = {});

// What a run computed and what it found in the cache.
struct EmbedStats {
  std::size_t images_computed = 0, images_cached = 0, texts_computed = 0, texts_cached = 0;
  std::size_t pairs_computed = 0, pairs_cached = 0;
  std::size_t cache_corrupt = 0;
  double image_seconds = 0, text_seconds = 0, pair_seconds = 0;
  std::string cache_warning;
};

// What a model can do, beyond scoring pairs (which every model does).
enum class Ability {
  PairScores,  // s(caption, image) for any pair (every model)
  Embeddings,  // a dual encoder: image and text embeddings, scores from them (DualEncoder)
  States,      // per-layer hidden states of its towers (probes)
  Alignment,   // word-region alignment maps (heatmap)
};
std::string to_string(Ability ability);

// Options every family reads (what does not apply to a family is refused by its builder).
struct ModelOptions {
  int batch_size = 32;  // images (dual encoders) or pairs (cross-encoders) per forward
  bool use_cache = true;
  std::filesystem::path cache_dir;  // empty: default_cache_dir()
  // Family-specific overrides, refused by families that have no such thing:
  std::string preprocess;  // CLIP: a preprocessing pipeline name
  std::string tokenizer;   // CLIP: a tokenizer file or folder
  std::string head;        // one of heads(); empty: the family's default
  // --model-option KEY=VALUE, in the order given: settings a family declares in its options
  // table as "--model-option KEY" (SmolVLM's question and answer templates...); open_model
  // refuses a KEY the family does not declare.
  std::vector<std::pair<std::string, std::string>> settings;
  // Called as work progresses: stage ("images", "captions", "pairs"), done, total.
  std::function<void(const std::string&, std::size_t, std::size_t)> on_progress;
};

// (caption index, image index).
using PairIndex = std::pair<std::size_t, std::size_t>;

// A tower's output for a batch of inputs, and which per-layer states to keep (Ability::States).
struct TowerOutput {
  int count = 0;
  std::vector<float> embeds;  // [count, embed_dim], projected, not normalised
  std::vector<float> hidden;  // [layers + 1, count, width] when requested: class-token (vision)
                              // or end-of-text (text) state after the embeddings / each block
  std::vector<float> tokens;  // [count, tokens, embed_dim] when requested: every token's final
                              // state through the final norm and the projection
  int token_count = 0;
  // [layers + 1, count, width] when EncodeOptions::pooled_states: the mean and the max over
  // tokens of each layer's states (vision: every token, class token included; text: positions
  // up to and including end-of-text), after the embeddings (ln_pre for vision) and each block.
  std::vector<float> hidden_mean, hidden_max;
  int levels = 0, width = 0;  // of the states: layers + 1, and the tower's width
};

struct EncodeOptions {
  bool hidden_states = false;
  bool token_states = false;
  bool pooled_states = false;
  // Text only: run all context_length positions instead of stopping at the longest
  // end-of-text (same results; for benchmarks).
  bool full_context = false;
};

// A dual encoder's embeddings (Ability::Embeddings). Embeddings come back in request order, one
// row of embed_dim() floats each, through the embedding cache.
class DualEncoder {
 public:
  virtual ~DualEncoder() = default;
  virtual int embed_dim() const = 0;
  // `full`, when given, receives the states `encode` asks for over the whole request (every
  // input is then computed, none read from the cache): [layers + 1, n, width] whatever the
  // batching. A family without Ability::States throws UsageError when states are asked for.
  virtual std::vector<float> embed_images(const std::vector<ImageRequest>& images,
                                          EmbedStats* stats = nullptr,
                                          const EncodeOptions& encode = {},
                                          TowerOutput* full = nullptr) const = 0;
  virtual std::vector<float> embed_texts(const std::vector<std::string>& texts,
                                         EmbedStats* stats = nullptr,
                                         const EncodeOptions& encode = {},
                                         TowerOutput* full = nullptr) const = 0;
  // s(text, image) from two embeddings as embed_* return them, in double (CLIP:
  // exp(logit_scale) * cosine; SigLIP adds its logit_bias).
  virtual double score(const float* text, const float* image) const = 0;
};

class PreparedImages;

// ---- word-region alignment (Ability::Alignment) ----
// What a model's maps show: the report's title, the method, and the colour scale's two ends.
struct AlignmentMethod {
  std::string title, method, scale_low, scale_high;
};
// One image with one caption: a map per caption token over the image as the model saw it.
struct AlignmentMaps {
  int width = 0, height = 0;               // the image as the model saw it (preprocessed)
  std::vector<float> rgb;                  // [3, height, width], un-normalised, nominally in [0, 1]
  int grid_h = 0, grid_w = 0, region = 1;  // the map's regions; pixel (x, y) is in region
                                           // (min(grid_h - 1, y / region), min(grid_w - 1, ...))
  std::vector<std::string> tokens;         // the caption's tokens (special tokens dropped)
  std::vector<std::vector<float>> maps;    // per token: [grid_h * grid_w], scaled to [0, 1]
  std::string note;                        // e.g. "score 0.8123"; may be empty
};

// What `winokit bench` asks a family's engine-level measurement for.
struct EngineBenchOptions {
  int images = 64;     // images per timed run, in batches of ModelOptions::batch_size
  int runs = 3;        // timed runs (medians reported)
  int captions = 800;  // captions for a text tower
  int batch_size = 32;
};

class VlModel {
 public:
  virtual ~VlModel() = default;
  // The registry's family ("clip", "vilt", "flava", "siglip", "blip").
  virtual std::string family() const = 0;
  // A short name for tables: the checkpoint's stem, with the head when the family has several.
  virtual std::string name() const = 0;
  virtual std::vector<Ability> abilities() const = 0;
  bool can(Ability ability) const;
  // The selectable heads (FLAVA: itm, contrastive), the one in use, and why it is used.
  virtual std::vector<std::string> heads() const { return {}; }
  virtual std::string head() const { return {}; }
  // The head whose full caption x image matrix is cheap (a dual encoder's, e.g. FLAVA's
  // contrastive head): the default candidates for retrieval --rerank. Empty: none.
  virtual std::string retrieval_head() const { return {}; }
  // A short label for the score, for table headers ("P(match)", "exp(logit_scale) * cos").
  virtual std::string score_name() const { return "Score"; }
  // Provenance: kind, checkpoint, weights hash, config, tokenizer, preprocessing, head, compute.
  virtual nlohmann::json describe() const = 0;
  // s(captions[c], images[i]) for each pair (c, i), with the model's head. Every image is read
  // and encoded at most once, every caption at most once; with the cache on, a pair (or a dual
  // encoder's embedding) computed before comes from the cache. A non-finite score is returned
  // as it is (never cached): the caller names the example in the error (require_finite).
  virtual std::vector<double> score_pairs(const std::vector<ImageRequest>& images,
                                          const std::vector<std::string>& captions,
                                          const std::vector<PairIndex>& pairs,
                                          EmbedStats* stats = nullptr) const = 0;
  // Ability::Embeddings: the embeddings (nullptr for a cross-encoder).
  virtual const DualEncoder* dual_encoder() const { return nullptr; }
  // The images encoded once and kept, for scoring many captions against them later (the game's
  // rival: a pool of images, a new cue each round). The default keeps the requests and calls
  // score_pairs; families override it to keep their image encodings in memory.
  virtual std::unique_ptr<PreparedImages> prepare_images(
      const std::vector<ImageRequest>& images) const;
  // Ability::Alignment: how the maps are made, and the maps of one image with each caption
  // (captions.size() of them). A model without the ability throws the one refusal (require).
  virtual AlignmentMethod alignment_method() const;
  virtual std::vector<AlignmentMaps> align(const ImageBytes& image,
                                           const std::vector<std::string>& captions) const;
  // The family's own engine-level measurements for `winokit bench` (towers on raw tensors, the
  // share of the GEMM peak, ...), as JSON fields merged into its report; null when it has none.
  virtual nlohmann::json engine_bench(const EngineBenchOptions& options) const;
};

class PreparedImages {
 public:
  virtual ~PreparedImages() = default;
  // s(captions[c], image i) for each pair (c, i); i indexes the prepared images. Safe to call
  // from several threads (calls are serialised).
  virtual std::vector<double> score(const std::vector<std::string>& captions,
                                    const std::vector<PairIndex>& pairs) const = 0;
};

// Throws UsageError when `model` cannot do `ability`, naming the command that needs it, the
// model and what it can do: the one refusal every command gives.
void require(const VlModel& model, Ability ability, const std::string& command);

// InputError when scores[k] is not finite, naming the model's checkpoint and what(k) ("example
// 12 (caption 0, image 1)"): broken weights or logit scale.
void require_finite(const VlModel& model, const std::vector<double>& scores,
                    const std::function<std::string(std::size_t)>& what);

// ---- the registry ----
// A family: how to recognise its checkpoints and how to build one.
struct ModelFamily {
  std::string name;                // "siglip"
  std::string description;         // one line for `winokit models`
  std::vector<Ability> abilities;  // what its models can do
  std::vector<std::string> heads;  // selectable heads, the default first (empty: one score)
  // The checkpoint (a folder or a file) is of this family: a folder's config.json model_type,
  // an OpenCLIP config, a .pt archive...
  std::function<bool(const std::filesystem::path&)> recognises;
  std::function<std::unique_ptr<VlModel>(const std::filesystem::path&, const ModelOptions&)> open;
  // The family-specific ModelOptions it takes, as {flag, help}: {"--preprocess", "hf or openai"},
  // {"--model-option answer", "..."} for a setting KEY. open_model refuses the others
  // (--preprocess, --tokenizer, --model-option KEY) before open() is called, with `reads_own` as
  // the hint: where the family takes its preprocessing and tokenizer from.
  std::vector<std::pair<std::string, std::string>> options = {};
  std::string reads_own = {};
};
const std::vector<ModelFamily>& model_families();

// The family of a checkpoint; UsageError naming the registered families when none recognises it.
const ModelFamily& find_model_family(const std::filesystem::path& checkpoint);
// The families that take `flag` ("--preprocess") and what it means for each: "clip: hf or openai".
// For "--model-option": every family's settings, "smolvlm: question (...), answer (...)".
std::string family_option_help(const std::string& flag);
// Opens any registered model: the family is picked from the checkpoint; a family-specific option
// the family does not take is refused here (UsageError: "--preprocess is for clip models; ...").
std::unique_ptr<VlModel> open_model(const std::filesystem::path& checkpoint,
                                    const ModelOptions& options);
// The same with the family already found (find_model_family).
std::unique_ptr<VlModel> open_model(const ModelFamily& family,
                                    const std::filesystem::path& checkpoint,
                                    const ModelOptions& options);

// The model of `winokit demo` and of the game's test rival when no --model is given: a
// ViT-B/32-shaped CLIP with seeded random weights made in memory and the byte-level tokenizer,
// so it needs no files (its name: "clip-random-vit-b32").
std::unique_ptr<VlModel> random_demo_model(std::uint64_t seed, const ModelOptions& options);

// A folder's config.json "model_type" (also under "text_config"/"vision_config" parents), or ""
// when it has none: for the families' recognises().
std::string checkpoint_model_type(const std::filesystem::path& dir);

// ---- shared by the families' implementations ----
// The default short name of a checkpoint: its folder or file name ("clip-vit-base-patch32",
// "RN50.pt").
std::string checkpoint_name(const std::filesystem::path& checkpoint);

// The cross-encoders' pair cache: s(caption, image) keyed by (the model's signature, its head,
// the image's SHA-256 and preprocessing, the caption). Misses are handed to `compute` (indices
// into `pairs`), which returns their scores in that order; they are stored and merged with the
// hits. The signature must change whenever the weights or the kernels change.
std::vector<double> cached_pair_scores(
    const std::vector<ImageRequest>& images, const std::vector<std::string>& captions,
    const std::vector<PairIndex>& pairs, const ModelOptions& options, const std::string& signature,
    const std::string& preprocess_json, EmbedStats* stats,
    const std::function<std::vector<double>(const std::vector<std::size_t>& misses)>& compute);

// The images, captions and pairs that `misses` (indices into `pairs`) use, re-indexed: what a
// cross-encoder's compute step of cached_pair_scores encodes (each image and caption once).
// `stats` (if given) counts the images and captions.
struct PairSubset {
  std::vector<std::function<ImageBytes()>> images;
  std::vector<std::string> captions;
  std::vector<PairIndex> pairs;  // into images / captions above, in `misses` order
};
PairSubset pair_subset(const std::vector<ImageRequest>& images,
                       const std::vector<std::string>& captions,
                       const std::vector<PairIndex>& pairs, const std::vector<std::size_t>& misses,
                       EmbedStats* stats);

// Pair scores from a dual encoder: every image and caption embedded once, s from score().
std::vector<double> dual_encoder_pair_scores(const DualEncoder& encoder,
                                             const std::vector<ImageRequest>& images,
                                             const std::vector<std::string>& captions,
                                             const std::vector<PairIndex>& pairs,
                                             EmbedStats* stats);

// PreparedImages for any dual encoder: the images embedded once, captions embedded per call.
std::unique_ptr<PreparedImages> prepare_embedded_images(const DualEncoder& encoder,
                                                        const std::vector<ImageRequest>& images);

}  // namespace winokit
