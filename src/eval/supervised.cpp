#include "winokit/supervised.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "winokit/association_solver.hpp"
#include "winokit/error.hpp"
#include "winokit/rng.hpp"

namespace winokit {

Mlp::Mlp(int inputs, int hidden, std::uint64_t seed) : in_(inputs), hidden_(hidden) {
  const std::size_t n = static_cast<std::size_t>(hidden) * inputs + hidden + hidden + 1;
  params_.assign(n, 0.0);
  m_.assign(n, 0.0);
  v_.assign(n, 0.0);
  Rng rng(derive_seed(seed, "mlp"));
  // PyTorch's nn.Linear default: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for weights and biases.
  const double a1 = 1.0 / std::sqrt(static_cast<double>(inputs)),
               a2 = 1.0 / std::sqrt(static_cast<double>(hidden));
  std::size_t p = 0;
  for (; p < static_cast<std::size_t>(hidden) * inputs + hidden; ++p)
    params_[p] = (2 * rng.uniform() - 1) * a1;
  for (; p < n; ++p)
    params_[p] = (2 * rng.uniform() - 1) * a2;
}

std::vector<double> Mlp::predict(const std::vector<float>& x, int rows) const {
  const double* w1 = params_.data();
  const double* b1 = w1 + static_cast<std::size_t>(hidden_) * in_;
  const double* w2 = b1 + hidden_;
  const double b2 = w2[hidden_];
  std::vector<double> out(static_cast<std::size_t>(rows));
  for (int r = 0; r < rows; ++r) {
    const float* xr = &x[static_cast<std::size_t>(r) * in_];
    double z = b2;
    for (int h = 0; h < hidden_; ++h) {
      double a = b1[h];
      const double* wh = w1 + static_cast<std::size_t>(h) * in_;
      for (int i = 0; i < in_; ++i)
        a += wh[i] * xr[i];
      if (a > 0) z += w2[h] * a;
    }
    out[static_cast<std::size_t>(r)] = 1.0 / (1.0 + std::exp(-z));
  }
  return out;
}

double Mlp::loss_and_gradient(const std::vector<float>& x, const std::vector<float>& y, int rows,
                              std::vector<double>& grad) const {
  grad.assign(params_.size(), 0.0);
  const double* w1 = params_.data();
  const double* b1 = w1 + static_cast<std::size_t>(hidden_) * in_;
  const double* w2 = b1 + hidden_;
  const double b2 = w2[hidden_];
  double* g_w1 = grad.data();
  double* g_b1 = g_w1 + static_cast<std::size_t>(hidden_) * in_;
  double* g_w2 = g_b1 + hidden_;
  std::vector<double> a(static_cast<std::size_t>(hidden_));
  double loss = 0;
  for (int r = 0; r < rows; ++r) {
    const float* xr = &x[static_cast<std::size_t>(r) * in_];
    double z = b2;
    for (int h = 0; h < hidden_; ++h) {
      double s = b1[h];
      const double* wh = w1 + static_cast<std::size_t>(h) * in_;
      for (int i = 0; i < in_; ++i)
        s += wh[i] * xr[i];
      a[static_cast<std::size_t>(h)] = s > 0 ? s : 0;
      z += w2[h] * a[static_cast<std::size_t>(h)];
    }
    const double t = y[static_cast<std::size_t>(r)];
    // BCE with logits, numerically stable: max(z,0) - z t + log(1 + e^-|z|).
    loss += std::max(z, 0.0) - z * t + std::log1p(std::exp(-std::abs(z)));
    const double dz = (1.0 / (1.0 + std::exp(-z)) - t) / rows;
    g_w2[hidden_] += dz;
    for (int h = 0; h < hidden_; ++h) {
      const double ah = a[static_cast<std::size_t>(h)];
      g_w2[h] += dz * ah;
      if (ah <= 0) continue;
      const double da = dz * w2[h];
      g_b1[h] += da;
      double* gh = g_w1 + static_cast<std::size_t>(h) * in_;
      for (int i = 0; i < in_; ++i)
        gh[i] += da * xr[i];
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

// Splits instances so that no image is in two splits: connected components of the "shares an
// image" graph are assigned whole, in a seeded order, test first, then validation, then train.
std::vector<int> split_instances(const AssociationDataset& ds, const SupervisedOptions& o,
                                 std::uint64_t seed, std::size_t& dropped, std::string& method) {
  const std::size_t n = ds.instances.size();
  std::vector<std::size_t> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](std::size_t a) {
    while (parent[a] != a)
      a = parent[a] = parent[parent[a]];
    return a;
  };
  std::map<std::string, std::size_t> owner;
  for (std::size_t i = 0; i < n; ++i) {
    for (const auto& c : ds.instances[i].candidates) {
      auto [it, fresh] = owner.emplace(c, i);
      if (!fresh) parent[find(i)] = find(it->second);
    }
  }
  std::map<std::size_t, std::vector<std::size_t>> components;
  for (std::size_t i = 0; i < n; ++i)
    components[find(i)].push_back(i);
  std::vector<int> split(n, 0);  // 0 train, 1 validation, 2 test, -1 dropped
  dropped = 0;
  const double test_share = 1 - o.train_share - o.validation_share;
  std::size_t largest = 0;
  for (const auto& [root, members] : components)
    largest = std::max(largest, members.size());
  Rng rng(derive_seed(seed, "split"));
  if (static_cast<double>(largest) <= o.train_share * static_cast<double>(n)) {
    method = "connected components of instances sharing an image, assigned whole";
    std::vector<const std::vector<std::size_t>*> order;
    for (const auto& [root, members] : components)
      order.push_back(&members);
    shuffle(order, rng);
    std::size_t test = 0, val = 0;
    for (const auto* members : order) {
      int s = 0;
      if (static_cast<double>(test) < test_share * static_cast<double>(n)) {
        s = 2;
        test += members->size();
      } else if (static_cast<double>(val) < o.validation_share * static_cast<double>(n)) {
        s = 1;
        val += members->size();
      }
      for (std::size_t i : *members)
        split[i] = s;
    }
    return split;
  }
  // One component holds most instances. Greedy: in a seeded order, an instance goes to the split
  // its already-placed images belong to, or, when none is placed, to the split furthest below
  // its share; an instance whose images are already in two splits is dropped.
  method = "greedy image-disjoint assignment in a seeded order; instances spanning splits dropped";
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  shuffle(order, rng);
  const double shares[3] = {o.train_share, o.validation_share, test_share};
  std::size_t filled[3] = {0, 0, 0};
  std::map<std::string, int> image_split;
  for (std::size_t i : order) {
    std::set<int> seen;
    for (const auto& c : ds.instances[i].candidates) {
      auto it = image_split.find(c);
      if (it != image_split.end()) seen.insert(it->second);
    }
    int s = 0;
    if (seen.size() > 1) {
      split[i] = -1;
      ++dropped;
      continue;
    }
    if (seen.size() == 1) {
      s = *seen.begin();
    } else {
      double worst = 1e300;
      for (int k = 2; k >= 0; --k) {  // test first on ties
        const double fill =
            static_cast<double>(filled[k]) / (shares[k] * static_cast<double>(n) + 1e-9);
        if (fill < worst) {
          worst = fill;
          s = k;
        }
      }
    }
    split[i] = s;
    ++filled[s];
    for (const auto& c : ds.instances[i].candidates)
      image_split[c] = s;
  }
  return split;
}

std::vector<float> features(const std::vector<float>& text, const std::vector<float>& image) {
  auto normalised = [](const std::vector<float>& v) {
    double s = 0;
    for (float x : v)
      s += static_cast<double>(x) * x;
    const double inv = s > 0 ? 1.0 / std::sqrt(s) : 0.0;
    std::vector<float> out(v.size());
    for (std::size_t i = 0; i < v.size(); ++i)
      out[i] = static_cast<float>(v[i] * inv);
    return out;
  };
  std::vector<float> f = normalised(text);
  const auto im = normalised(image);
  f.insert(f.end(), im.begin(), im.end());
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
  // Features of every (instance, candidate) pair.
  std::vector<std::vector<std::vector<float>>> pair(ds.instances.size());
  for (std::size_t i = 0; i < ds.instances.size(); ++i) {
    for (const auto& c : ds.instances[i].candidates)
      pair[i].push_back(features(text[i], image.at(c)));
  }
  SupervisedResult result;
  for (std::uint64_t seed : o.seeds) {
    SupervisedRun run;
    run.seed = seed;
    std::vector<int> split = split_instances(ds, o, seed, run.dropped, result.split_method);
    std::vector<std::size_t> members[3];
    for (std::size_t i = 0; i < split.size(); ++i) {
      if (split[i] >= 0) members[split[i]].push_back(i);
    }
    run.train = members[0].size();
    run.validation = members[1].size();
    run.test = members[2].size();
    if (members[0].empty() || members[2].empty()) {
      throw UsageError("too few instances for image-disjoint train and test splits (train " +
                           std::to_string(run.train) + ", validation " +
                           std::to_string(run.validation) + ", test " + std::to_string(run.test) +
                           ", dropped " + std::to_string(run.dropped) + " of " +
                           std::to_string(ds.instances.size()) + ")",
                       "more instances, or instances that share fewer images, are needed");
    }
    std::vector<std::pair<std::size_t, std::size_t>> examples;  // (instance, candidate)
    for (std::size_t i : members[0]) {
      for (std::size_t c = 0; c < pair[i].size(); ++c)
        examples.emplace_back(i, c);
    }
    Mlp mlp(dim, o.hidden, seed);
    Rng rng(derive_seed(seed, "batches"));
    auto predict_split = [&](const std::vector<std::size_t>& which) {
      std::vector<std::vector<std::string>> preds(ds.instances.size());
      for (std::size_t i : which) {
        std::vector<float> x;
        for (const auto& f : pair[i])
          x.insert(x.end(), f.begin(), f.end());
        auto p = mlp.predict(x, static_cast<int>(pair[i].size()));
        preds[i] = select_top_k(ds.instances[i].candidates, p, ds.instances[i].k());
      }
      return preds;
    };
    std::vector<double> best_params = mlp.parameters();
    double best_val = -1;
    for (int epoch = 1; epoch <= o.epochs; ++epoch) {
      shuffle(examples, rng);
      for (std::size_t b = 0; b < examples.size(); b += static_cast<std::size_t>(o.batch_size)) {
        const std::size_t end =
            std::min(examples.size(), b + static_cast<std::size_t>(o.batch_size));
        std::vector<float> x, y;
        for (std::size_t e = b; e < end; ++e) {
          const auto [i, c] = examples[e];
          x.insert(x.end(), pair[i][c].begin(), pair[i][c].end());
          const auto& inst = ds.instances[i];
          y.push_back(std::find(inst.associations.begin(), inst.associations.end(),
                                inst.candidates[c]) != inst.associations.end()
                          ? 1.0f
                          : 0.0f);
        }
        mlp.train_batch(x, y, static_cast<int>(end - b), o.learning_rate);
      }
      const auto& select = members[1].empty() ? members[0] : members[1];
      const double val = mean_jaccard(ds, select, predict_split(select));
      if (val > best_val) {
        best_val = val;
        best_params = mlp.parameters();
        run.best_epoch = epoch;
      }
    }
    mlp.parameters() = best_params;
    run.test_jaccard = mean_jaccard(ds, members[2], predict_split(members[2]));
    run.zero_shot_jaccard = mean_jaccard(ds, members[2], zero_shot);
    result.runs.push_back(run);
  }
  auto mean_std = [&](auto get, double& mean, double& sd) {
    mean = 0;
    for (const auto& r : result.runs)
      mean += get(r);
    mean /= static_cast<double>(result.runs.size());
    double ss = 0;
    for (const auto& r : result.runs)
      ss += (get(r) - mean) * (get(r) - mean);
    sd = result.runs.size() > 1 ? std::sqrt(ss / static_cast<double>(result.runs.size() - 1)) : 0.0;
  };
  mean_std([](const SupervisedRun& r) { return r.test_jaccard; }, result.mean, result.stddev);
  mean_std([](const SupervisedRun& r) { return r.zero_shot_jaccard; }, result.zero_shot_mean,
           result.zero_shot_std);
  return result;
}

}  // namespace winokit
