// Probes of "Why is Winoground Hard?" (Diwan et al. 2022): what a model's per-layer states
// encode about a Winoground pair, beyond the three scores.
//
//   auto table = winokit::load_embedding_table("embeds.safetensors");  // from `winokit embed`
//   winokit::ProbeEmbeddings emb = winokit::probe_embeddings(dataset, table);
//   winokit::ProbeResult r = winokit::run_mlp_probe(winokit::ProbeTask::PairText, dataset,
//                                                   emb.layers[12], emb, {});
//   winokit::SvmLayerResult s = winokit::svm_separability(emb.layers[12], emb, {});
//
// Pair probes (text and image variants): an MLP reads two concatenated (image state, caption
// state) pairs that share one image (text task) or one caption (image task) and says whether the
// first pair is the matching one. Text-only probe: an MLP reads a held-out caption variant and
// the two captions and says whether the variant belongs to the first caption. Both use a
// train/test split of the items (examples), stratified by tag (ProbeSplitKind), and a control task
// that flips the labels of a random half of the items (Hewitt & Liang 2019), so a probe that
// memorises items scores ~50% on the control test set. Each seed draws its own split, control
// items, instance order, initialisation and minibatches; results give min and max over seeds.
//
// The MLP is `depth` Linear layers (input -> hidden -> ... -> 1) with ReLU between them and a
// sigmoid output, trained on binary cross-entropy with Adam (PyTorch's defaults: betas 0.9 and
// 0.999, eps 1e-8), PyTorch's Linear initialisation, minibatches reshuffled every epoch and
// a last partial batch kept (DataLoader(shuffle=True)). A prediction is right when the sigmoid
// is strictly on the label's side of 0.5 (a logit of exactly 0 counts as wrong).
//
// SVM separability: for each item, the variants of caption 0 (the caption included) against
// those of caption 1, a linear SVM (liblinear, L2-regularised hinge loss, dual solver, C = 100,
// with a bias feature); "separated" means every training point is on its side, and the margin is
// 2 / ||w||, averaged over the separated items. Control: the same points with the two sets' members
// reassigned at random (same sizes).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "winokit/data/variants.hpp"
#include "winokit/data/winoground.hpp"
#include "winokit/eval/augment.hpp"
#include "winokit/io/npy.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(eval);

namespace winokit {

// Per-layer states of a dataset's images, captions and caption variants.
struct ProbeLayer {
  std::string name;  // "0" (after the embeddings), "1".."L" (after block l), or "final"
  int image_dim = 0, text_dim = 0;
  std::vector<float> image;     // [2 * examples, image_dim]: image k of example i at row 2i + k
  std::vector<float> text;      // [2 * examples, text_dim]: caption k of example i at 2i + k
  std::vector<float> variants;  // [variant rows, text_dim]
  // Joint per-pair states (UNITER/LXMERT-style models scored elsewhere), when the embeddings
  // have them: [4 * examples, pair_dim], pair (caption c, image k) of example i at row
  // 4i + 2c + k. The pair probes then read these instead of (image, caption) concatenations.
  int pair_dim = 0;
  std::vector<float> pairs;
};

struct ProbeEmbeddings {
  std::vector<ProbeLayer> layers;
  std::vector<std::size_t> variant_owner;  // per variant row: 2i + k, the caption it varies
  std::string vision_layer_note;           // how text layers were paired with vision layers
};

// Named tensors with the ids of their rows, as `winokit embed` writes them: image_embeds
// [images, dim], text_embeds [texts, dim], and optionally image_hidden_cls [Lv + 1, images, wv]
// and text_hidden_eot [Lt + 1, texts, wt], and the pooled states image_hidden_mean,
// image_hidden_max [Lv + 1, images, wv], text_hidden_mean, text_hidden_max [Lt + 1, texts, wt]
// (`embed --hidden-states`); image ids are image names, text ids are
// "<example id>_c<k>" for captions and "<example id>_c<k>:<anything>" for variants.
// Joint per-pair embeddings: pair_embeds [pairs, d] and optionally pair_hidden [L + 1, pairs, w],
// their ids "<example id>_c<k>_i<j>" (caption k with image j) in "pair_ids".
struct EmbeddingTable {
  std::map<std::string, NpyArray> tensors;
  std::vector<std::string> image_ids, text_ids, pair_ids;
  std::string source;
};

// The text ids of that layout: "<example id>_c<k>" for a caption, and for variant number n
// "<example id>_c<k>:<augmentation>:<n>".
std::string caption_text_id(const WinogroundExample& example, std::size_t k);
std::string variant_text_id(const WinogroundDataset& dataset, const CaptionVariant& variant,
                            std::size_t n);

// A safetensors file (ids in the metadata keys "image_ids" / "text_ids" as JSON lists) or a
// folder of .npy files named after the tensors with image_ids.txt / text_ids.txt (one id per
// line).
EmbeddingTable load_embedding_table(const std::filesystem::path& path);

// The dataset's rows from a table: "final" from the *_embeds tensors and, when present, one
// layer per text hidden state (text layer l is paired with vision layer round(l * Lv / Lt)).
// Throws InputError naming the missing id.
// How a layer's token states become one vector: the class token (vision) and end-of-text token
// (text) state, or the paper's Mean@l / Max@l pooling over tokens (the *_hidden_mean / _max
// tensors). The "final" layer is always the projected embeddings.
enum class ProbePooling { Token, Mean, Max };
const char* to_string(ProbePooling pooling);
// The tensor names a pooling reads: {image, text}.
std::pair<std::string, std::string> pooled_tensor_names(ProbePooling pooling);
// Throws InputError naming the missing tensors when a pooling's states are not in the table.
ProbeEmbeddings probe_embeddings(const WinogroundDataset& dataset, const EmbeddingTable& table,
                                 ProbePooling pooling = ProbePooling::Token);

enum class ProbeTask { PairText, PairImage, TextOnly };
const char* to_string(ProbeTask task);

struct MlpProbeOptions {
  int depth = 4;  // Linear layers
  int hidden = 1024;
  double learning_rate = 1e-4;
  int epochs = 200;
  int batch_size = 128;
};

// How each seed splits the items (examples) into train and test.
//  - Stratified (default): stratified as "Why is Winoground Hard?" describes its probes' split,
//    by the tags Pragmatics / Symbolic / Morpheme-Level / Both (see paper_stratum).
//  - CollapsedTag: stratified by Winoground's collapsed_tag (Object / Relation / Both).
//  - Random: one stratum, a seeded random split of round(share * n) items.
//  - Paper: the official fixed lists of 300 train / 100 test ids (split_train_test.py), the same
//    for every seed.
enum class ProbeSplitKind { Stratified, CollapsedTag, Random, Paper };
const char* to_string(ProbeSplitKind kind);

struct ProbeOptions {
  MlpProbeOptions mlp;
  std::vector<std::uint64_t> seeds = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  double train_share = 0.75;  // 300 of Winoground's 400 items
  ProbeSplitKind split = ProbeSplitKind::Stratified;
  // The paper's own split for every seed: the same as split = ProbeSplitKind::Paper (kept for
  // `--paper-split`).
  bool paper_split = false;
  double svm_c = 100;
  std::uint64_t svm_seed = 0;  // control reassignment of the SVM sets
  // Fits run side by side, one thread each (results do not depend on this or on the core
  // count); 0: as many as the compute threads.
  int parallel_fits = 0;
};

// The stratum of an example in the paper's split: the one tag it carries among Pragmatics,
// Symbolic and Morpheme-Level (its secondary_tag list), "Both" when it carries two or more of
// them (such an example is placed in "Both" only, never in two strata), and "None" when it
// carries none (Series alone, or no secondary tag).
std::string paper_stratum(const WinogroundExample& example);
// An example's stratum for a split kind (Random: "all"; Paper: not stratified, "all").
std::string probe_stratum(const WinogroundExample& example, ProbeSplitKind kind);

// Items in the training split, stratified by `kind`'s strata: each stratum gets its share
// rounded by largest remainder (ties: the stratum first in name order), so the total is
// round(share * n) and every stratum is within one item of share * its size. Seeded.
std::vector<bool> stratified_split(const WinogroundDataset& dataset, double train_share,
                                   std::uint64_t seed,
                                   ProbeSplitKind kind = ProbeSplitKind::Stratified);
// The split a probe run uses for `seed` (options.split, or the paper's when paper_split).
std::vector<bool> probe_split(const WinogroundDataset& dataset, const ProbeOptions& options,
                              std::uint64_t seed);
// One sentence for reports: how the items were split.
std::string describe_split(const ProbeOptions& options);
// The official split of "Why is Winoground Hard?" (train: true); UsageError unless the dataset is
// Winoground's ids 0-399.
std::vector<bool> paper_split(const WinogroundDataset& dataset);

// A probe's training data: `rows` instances of `inputs` features, labels 0/1 and their item.
struct ProbeData {
  int inputs = 0;
  std::vector<float> x;
  std::vector<float> y;
  std::vector<std::size_t> item;
  std::size_t rows() const { return y.size(); }
};
ProbeData probe_data(ProbeTask task, const ProbeLayer& layer, const ProbeEmbeddings& embeddings,
                     std::size_t examples, std::uint64_t order_seed);

// The MLP probe on float32 GEMMs.
class ProbeMlp {
 public:
  ProbeMlp(int inputs, const MlpProbeOptions& options, std::uint64_t seed);
  // Trains for options.epochs on the rows listed in `train`.
  void fit(const ProbeData& data, const std::vector<std::size_t>& train, std::uint64_t seed);
  std::vector<float> logits(const ProbeData& data, const std::vector<std::size_t>& rows) const;
  // Mean binary cross-entropy over `rows` and its gradient (for checks), parameters in layer
  // order, weights then bias.
  double loss_and_gradient(const ProbeData& data, const std::vector<std::size_t>& rows,
                           std::vector<std::vector<float>>& gradient) const;
  std::vector<std::vector<float>>& parameters() { return params_; }

 private:
  void forward(const float* x, int rows, std::vector<std::vector<float>>& acts) const;
  void backward(const float* x, const float* y, int rows,
                const std::vector<std::vector<float>>& acts,
                std::vector<std::vector<float>>& grad) const;
  std::vector<int> sizes_;
  MlpProbeOptions options_;
  std::vector<std::vector<float>> params_, m_, v_;  // W1, b1, W2, b2, ...
  long step_ = 0;
};

// Share of `rows` predicted right (logit strictly on the label's side of 0).
double probe_accuracy(const std::vector<float>& logits, const ProbeData& data,
                      const std::vector<std::size_t>& rows);

struct ProbeRun {
  std::uint64_t seed = 0;
  double target_test = 0, control_test = 0;    // accuracies in [0, 1]
  double target_train = 0, control_train = 0;  // after the last epoch
};

struct ProbeResult {
  std::string task, layer;
  std::vector<ProbeRun> runs;
  double target_min = 0, target_max = 0, control_min = 0, control_max = 0;
  std::size_t train_items = 0, test_items = 0, train_rows = 0, test_rows = 0, inputs = 0;
};

// Trains one target and one control probe per seed, side by side. `on_run` is called after each
// fit (one call at a time).
ProbeResult run_mlp_probe(ProbeTask task, const WinogroundDataset& dataset, const ProbeLayer& layer,
                          const ProbeEmbeddings& embeddings, const ProbeOptions& options,
                          const std::function<void()>& on_run = {});

// A linear SVM on two point sets; `separated` when every point is on its side.
struct SvmFit {
  bool separated = false;
  double margin = 0;  // 2 / ||w|| (bias excluded)
};
SvmFit linear_svm(const std::vector<float>& points, int dim, const std::vector<int>& labels,
                  double c);

struct SvmLayerResult {
  std::string layer;
  std::size_t items = 0;  // items with at least one variant per caption
  double target_separated = 0, control_separated = 0;  // share of items (NaN without items)
  // Mean 2/||w|| over the separated items (a margin is only defined for separated sets);
  // NaN when none is separated.
  double target_margin = 0, control_margin = 0;
};
SvmLayerResult svm_separability(const ProbeLayer& layer, const ProbeEmbeddings& embeddings,
                                const ProbeOptions& options);

}  // namespace winokit
