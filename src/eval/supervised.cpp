#include "winokit/eval/supervised.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <set>

#include "winokit/core/error.hpp"
#include "winokit/core/rng.hpp"
#include "winokit/eval/association_solver.hpp"

namespace winokit {

Mlp::Mlp(int inputs, int hidden, std::uint64_t seed, bool layer_norm)
    : in_(inputs), hidden_(hidden), layer_norm_(layer_norm) {
  ln_params_ = layer_norm ? 2 * static_cast<std::size_t>(inputs) : 0;
  const std::size_t n =
      ln_params_ + static_cast<std::size_t>(hidden) * inputs + hidden + hidden + 1;
  params_.assign(n, 0.0);
  m_.assign(n, 0.0);
  v_.assign(n, 0.0);
  for (std::size_t i = 0; i < ln_params_ / 2; ++i)
    params_[i] = 1.0;  // LayerNorm weight 1, bias 0
  Rng rng(derive_seed(seed, "mlp"));
  // PyTorch's nn.Linear default: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for weights and biases.
  const double a1 = 1.0 / std::sqrt(static_cast<double>(inputs)),
               a2 = 1.0 / std::sqrt(static_cast<double>(hidden));
  std::size_t p = ln_params_;
  for (; p < ln_params_ + static_cast<std::size_t>(hidden) * inputs + hidden; ++p)
    params_[p] = (2 * rng.uniform() - 1) * a1;
  for (; p < n; ++p)
    params_[p] = (2 * rng.uniform() - 1) * a2;
}

void Mlp::normalise(const float* x, std::vector<double>& u, std::vector<double>& xhat) const {
  u.resize(static_cast<std::size_t>(in_));
  xhat.resize(static_cast<std::size_t>(in_));
  if (!layer_norm_) {
    for (int i = 0; i < in_; ++i)
      u[static_cast<std::size_t>(i)] = x[i];
    return;
  }
  // nn.LayerNorm: biased variance, eps 1e-5 inside the square root.
  constexpr double kEps = 1e-5;
  double mean = 0;
  for (int i = 0; i < in_; ++i)
    mean += x[i];
  mean /= in_;
  double var = 0;
  for (int i = 0; i < in_; ++i)
    var += (x[i] - mean) * (x[i] - mean);
  var /= in_;
  const double inv = 1.0 / std::sqrt(var + kEps);
  const double* gamma = params_.data();
  const double* beta = gamma + in_;
  for (int i = 0; i < in_; ++i) {
    const auto k = static_cast<std::size_t>(i);
    xhat[k] = (x[i] - mean) * inv;
    u[k] = gamma[i] * xhat[k] + beta[i];
  }
}

std::vector<double> Mlp::predict(const std::vector<float>& x, int rows) const {
  const double* w1 = params_.data() + ln_params_;
  const double* b1 = w1 + static_cast<std::size_t>(hidden_) * in_;
  const double* w2 = b1 + hidden_;
  const double b2 = w2[hidden_];
  std::vector<double> out(static_cast<std::size_t>(rows)), u, xhat;
  for (int r = 0; r < rows; ++r) {
    normalise(&x[static_cast<std::size_t>(r) * in_], u, xhat);
    double z = b2;
    for (int h = 0; h < hidden_; ++h) {
      double a = b1[h];
      const double* wh = w1 + static_cast<std::size_t>(h) * in_;
      for (int i = 0; i < in_; ++i)
        a += wh[i] * u[static_cast<std::size_t>(i)];
      if (a > 0) z += w2[h] * a;
    }
    out[static_cast<std::size_t>(r)] = 1.0 / (1.0 + std::exp(-z));
  }
  return out;
}

double Mlp::loss_and_gradient(const std::vector<float>& x, const std::vector<float>& y, int rows,
                              std::vector<double>& grad) const {
  grad.assign(params_.size(), 0.0);
  const double* w1 = params_.data() + ln_params_;
  const double* b1 = w1 + static_cast<std::size_t>(hidden_) * in_;
  const double* w2 = b1 + hidden_;
  const double b2 = w2[hidden_];
  double* g_gamma = grad.data();
  double* g_beta = g_gamma + in_;
  double* g_w1 = grad.data() + ln_params_;
  double* g_b1 = g_w1 + static_cast<std::size_t>(hidden_) * in_;
  double* g_w2 = g_b1 + hidden_;
  std::vector<double> a(static_cast<std::size_t>(hidden_)), u, xhat,
      du(static_cast<std::size_t>(in_));
  double loss = 0;
  for (int r = 0; r < rows; ++r) {
    normalise(&x[static_cast<std::size_t>(r) * in_], u, xhat);
    double z = b2;
    for (int h = 0; h < hidden_; ++h) {
      double s = b1[h];
      const double* wh = w1 + static_cast<std::size_t>(h) * in_;
      for (int i = 0; i < in_; ++i)
        s += wh[i] * u[static_cast<std::size_t>(i)];
      a[static_cast<std::size_t>(h)] = s > 0 ? s : 0;
      z += w2[h] * a[static_cast<std::size_t>(h)];
    }
    const double t = y[static_cast<std::size_t>(r)];
    // BCE with logits, numerically stable: max(z,0) - z t + log(1 + e^-|z|).
    loss += std::max(z, 0.0) - z * t + std::log1p(std::exp(-std::abs(z)));
    const double dz = (1.0 / (1.0 + std::exp(-z)) - t) / rows;
    g_w2[hidden_] += dz;
    std::fill(du.begin(), du.end(), 0.0);
    for (int h = 0; h < hidden_; ++h) {
      const double ah = a[static_cast<std::size_t>(h)];
      g_w2[h] += dz * ah;
      if (ah <= 0) continue;
      const double da = dz * w2[h];
      g_b1[h] += da;
      double* gh = g_w1 + static_cast<std::size_t>(h) * in_;
      const double* wh = w1 + static_cast<std::size_t>(h) * in_;
      for (int i = 0; i < in_; ++i) {
        gh[i] += da * u[static_cast<std::size_t>(i)];
        if (layer_norm_) du[static_cast<std::size_t>(i)] += da * wh[i];
      }
    }
    // The inputs are fixed features: only the LayerNorm's own weight and bias need gradients.
    if (layer_norm_) {
      for (int i = 0; i < in_; ++i) {
        g_gamma[i] += du[static_cast<std::size_t>(i)] * xhat[static_cast<std::size_t>(i)];
        g_beta[i] += du[static_cast<std::size_t>(i)];
      }
    }
  }
  return loss / rows;
}

double Mlp::train_batch(const std::vector<float>& x, const std::vector<float>& y, int rows,
                        double lr) {
  constexpr double kBeta1 = 0.9, kBeta2 = 0.999, kEps = 1e-8;
  std::vector<double> g;
  const double loss = loss_and_gradient(x, y, rows, g);
  ++step_;
  const double c1 = 1 - std::pow(kBeta1, static_cast<double>(step_));
  const double c2 = 1 - std::pow(kBeta2, static_cast<double>(step_));
  for (std::size_t i = 0; i < params_.size(); ++i) {
    m_[i] = kBeta1 * m_[i] + (1 - kBeta1) * g[i];
    v_[i] = kBeta2 * v_[i] + (1 - kBeta2) * g[i] * g[i];
    params_[i] -= lr * (m_[i] / c1) / (std::sqrt(v_[i] / c2) + kEps);
  }
  return loss;
}

namespace {

std::vector<float> normalised(const std::vector<float>& v) {
  double s = 0;
  for (float x : v)
    s += static_cast<double>(x) * x;
  const double inv = s > 0 ? 1.0 / std::sqrt(s) : 0.0;
  std::vector<float> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i)
    out[i] = static_cast<float>(v[i] * inv);
  return out;
}

// The official pair features: [image, text], each L2-normalised (BackendModel normalises both).
std::vector<float> features(const std::vector<float>& text, const std::vector<float>& image) {
  std::vector<float> f = normalised(image);
  const auto t = normalised(text);
  f.insert(f.end(), t.begin(), t.end());
  return f;
}

double mean_jaccard(const AssociationDataset& ds, const std::vector<std::size_t>& members,
                    const std::vector<std::vector<std::string>>& preds) {
  if (members.empty()) return 0;
  double s = 0;
  for (std::size_t i : members)
    s += jaccard(preds[i], ds.instances[i].associations);
  return s / static_cast<double>(members.size());
}

void mean_std(const std::vector<double>& v, double& mean, double& sd) {
  mean = 0;
  for (double x : v)
    mean += x;
  mean /= static_cast<double>(v.size());
  double ss = 0;
  for (double x : v)
    ss += (x - mean) * (x - mean);
  sd = v.size() > 1 ? std::sqrt(ss / static_cast<double>(v.size() - 1)) : 0.0;
}

}  // namespace

SupervisedResult run_supervised(const AssociationDataset& ds,
                                const std::vector<std::vector<float>>& text,
                                const std::map<std::string, std::vector<float>>& image,
                                const std::vector<std::vector<std::string>>& zero_shot,
                                const SupervisedOptions& o) {
  if (text.size() != ds.instances.size() || zero_shot.size() != ds.instances.size()) {
    throw UsageError("run_supervised: inputs do not cover the instances");
  }
  const int dim = static_cast<int>(text.front().size()) * 2;
  const int hidden = o.hidden > 0 ? o.hidden : dim / 4;
  const std::size_t n = ds.instances.size();
  // Features of every (instance, candidate) pair, and the training order of an instance's pairs
  // as the official cue_image_pairs_*.json list them: the gold associations first (in their
  // order), then the other candidates.
  std::vector<std::vector<std::vector<float>>> pair(n);
  std::vector<std::vector<std::size_t>> pair_order(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& inst = ds.instances[i];
    for (const auto& c : inst.candidates)
      pair[i].push_back(features(text[i], image.at(c)));
    for (const auto& g : inst.associations) {
      pair_order[i].push_back(static_cast<std::size_t>(
          std::find(inst.candidates.begin(), inst.candidates.end(), g) - inst.candidates.begin()));
    }
    for (std::size_t c = 0; c < inst.candidates.size(); ++c) {
      if (std::find(inst.associations.begin(), inst.associations.end(), inst.candidates[c]) ==
          inst.associations.end())
        pair_order[i].push_back(c);
    }
  }
  SupervisedResult result;
  result.protocol =
      "the official WinoGAViL recipe: LayerNorm + Linear(" + std::to_string(dim) + " -> " +
      std::to_string(hidden) +
      ") + ReLU + Linear over [image, cue] embeddings; trained on the cue-image pairs of 5&6 and "
      "10&12 together, minus the test and validation instances and every pair whose image is "
      "one of their candidates; test: a seeded " +
      std::to_string(static_cast<int>(o.test_share * 100 + 0.5)) +
      "% sample of one group; validation: the next instances of that group in file order that "
      "share no image with the test set; Adam lr " +
      [&] {
        char b[32];
        std::snprintf(b, sizeof b, "%g", o.learning_rate);
        return std::string(b);
      }() +
      ", batch " + std::to_string(o.batch_size) + ", " + std::to_string(o.epochs) +
      " epochs, pairs in file order; tested: " +
      (o.select == EpochSelection::First  ? "the first epoch's model (the official --load_epoch 0)"
       : o.select == EpochSelection::Last ? "the last epoch's model"
                                          : "the epoch with the best validation Jaccard");
  const std::vector<std::pair<std::string, std::vector<int>>> groups = {{"5&6", {5, 6}},
                                                                        {"10&12", {10, 12}}};
  // The runs to do, for progress: a group too small for a test set is skipped below.
  std::size_t total_runs = 0, runs_done = 0;
  for (const auto& [name, counts] : groups) {
    std::size_t members = 0;
    for (std::size_t i = 0; i < n; ++i)
      members += std::find(counts.begin(), counts.end(), ds.instances[i].n()) != counts.end();
    if (static_cast<std::size_t>(static_cast<double>(members) * o.test_share) > 0)
      total_runs += o.seeds.size();
  }
  for (const auto& [name, counts] : groups) {
    std::vector<std::size_t> members;
    for (std::size_t i = 0; i < n; ++i) {
      if (std::find(counts.begin(), counts.end(), ds.instances[i].n()) != counts.end())
        members.push_back(i);
    }
    const auto sample =
        static_cast<std::size_t>(static_cast<double>(members.size()) * o.test_share);
    if (sample == 0) continue;  // too few instances of this group for a test set
    SupervisedGroup group;
    group.name = name;
    for (std::uint64_t seed : o.seeds) {
      SupervisedRun run;
      run.seed = seed;
      // Test: a seeded sample (pandas' df.sample in the official code).
      std::vector<std::size_t> shuffled = members;
      Rng rng(derive_seed(seed, "supervised/test/" + name));
      shuffle(shuffled, rng);
      std::vector<std::size_t> test(shuffled.begin(),
                                    shuffled.begin() + static_cast<std::ptrdiff_t>(sample));
      std::sort(test.begin(), test.end());
      std::set<std::string> held_images;
      std::set<std::size_t> held(test.begin(), test.end());
      for (std::size_t i : test)
        held_images.insert(ds.instances[i].candidates.begin(), ds.instances[i].candidates.end());
      // Validation: the group's next instances in file order with no test image.
      std::vector<std::size_t> dev;
      std::set<std::string> dev_images;
      for (std::size_t i : members) {
        if (dev.size() >= sample) break;
        if (held.count(i)) continue;
        const auto& c = ds.instances[i].candidates;
        if (std::any_of(c.begin(), c.end(),
                        [&](const std::string& x) { return held_images.count(x) > 0; }))
          continue;
        dev.push_back(i);
        dev_images.insert(c.begin(), c.end());
      }
      held.insert(dev.begin(), dev.end());
      held_images.insert(dev_images.begin(), dev_images.end());
      // Train: every other instance of both groups, minus pairs showing a held-out image.
      std::vector<std::pair<std::size_t, std::size_t>> train;
      for (std::size_t i = 0; i < n; ++i) {
        const int cands = ds.instances[i].n();
        if (held.count(i) || (cands != 5 && cands != 6 && cands != 10 && cands != 12)) continue;
        for (std::size_t c : pair_order[i]) {
          if (!held_images.count(ds.instances[i].candidates[c])) train.emplace_back(i, c);
        }
      }
      run.train_pairs = train.size();
      run.validation = dev.size();
      run.test = test.size();
      if (train.empty()) {
        throw UsageError("too few instances for the supervised baseline: group " + name +
                             " leaves no training pair whose image is outside its test and "
                             "validation sets",
                         "more instances, or instances that share fewer images, are needed");
      }
      Mlp mlp(dim, hidden, seed, o.layer_norm);
      auto predict = [&](const std::vector<std::size_t>& which) {
        std::vector<std::vector<std::string>> preds(n);
        for (std::size_t i : which) {
          std::vector<float> x;
          for (const auto& f : pair[i])
            x.insert(x.end(), f.begin(), f.end());
          auto p = mlp.predict(x, static_cast<int>(pair[i].size()));
          preds[i] = select_top_k(ds.instances[i].candidates, p, ds.instances[i].k());
        }
        return preds;
      };
      std::vector<double> chosen = mlp.parameters();
      double best_dev = -1;
      for (int epoch = 1; epoch <= o.epochs; ++epoch) {
        for (std::size_t b = 0; b < train.size(); b += static_cast<std::size_t>(o.batch_size)) {
          const std::size_t end =
              std::min(train.size(), b + static_cast<std::size_t>(o.batch_size));
          std::vector<float> x, y;
          for (std::size_t e = b; e < end; ++e) {
            const auto [i, c] = train[e];
            x.insert(x.end(), pair[i][c].begin(), pair[i][c].end());
            const auto& inst = ds.instances[i];
            y.push_back(std::find(inst.associations.begin(), inst.associations.end(),
                                  inst.candidates[c]) != inst.associations.end()
                            ? 1.0f
                            : 0.0f);
          }
          mlp.train_batch(x, y, static_cast<int>(end - b), o.learning_rate);
        }
        bool take = false;
        if (o.select == EpochSelection::First) {
          take = epoch == 1;
        } else if (o.select == EpochSelection::Last) {
          take = epoch == o.epochs;
        } else {
          const double v =
              mean_jaccard(ds, dev.empty() ? test : dev, predict(dev.empty() ? test : dev));
          take = v > best_dev;
          if (take) best_dev = v;
        }
        if (take) {
          chosen = mlp.parameters();
          run.epoch = epoch;
        }
        if (o.select == EpochSelection::First) break;  // later epochs cannot be chosen
      }
      mlp.parameters() = chosen;
      const auto preds = predict(test);
      run.test_jaccard = mean_jaccard(ds, test, preds);
      run.zero_shot_jaccard = mean_jaccard(ds, test, zero_shot);
      for (int c : counts) {
        std::vector<std::size_t> sub;
        for (std::size_t i : test)
          if (ds.instances[i].n() == c) sub.push_back(i);
        if (!sub.empty()) run.by_candidates[c] = {mean_jaccard(ds, sub, preds), sub.size()};
      }
      group.runs.push_back(run);
      if (o.on_run) o.on_run(++runs_done, total_runs);
    }
    std::vector<double> sup, zs;
    for (const auto& r : group.runs) {
      sup.push_back(r.test_jaccard);
      zs.push_back(r.zero_shot_jaccard);
    }
    mean_std(sup, group.mean, group.stddev);
    mean_std(zs, group.zero_shot_mean, group.zero_shot_std);
    result.groups.push_back(std::move(group));
  }
  if (result.groups.empty()) {
    throw UsageError("too few instances for the supervised baseline: a test set is " +
                         std::to_string(static_cast<int>(o.test_share * 100 + 0.5)) +
                         "% of the 5&6 or the 10&12 instances, and neither group has enough",
                     "the official recipe needs at least " +
                         std::to_string(static_cast<int>(1 / o.test_share + 0.5)) +
                         " instances of one group");
  }
  return result;
}

}  // namespace winokit
