// The WinoGAViL supervised baseline, as the official run_trainable.py / models/trainable.py of
// github.com/WinoGAViL/WinoGAViL-experiments train it: a classifier
//   LayerNorm(2d) -> Linear(2d, 2d/4) -> ReLU -> Linear(2d/4, 1)
// over [image embedding, cue text embedding] (each L2-normalised, image first), binary
// cross-entropy with logits, Adam (learning rate 1e-3), batch 12, 7 epochs, the training pairs in
// file order (no shuffling). For each candidate-count group (5&6, 10&12): the test set is a seeded
// 10% sample of that group's instances, the validation set the next 10% of the group's instances
// in file order that share no image with the test set, and the model trains on the cue-image
// pairs of every instance of both groups (5&6 and 10&12 together) except those instances and
// any pair whose image is a test or validation candidate. Reported per group: the mean and
// standard deviation over five runs of the test Jaccard (top-k of the classifier's logits), next
// to the zero-shot solver on the same test instances.
//
//   winokit::Mlp mlp(2 * dim, dim / 2, seed, /*layer_norm=*/true);
//   double loss = mlp.train_batch(x, y, rows, 1e-3);    // one Adam step on a minibatch
//   auto result = winokit::run_supervised(ds, text, images, zero_shot_predictions, {});
//
// The official script tests the checkpoint of its first epoch (`--load_epoch` defaults to 0);
// `EpochSelection::First` does the same, `Best` picks the epoch with the best validation
// Jaccard and `Last` the seventh.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "winokit/data/winogavil.hpp"
#include "winokit/eval/association.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(eval);

namespace winokit {

// x -> [LayerNorm] -> W1 -> ReLU -> w2 -> logit, trained on binary cross-entropy with logits.
class Mlp {
 public:
  // `layer_norm`: PyTorch's nn.LayerNorm over the inputs first (eps 1e-5, weight 1, bias 0).
  // Linear layers start as PyTorch's nn.Linear: U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
  Mlp(int inputs, int hidden, std::uint64_t seed, bool layer_norm = false);
  // Probability for each of `rows` inputs (row-major [rows, inputs]).
  std::vector<double> predict(const std::vector<float>& x, int rows) const;
  // Mean binary cross-entropy of a minibatch and its gradient with respect to every parameter,
  // in the order [LayerNorm weight, bias,] W1, b1, w2, b2 (flattened).
  double loss_and_gradient(const std::vector<float>& x, const std::vector<float>& y, int rows,
                           std::vector<double>& gradient) const;
  // One Adam step (Kingma & Ba 2015; beta1 0.9, beta2 0.999, eps 1e-8). Returns the loss.
  double train_batch(const std::vector<float>& x, const std::vector<float>& y, int rows, double lr);
  std::vector<double>& parameters() { return params_; }
  const std::vector<double>& parameters() const { return params_; }

 private:
  // The inputs after the LayerNorm (or as given), and each row's normalised inputs x-hat.
  void normalise(const float* x, std::vector<double>& u, std::vector<double>& xhat) const;
  int in_, hidden_;
  bool layer_norm_;
  std::size_t ln_params_ = 0;  // 2 * inputs with the LayerNorm
  std::vector<double> params_, m_, v_;
  long step_ = 0;
};

enum class EpochSelection { First, Best, Last };

struct SupervisedOptions {
  int hidden = 0;  // 0: a quarter of the pair features (2d / 4), as the official model
  bool layer_norm = true;
  double learning_rate = 1e-3;
  int batch_size = 12;
  int epochs = 7;
  EpochSelection select = EpochSelection::First;  // the official --load_epoch 0
  double test_share = 0.1;                        // of a group's instances; validation the same
  std::vector<std::uint64_t> seeds = {0, 1, 2, 3, 4};
  // Called after each (group, seed) run with the runs done and the total: progress.
  std::function<void(std::size_t, std::size_t)> on_run;
};

struct SupervisedRun {
  std::uint64_t seed = 0;
  std::size_t train_pairs = 0, validation = 0, test = 0;
  double test_jaccard = 0;       // supervised, mean over test instances
  double zero_shot_jaccard = 0;  // the zero-shot predictions on the same test instances
  int epoch = 0;                 // the epoch whose model was tested (1-based)
  std::map<int, std::pair<double, std::size_t>> by_candidates;  // n -> (test Jaccard, N)
};

struct SupervisedGroup {
  std::string name;  // "5&6" or "10&12"
  std::vector<SupervisedRun> runs;
  double mean = 0, stddev = 0;                   // supervised test Jaccard over runs
  double zero_shot_mean = 0, zero_shot_std = 0;  // zero-shot on the same test sets
};

struct SupervisedResult {
  std::vector<SupervisedGroup> groups;
  std::string protocol;  // one sentence for the reports
};

// `text[i]`: the cue prompt embedding of instance i; `image.at(name)`: a candidate's embedding.
// Throws UsageError when no group has enough instances for a test and a training set.
SupervisedResult run_supervised(const AssociationDataset& ds,
                                const std::vector<std::vector<float>>& text,
                                const std::map<std::string, std::vector<float>>& image,
                                const std::vector<std::vector<std::string>>& zero_shot,
                                const SupervisedOptions& options);

}  // namespace winokit
