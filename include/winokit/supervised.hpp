// The WinoGAViL supervised baseline: a binary classifier over concatenated (cue text embedding,
// image embedding) pairs, trained with Adam (learning rate 1e-3, batch 128, 7 epochs) on splits
// whose instances share no image (80/10/10), five seeds; reported as mean and standard
// deviation of the test Jaccard next to the zero-shot solver on the same test instances.
//
//   winokit::Mlp mlp(2 * dim, 512, seed);
//   double loss = mlp.train_batch(x, y, rows, adam);     // one Adam step on a minibatch
//   auto result = winokit::run_supervised(ds, features, zero_shot_predictions, {});
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "winokit/winogavil.hpp"

namespace winokit {

// x -> sigmoid(w2 . relu(W1 x + b1) + b2), trained on binary cross-entropy.
class Mlp {
 public:
  Mlp(int inputs, int hidden, std::uint64_t seed);
  // Probability for each of `rows` inputs (row-major [rows, inputs]).
  std::vector<double> predict(const std::vector<float>& x, int rows) const;
  // Mean binary cross-entropy of a minibatch and its gradient with respect to every parameter,
  // in the order W1, b1, w2, b2 (flattened).
  double loss_and_gradient(const std::vector<float>& x, const std::vector<float>& y, int rows,
                           std::vector<double>& gradient) const;
  // One Adam step (Kingma & Ba 2015; beta1 0.9, beta2 0.999, eps 1e-8). Returns the loss.
  double train_batch(const std::vector<float>& x, const std::vector<float>& y, int rows, double lr);
  std::vector<double>& parameters() { return params_; }
  const std::vector<double>& parameters() const { return params_; }

 private:
  int in_, hidden_;
  std::vector<double> params_, m_, v_;
  long step_ = 0;
};

struct SupervisedOptions {
  int hidden = 512;
  double learning_rate = 1e-3;
  int batch_size = 128;
  int epochs = 7;
  std::vector<std::uint64_t> seeds = {0, 1, 2, 3, 4};
  double train_share = 0.8, validation_share = 0.1;
};

struct SupervisedRun {
  std::uint64_t seed = 0;
  std::size_t train = 0, validation = 0, test = 0, dropped = 0;
  double test_jaccard = 0;       // supervised, mean over test instances
  double zero_shot_jaccard = 0;  // the zero-shot predictions on the same test instances
  int best_epoch = 0;            // chosen by validation Jaccard
};

struct SupervisedResult {
  std::vector<SupervisedRun> runs;
  double mean = 0, stddev = 0;                   // supervised test Jaccard over seeds
  double zero_shot_mean = 0, zero_shot_std = 0;  // zero-shot on the same test sets
  std::string split_method;
};

// `text[i]`: the cue prompt embedding of instance i; `image.at(name)`: a candidate's embedding.
SupervisedResult run_supervised(const AssociationDataset& ds,
                                const std::vector<std::vector<float>>& text,
                                const std::map<std::string, std::vector<float>>& image,
                                const std::vector<std::vector<std::string>>& zero_shot,
                                const SupervisedOptions& options);

}  // namespace winokit
