#include "winokit/eval/probe.hpp"

#include <linear.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <thread>

#include "model/kernels/parallel.hpp"
#include "winokit/core/error.hpp"
#include "winokit/core/rng.hpp"
#include "winokit/model/compute.hpp"

namespace winokit {

const char* to_string(ProbeTask task) {
  switch (task) {
    case ProbeTask::PairText:
      return "pair-text";
    case ProbeTask::PairImage:
      return "pair-image";
    case ProbeTask::TextOnly:
      return "text-only";
  }
  return "?";
}

namespace {

void append(std::vector<float>& out, const float* p, int n) {
  out.insert(out.end(), p, p + n);
}

// Row-major C = op(A) op(B) (+ C when `accumulate`), on winokit's kernels (compute.hpp): the
// same bits on every CPU.
void gemm(char ta, char tb, int m, int n, int k, const float* a, int lda, const float* b, int ldb,
          float* c, int ldc, bool accumulate = false) {
  sgemm(ta == 'T', tb == 'T', m, n, k, a, lda, b, ldb, c, ldc, accumulate);
}

}  // namespace

std::vector<bool> paper_split(const WinogroundDataset& dataset) {
  // The 100 test ids of split_train_test.py in github.com/ajd12342/why-winoground-hard (the
  // other 300 of ids 0-399 are its train_idxs).
  static constexpr int kTestIds[] = {
      12,  18,  36,  37,  38,  40,  42,  55,  56,  66,  67,  88,  89,  91,  92,  94,  96,
      97,  99,  101, 102, 103, 111, 113, 115, 123, 124, 133, 136, 141, 144, 147, 150, 152,
      153, 162, 168, 169, 171, 172, 178, 181, 187, 189, 190, 194, 198, 202, 211, 214, 215,
      216, 218, 219, 220, 223, 232, 238, 241, 254, 257, 262, 265, 275, 283, 284, 287, 293,
      299, 303, 318, 319, 322, 323, 338, 345, 347, 348, 349, 350, 351, 355, 359, 364, 365,
      368, 372, 373, 375, 377, 379, 380, 381, 383, 387, 388, 389, 392, 393, 398};
  constexpr std::size_t kItems = 400;
  if (dataset.examples.size() != kItems) {
    throw UsageError("the paper's probe split lists Winoground's 400 ids; this dataset has " +
                         std::to_string(dataset.examples.size()) + " examples",
                     "use --split stratified (and no --paper-split) to draw a stratified split");
  }
  std::vector<bool> train(kItems, true);
  for (int id : kTestIds) {
    const auto index = dataset.find(std::to_string(id));
    if (!index) {
      throw UsageError("the paper's probe split needs Winoground id " + std::to_string(id) +
                       ", which this dataset lacks");
    }
    train[*index] = false;
  }
  return train;
}

const char* to_string(ProbeSplitKind kind) {
  switch (kind) {
    case ProbeSplitKind::Stratified:
      return "stratified";
    case ProbeSplitKind::CollapsedTag:
      return "collapsed";
    case ProbeSplitKind::Random:
      return "random";
    case ProbeSplitKind::Paper:
      return "paper";
  }
  return "?";
}

std::string paper_stratum(const WinogroundExample& example) {
  // The tags "Why is Winoground Hard?" stratifies its probes' split by.
  static constexpr const char* kStrata[] = {"Pragmatics", "Symbolic", "Morpheme-Level"};
  std::string found;
  int count = 0;
  for (const char* tag : kStrata) {
    if (std::find(example.secondary_tags.begin(), example.secondary_tags.end(), tag) !=
        example.secondary_tags.end()) {
      found = tag;
      ++count;
    }
  }
  if (count == 0) return "None";
  return count == 1 ? found : "Both";
}

std::string probe_stratum(const WinogroundExample& example, ProbeSplitKind kind) {
  switch (kind) {
    case ProbeSplitKind::Stratified:
      return paper_stratum(example);
    case ProbeSplitKind::CollapsedTag:
      return example.collapsed_tag;
    default:
      return "all";
  }
}

std::vector<bool> stratified_split(const WinogroundDataset& dataset, double train_share,
                                   std::uint64_t seed, ProbeSplitKind kind) {
  if (kind == ProbeSplitKind::Paper) return paper_split(dataset);
  if (!(train_share > 0 && train_share < 1)) {
    throw UsageError("the train share must be between 0 and 1 (exclusive)");
  }
  const std::size_t n = dataset.examples.size();
  std::map<std::string, std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < n; ++i) {
    groups[probe_stratum(dataset.examples[i], kind)].push_back(i);
  }
  const auto total = static_cast<std::size_t>(std::llround(train_share * static_cast<double>(n)));
  std::vector<std::size_t> quota;
  std::vector<std::pair<double, std::size_t>> remainders;  // (remainder, group), largest first
  std::size_t assigned = 0, g = 0;
  for (const auto& [tag, members] : groups) {
    const double exact = train_share * static_cast<double>(members.size());
    quota.push_back(static_cast<std::size_t>(std::floor(exact)));
    assigned += quota.back();
    remainders.emplace_back(exact - std::floor(exact), g++);
  }
  std::stable_sort(remainders.begin(), remainders.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t r = 0; assigned < total && r < remainders.size(); ++r, ++assigned) {
    ++quota[remainders[r].second];
  }
  std::vector<bool> train(n, false);
  Rng rng(derive_seed(seed, "probe/split"));
  g = 0;
  for (auto& [tag, members] : groups) {
    shuffle(members, rng);
    for (std::size_t j = 0; j < quota[g]; ++j)
      train[members[j]] = true;
    ++g;
  }
  return train;
}

std::vector<bool> probe_split(const WinogroundDataset& dataset, const ProbeOptions& options,
                              std::uint64_t seed) {
  const ProbeSplitKind kind = options.paper_split ? ProbeSplitKind::Paper : options.split;
  return stratified_split(dataset, options.train_share, seed, kind);
}

std::string describe_split(const ProbeOptions& options) {
  const ProbeSplitKind kind = options.paper_split ? ProbeSplitKind::Paper : options.split;
  const std::string share = std::to_string(options.train_share).substr(0, 4);
  switch (kind) {
    case ProbeSplitKind::Paper:
      return "the paper's fixed split of the items for every seed (300 train / 100 test ids, "
             "split_train_test.py of the official code)";
    case ProbeSplitKind::CollapsedTag:
      return "per seed, the items split (train share " + share +
             ") stratified by collapsed tag (Object / Relation / Both)";
    case ProbeSplitKind::Random:
      return "per seed, the items split at random (train share " + share + "), not stratified";
    default:
      return "per seed, the items split (train share " + share +
             ") stratified as the paper did by tag: Pragmatics / Symbolic / Morpheme-Level, "
             "Both (an item with two or more of these is in Both only) and None";
  }
}

ProbeData probe_data(ProbeTask task, const ProbeLayer& layer, const ProbeEmbeddings& embeddings,
                     std::size_t examples, std::uint64_t order_seed) {
  ProbeData d;
  Rng rng(derive_seed(order_seed, "probe/order"));
  const int di = layer.image_dim, dt = layer.text_dim;
  auto img = [&](std::size_t row) { return &layer.image[row * static_cast<std::size_t>(di)]; };
  auto txt = [&](std::size_t row) { return &layer.text[row * static_cast<std::size_t>(dt)]; };
  switch (task) {
    case ProbeTask::PairText:
    case ProbeTask::PairImage: {
      if (!layer.pairs.empty()) {
        // Joint per-pair states: the two pairs' vectors, with the same draws as below.
        const auto dp = static_cast<std::size_t>(layer.pair_dim);
        auto pair = [&](std::size_t i, std::size_t c, std::size_t k) {
          return &layer.pairs[(4 * i + 2 * c + k) * dp];
        };
        d.inputs = 2 * layer.pair_dim;
        for (std::size_t i = 0; i < examples; ++i) {
          for (std::size_t j = 0; j < 2; ++j) {
            const bool correct_first = (rng.next() >> 63) != 0;
            const std::size_t first = correct_first ? j : 1 - j, second = 1 - first;
            if (task == ProbeTask::PairText) {  // image j with caption `first`, then `second`
              append(d.x, pair(i, first, j), layer.pair_dim);
              append(d.x, pair(i, second, j), layer.pair_dim);
            } else {  // caption j with image `first`, then `second`
              append(d.x, pair(i, j, first), layer.pair_dim);
              append(d.x, pair(i, j, second), layer.pair_dim);
            }
            d.y.push_back(correct_first ? 1.0f : 0.0f);
            d.item.push_back(i);
          }
        }
        break;
      }
      d.inputs = 2 * (di + dt);
      for (std::size_t i = 0; i < examples; ++i) {
        for (std::size_t j = 0; j < 2; ++j) {
          const bool correct_first = (rng.next() >> 63) != 0;
          const std::size_t first = correct_first ? j : 1 - j, second = 1 - first;
          if (task == ProbeTask::PairText) {  // image j with caption `first`, then `second`
            append(d.x, img(2 * i + j), di);
            append(d.x, txt(2 * i + first), dt);
            append(d.x, img(2 * i + j), di);
            append(d.x, txt(2 * i + second), dt);
          } else {  // caption j with image `first`, then `second`
            append(d.x, img(2 * i + first), di);
            append(d.x, txt(2 * i + j), dt);
            append(d.x, img(2 * i + second), di);
            append(d.x, txt(2 * i + j), dt);
          }
          d.y.push_back(correct_first ? 1.0f : 0.0f);
          d.item.push_back(i);
        }
      }
      break;
    }
    case ProbeTask::TextOnly: {
      d.inputs = 3 * dt;
      const std::size_t vrows = embeddings.variant_owner.size();
      for (std::size_t v = 0; v < vrows; ++v) {
        const std::size_t owner = embeddings.variant_owner[v];
        const std::size_t i = owner / 2, k = owner % 2;
        if (i >= examples) continue;
        const bool correct_first = (rng.next() >> 63) != 0;
        const std::size_t first = correct_first ? k : 1 - k;
        append(d.x, &layer.variants[v * static_cast<std::size_t>(dt)], dt);
        append(d.x, txt(2 * i + first), dt);
        append(d.x, txt(2 * i + 1 - first), dt);
        d.y.push_back(correct_first ? 1.0f : 0.0f);
        d.item.push_back(i);
      }
      break;
    }
  }
  return d;
}

ProbeMlp::ProbeMlp(int inputs, const MlpProbeOptions& options, std::uint64_t seed)
    : options_(options) {
  if (options.depth < 1 || options.hidden < 1 || options.epochs < 0 || options.batch_size < 1 ||
      !(options.learning_rate > 0)) {
    throw UsageError(
        "probe MLP options: depth, hidden and batch size must be positive, epochs "
        "not negative and the learning rate positive");
  }
  sizes_.push_back(inputs);
  for (int l = 1; l < options.depth; ++l)
    sizes_.push_back(options.hidden);
  sizes_.push_back(1);
  Rng rng(derive_seed(seed, "probe/init"));
  for (std::size_t l = 0; l + 1 < sizes_.size(); ++l) {
    // torch.nn.Linear's default: U(-1/sqrt(in), 1/sqrt(in)) for weights and bias.
    const double bound = 1.0 / std::sqrt(static_cast<double>(sizes_[l]));
    std::vector<float> w(static_cast<std::size_t>(sizes_[l]) * sizes_[l + 1]);
    std::vector<float> b(static_cast<std::size_t>(sizes_[l + 1]));
    for (float& x : w)
      x = static_cast<float>((2 * rng.uniform() - 1) * bound);
    for (float& x : b)
      x = static_cast<float>((2 * rng.uniform() - 1) * bound);
    params_.push_back(std::move(w));
    params_.push_back(std::move(b));
  }
  for (const auto& p : params_) {
    m_.emplace_back(p.size(), 0.0f);
    v_.emplace_back(p.size(), 0.0f);
  }
}

void ProbeMlp::forward(const float* x, int rows, std::vector<std::vector<float>>& acts) const {
  const std::size_t layers = sizes_.size() - 1;
  acts.resize(layers);
  const float* in = x;
  for (std::size_t l = 0; l < layers; ++l) {
    const int k = sizes_[l], n = sizes_[l + 1];
    auto& out = acts[l];
    out.resize(static_cast<std::size_t>(rows) * n);
    gemm('N', 'T', rows, n, k, in, k, params_[2 * l].data(), k, out.data(), n);
    const float* b = params_[2 * l + 1].data();
    const bool relu = l + 1 < layers;
    for (int r = 0; r < rows; ++r) {
      float* o = &out[static_cast<std::size_t>(r) * n];
      for (int j = 0; j < n; ++j) {
        const float v = o[j] + b[j];
        o[j] = relu ? std::max(v, 0.0f) : v;
      }
    }
    in = out.data();
  }
}

void ProbeMlp::backward(const float* x, const float* y, int rows,
                        const std::vector<std::vector<float>>& acts,
                        std::vector<std::vector<float>>& grad) const {
  const std::size_t layers = sizes_.size() - 1;
  grad.resize(params_.size());
  std::vector<float> delta(static_cast<std::size_t>(rows));  // d loss / d logit
  const float inv = 1.0f / static_cast<float>(rows);
  for (int r = 0; r < rows; ++r) {
    const float z = acts.back()[static_cast<std::size_t>(r)];
    const float p = z >= 0 ? 1.0f / (1.0f + std::exp(-z)) : std::exp(z) / (1.0f + std::exp(z));
    delta[static_cast<std::size_t>(r)] = (p - y[r]) * inv;
  }
  std::vector<float> next;
  for (std::size_t l = layers; l-- > 0;) {
    const int k = sizes_[l], n = sizes_[l + 1];
    const float* in = l == 0 ? x : acts[l - 1].data();
    auto& gw = grad[2 * l];
    auto& gb = grad[2 * l + 1];
    gw.resize(params_[2 * l].size());
    gb.assign(static_cast<std::size_t>(n), 0.0f);
    gemm('T', 'N', n, k, rows, delta.data(), n, in, k, gw.data(), k);
    for (int r = 0; r < rows; ++r) {
      const float* d = &delta[static_cast<std::size_t>(r) * n];
      for (int j = 0; j < n; ++j)
        gb[static_cast<std::size_t>(j)] += d[j];
    }
    if (l == 0) break;
    next.resize(static_cast<std::size_t>(rows) * k);
    gemm('N', 'N', rows, k, n, delta.data(), n, params_[2 * l].data(), k, next.data(), k);
    const auto& a = acts[l - 1];  // post-ReLU: zero where the ReLU was off
    for (std::size_t t = 0; t < next.size(); ++t)
      if (a[t] <= 0) next[t] = 0;
    delta.swap(next);
  }
}

void ProbeMlp::fit(const ProbeData& data, const std::vector<std::size_t>& train,
                   std::uint64_t seed) {
  if (train.empty()) throw UsageError("the probe's training split is empty");
  Rng rng(derive_seed(seed, "probe/batches"));
  std::vector<std::size_t> order = train;
  const auto in = static_cast<std::size_t>(data.inputs);
  std::vector<float> xb, yb;
  std::vector<std::vector<float>> acts, grad;
  constexpr double kBeta1 = 0.9, kBeta2 = 0.999, kEps = 1e-8;
  const std::size_t batch = static_cast<std::size_t>(options_.batch_size);
  for (int epoch = 0; epoch < options_.epochs; ++epoch) {
    shuffle(order, rng);
    for (std::size_t start = 0; start < order.size(); start += batch) {
      const std::size_t rows = std::min(batch, order.size() - start);
      xb.resize(rows * in);
      yb.resize(rows);
      for (std::size_t r = 0; r < rows; ++r) {
        const std::size_t src = order[start + r];
        std::copy_n(&data.x[src * in], in, &xb[r * in]);
        yb[r] = data.y[src];
      }
      forward(xb.data(), static_cast<int>(rows), acts);
      backward(xb.data(), yb.data(), static_cast<int>(rows), acts, grad);
      ++step_;
      const double bc1 = 1 - std::pow(kBeta1, static_cast<double>(step_));
      const double bc2 = 1 - std::pow(kBeta2, static_cast<double>(step_));
      const auto step_size = static_cast<float>(options_.learning_rate / bc1);
      const auto inv_sqrt_bc2 = static_cast<float>(1 / std::sqrt(bc2));
      const auto b1 = static_cast<float>(kBeta1), b2 = static_cast<float>(kBeta2);
      const auto eps = static_cast<float>(kEps);
      for (std::size_t p = 0; p < params_.size(); ++p) {
        float* w = params_[p].data();
        float* m = m_[p].data();
        float* v = v_[p].data();
        const float* g = grad[p].data();
        const auto count = static_cast<std::ptrdiff_t>(params_[p].size());
        detail::parallel_for(
            count,
            [&](std::ptrdiff_t t) {
              m[t] = b1 * m[t] + (1 - b1) * g[t];
              v[t] = b2 * v[t] + (1 - b2) * g[t] * g[t];
              w[t] -= step_size * m[t] / (std::sqrt(v[t]) * inv_sqrt_bc2 + eps);
            },
            std::ptrdiff_t{65537});
      }
    }
  }
}

std::vector<float> ProbeMlp::logits(const ProbeData& data,
                                    const std::vector<std::size_t>& rows) const {
  const auto in = static_cast<std::size_t>(data.inputs);
  std::vector<float> xb(rows.size() * in);
  for (std::size_t r = 0; r < rows.size(); ++r)
    std::copy_n(&data.x[rows[r] * in], in, &xb[r * in]);
  std::vector<std::vector<float>> acts;
  if (rows.empty()) return {};
  forward(xb.data(), static_cast<int>(rows.size()), acts);
  return acts.back();
}

double ProbeMlp::loss_and_gradient(const ProbeData& data, const std::vector<std::size_t>& rows,
                                   std::vector<std::vector<float>>& gradient) const {
  const auto in = static_cast<std::size_t>(data.inputs);
  std::vector<float> xb(rows.size() * in), yb(rows.size());
  for (std::size_t r = 0; r < rows.size(); ++r) {
    std::copy_n(&data.x[rows[r] * in], in, &xb[r * in]);
    yb[r] = data.y[rows[r]];
  }
  std::vector<std::vector<float>> acts;
  const int n = static_cast<int>(rows.size());
  forward(xb.data(), n, acts);
  backward(xb.data(), yb.data(), n, acts, gradient);
  double loss = 0;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const double z = acts.back()[r];
    loss += std::max(z, 0.0) - z * yb[r] + std::log1p(std::exp(-std::abs(z)));
  }
  return loss / static_cast<double>(rows.size());
}

double probe_accuracy(const std::vector<float>& logits, const ProbeData& data,
                      const std::vector<std::size_t>& rows) {
  if (rows.empty()) return 0;
  std::size_t right = 0;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const bool positive = data.y[rows[r]] > 0.5f;
    if (positive ? logits[r] > 0 : logits[r] < 0) ++right;
  }
  return static_cast<double>(right) / static_cast<double>(rows.size());
}

ProbeResult run_mlp_probe(ProbeTask task, const WinogroundDataset& dataset, const ProbeLayer& layer,
                          const ProbeEmbeddings& embeddings, const ProbeOptions& options,
                          const std::function<void()>& on_run) {
  if (options.seeds.empty()) throw UsageError("no probe seeds");
  const std::size_t n = dataset.examples.size();
  if (task == ProbeTask::TextOnly && embeddings.variant_owner.empty()) {
    throw UsageError("the text-only probe needs caption variants (--variants)");
  }
  ProbeResult result;
  result.task = to_string(task);
  result.layer = layer.name;
  // Per seed: the split, the instances, the control labels.
  struct SeedData {
    ProbeData data, control;
    std::vector<std::size_t> train, test;
  };
  std::vector<SeedData> per_seed;
  for (std::uint64_t seed : options.seeds) {
    const std::vector<bool> in_train = probe_split(dataset, options, seed);
    SeedData sd;
    sd.data = probe_data(task, layer, embeddings, n, seed);
    std::vector<std::size_t> items(n);
    std::iota(items.begin(), items.end(), std::size_t{0});
    Rng control_rng(derive_seed(seed, "probe/control"));
    shuffle(items, control_rng);
    std::vector<bool> flipped(n, false);
    for (std::size_t j = 0; j < n / 2; ++j)
      flipped[items[j]] = true;
    sd.control = sd.data;
    for (std::size_t r = 0; r < sd.control.rows(); ++r)
      if (flipped[sd.control.item[r]]) sd.control.y[r] = 1 - sd.control.y[r];
    for (std::size_t r = 0; r < sd.data.rows(); ++r)
      (in_train[sd.data.item[r]] ? sd.train : sd.test).push_back(r);
    if (sd.train.empty() || sd.test.empty()) {
      throw UsageError("the " + result.task + " probe has no " +
                       (sd.train.empty() ? "training" : "test") + " instances");
    }
    result.train_rows = sd.train.size();
    result.test_rows = sd.test.size();
    result.inputs = static_cast<std::size_t>(sd.data.inputs);
    result.train_items =
        static_cast<std::size_t>(std::count(in_train.begin(), in_train.end(), true));
    result.test_items = n - result.train_items;
    per_seed.push_back(std::move(sd));
  }
  // Every (seed, target/control) fit is independent: they run side by side, each on one
  // thread, so the results do not depend on the machine's core count and the small GEMMs
  // (batch 128) keep each core busy better than one fit on all cores does.
  result.runs.resize(options.seeds.size());
  const std::size_t jobs = 2 * options.seeds.size();
  const std::size_t workers = std::min<std::size_t>(
      jobs, static_cast<std::size_t>(options.parallel_fits > 0 ? options.parallel_fits
                                                               : compute_threads()));
  std::atomic<std::size_t> next{0};
  std::mutex progress;
  std::exception_ptr failure;
  auto work = [&] {
    set_compute_threads(1);
    for (std::size_t j; (j = next++) < jobs;) {
      try {
        const std::size_t si = j / 2;
        const bool target = j % 2 == 0;
        const std::uint64_t seed = options.seeds[si];
        const SeedData& sd = per_seed[si];
        const ProbeData& d = target ? sd.data : sd.control;
        ProbeMlp mlp(d.inputs, options.mlp, seed);
        mlp.fit(d, sd.train, derive_seed(seed, target ? "target" : "control"));
        ProbeRun& run = result.runs[si];
        run.seed = seed;
        (target ? run.target_train : run.control_train) =
            probe_accuracy(mlp.logits(d, sd.train), d, sd.train);
        (target ? run.target_test : run.control_test) =
            probe_accuracy(mlp.logits(d, sd.test), d, sd.test);
        std::lock_guard<std::mutex> lock(progress);
        if (on_run) on_run();
      } catch (...) {
        std::lock_guard<std::mutex> lock(progress);
        if (!failure) failure = std::current_exception();
        next = jobs;
      }
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t w = 1; w < workers; ++w)
    pool.emplace_back(work);
  {
    // The calling thread works too, with its own thread count restored afterwards.
    const int threads = compute_threads();
    work();
    set_compute_threads(threads);
  }
  for (auto& t : pool)
    t.join();
  if (failure) std::rethrow_exception(failure);
  auto minmax = [&](auto field, double& lo, double& hi) {
    lo = std::numeric_limits<double>::infinity();
    hi = -lo;
    for (const auto& r : result.runs) {
      lo = std::min(lo, r.*field);
      hi = std::max(hi, r.*field);
    }
  };
  minmax(&ProbeRun::target_test, result.target_min, result.target_max);
  minmax(&ProbeRun::control_test, result.control_min, result.control_max);
  return result;
}

namespace {
void quiet_print(const char*) {}
}  // namespace

SvmFit linear_svm(const std::vector<float>& points, int dim, const std::vector<int>& labels,
                  double c) {
  const std::size_t count = labels.size();
  if (count < 2 || points.size() != count * static_cast<std::size_t>(dim)) {
    throw UsageError("linear_svm: points and labels do not match");
  }
  set_print_string_function(&quiet_print);
  // Dense rows: features 1..dim, the bias feature dim + 1, then the terminator.
  const std::size_t stride = static_cast<std::size_t>(dim) + 2;
  std::vector<feature_node> nodes(count * stride);
  std::vector<feature_node*> rows(count);
  std::vector<double> y(count);
  for (std::size_t i = 0; i < count; ++i) {
    feature_node* row = &nodes[i * stride];
    for (int f = 0; f < dim; ++f)
      row[f] = {f + 1, points[i * static_cast<std::size_t>(dim) + static_cast<std::size_t>(f)]};
    row[dim] = {dim + 1, 1.0};
    row[dim + 1] = {-1, 0.0};
    rows[i] = row;
    y[i] = labels[i] > 0 ? 1.0 : -1.0;
  }
  problem prob{};
  prob.l = static_cast<int>(count);
  prob.n = dim + 1;
  prob.y = y.data();
  prob.x = rows.data();
  prob.bias = 1.0;
  parameter param{};
  param.solver_type = L2R_L1LOSS_SVC_DUAL;
  param.eps = 1e-4;
  param.C = c;
  if (const char* err = check_parameter(&prob, &param)) {
    throw UsageError(std::string("liblinear: ") + err);
  }
  // liblinear's dual solver draws its coordinate order from the C library's rand(): seeded the
  // same for every fit (as in a fresh process), a fit does not depend on the fits before it (the
  // layers asked for, a shard's slice of them).
  std::srand(1);
  model* m = train(&prob, &param);
  SvmFit fit;
  fit.separated = true;
  for (std::size_t i = 0; i < count; ++i) {
    if (predict(m, rows[i]) != y[i]) fit.separated = false;
  }
  double norm2 = 0;
  for (int f = 0; f < dim; ++f)
    norm2 += m->w[f] * m->w[f];
  fit.margin = norm2 > 0 ? 2 / std::sqrt(norm2) : std::numeric_limits<double>::infinity();
  free_and_destroy_model(&m);
  return fit;
}

SvmLayerResult svm_separability(const ProbeLayer& layer, const ProbeEmbeddings& embeddings,
                                const ProbeOptions& options) {
  SvmLayerResult r;
  r.layer = layer.name;
  const int dt = layer.text_dim;
  const std::size_t captions = layer.text.size() / static_cast<std::size_t>(dt);
  std::vector<std::vector<std::size_t>> variants(captions);
  for (std::size_t v = 0; v < embeddings.variant_owner.size(); ++v)
    variants[embeddings.variant_owner[v]].push_back(v);
  Rng rng(derive_seed(options.svm_seed, "probe/svm-control/" + layer.name));
  double target_sep = 0, control_sep = 0, target_margin = 0, control_margin = 0;
  for (std::size_t i = 0; 2 * i + 1 < captions; ++i) {
    if (variants[2 * i].empty() || variants[2 * i + 1].empty()) continue;
    std::vector<float> points;
    std::vector<int> labels;
    for (std::size_t k = 0; k < 2; ++k) {
      const std::size_t own = 2 * i + k;
      append(points, &layer.text[own * static_cast<std::size_t>(dt)], dt);
      labels.push_back(k == 0 ? 1 : -1);
      for (std::size_t v : variants[own]) {
        append(points, &layer.variants[v * static_cast<std::size_t>(dt)], dt);
        labels.push_back(k == 0 ? 1 : -1);
      }
    }
    const SvmFit t = linear_svm(points, dt, labels, options.svm_c);
    std::vector<int> shuffled = labels;
    shuffle(shuffled, rng);
    const SvmFit c = linear_svm(points, dt, shuffled, options.svm_c);
    ++r.items;
    if (t.separated) {
      target_sep += 1;
      target_margin += t.margin;
    }
    if (c.separated) {
      control_sep += 1;
      control_margin += c.margin;
    }
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  r.target_separated = r.items > 0 ? target_sep / static_cast<double>(r.items) : nan;
  r.control_separated = r.items > 0 ? control_sep / static_cast<double>(r.items) : nan;
  r.target_margin = target_sep > 0 ? target_margin / target_sep : nan;
  r.control_margin = control_sep > 0 ? control_margin / control_sep : nan;
  return r;
}

}  // namespace winokit
