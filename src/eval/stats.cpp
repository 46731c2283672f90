#include "winokit/eval/stats.hpp"

#include <algorithm>
#include <boost/math/distributions/binomial.hpp>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <numeric>

#include "winokit/core/error.hpp"
#include "winokit/core/rng.hpp"

namespace winokit {

namespace bm = boost::math;

double normal_cdf(double x) {
  return bm::cdf(bm::normal_distribution<double>(), x);
}
double normal_quantile(double p) {
  return bm::quantile(bm::normal_distribution<double>(), p);
}
double student_t_quantile(double p, double df) {
  return bm::quantile(bm::students_t_distribution<double>(df), p);
}
double student_t_cdf(double x, double df) {
  return bm::cdf(bm::students_t_distribution<double>(df), x);
}

double quantile_linear(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return kNaN;
  q = std::clamp(q, 0.0, 1.0);
  double pos = q * static_cast<double>(sorted.size() - 1);
  auto lo = static_cast<std::size_t>(std::floor(pos));
  std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

std::optional<FoldInterval> fold_t_interval(const std::vector<double>& values, int folds,
                                            double confidence) {
  if (folds < 2) throw UsageError("the fold interval needs at least 2 folds");
  const std::size_t n = values.size();
  const auto k = static_cast<std::size_t>(folds);
  if (n < k) return std::nullopt;
  FoldInterval out;
  std::size_t start = 0;
  for (std::size_t f = 0; f < k; ++f) {
    std::size_t size = n / k + (f < n % k ? 1 : 0);
    double sum = std::accumulate(values.begin() + static_cast<std::ptrdiff_t>(start),
                                 values.begin() + static_cast<std::ptrdiff_t>(start + size), 0.0);
    out.fold_means.push_back(sum / static_cast<double>(size));
    start += size;
  }
  double mean =
      std::accumulate(out.fold_means.begin(), out.fold_means.end(), 0.0) / static_cast<double>(k);
  double ss = 0;
  for (double m : out.fold_means)
    ss += (m - mean) * (m - mean);
  double sd = std::sqrt(ss / static_cast<double>(k - 1));
  double t = student_t_quantile((1.0 + confidence) / 2.0, static_cast<double>(k - 1));
  double half = t * sd / std::sqrt(static_cast<double>(k));
  out.mean = mean;
  out.ci = {mean - half, mean + half};
  return out;
}

std::optional<FoldInterval> paper_fold_t_interval(const std::vector<double>& values, int folds,
                                                  double confidence, std::uint64_t seed) {
  const std::vector<std::size_t> order = python_shuffled_range(values.size(), seed);
  std::vector<double> shuffled;
  shuffled.reserve(values.size());
  for (std::size_t i : order)
    shuffled.push_back(values[i]);
  auto out = fold_t_interval(shuffled, folds, confidence);
  if (out) out->ci.low = std::max(out->ci.low, 0.0);
  return out;
}

namespace {

// Linear-interpolated quantile of B values given as a histogram over integer counts
// 0..hist.size()-1 (value = (index + offset) / scale), without materialising the B values.
double histogram_quantile(const std::vector<std::uint32_t>& hist, std::size_t total, double q,
                          double offset, double scale) {
  q = std::clamp(q, 0.0, 1.0);
  double pos = q * static_cast<double>(total - 1);
  auto lo = static_cast<std::size_t>(std::floor(pos));
  double frac = pos - static_cast<double>(lo);
  // Value at sorted position j.
  auto value_at = [&](std::size_t j) {
    std::size_t seen = 0;
    for (std::size_t v = 0; v < hist.size(); ++v) {
      seen += hist[v];
      if (j < seen) return (static_cast<double>(v) + offset) / scale;
    }
    return (static_cast<double>(hist.size() - 1) + offset) / scale;
  };
  double a = value_at(lo);
  double b = value_at(std::min(lo + 1, total - 1));
  return a + (b - a) * frac;
}

}  // namespace

BootstrapIntervals bootstrap_proportions(const std::vector<std::uint8_t>& items,
                                         std::size_t metrics, std::size_t resamples,
                                         double confidence, std::uint64_t seed) {
  BootstrapIntervals out;
  const std::size_t n = items.size();
  if (n == 0 || resamples < 2 || metrics == 0 || metrics > 3) return out;
  const double alpha = 1.0 - confidence;
  // hist[m][c]: number of resamples in which metric m had c successes.
  std::vector<std::vector<std::uint32_t>> hist(metrics, std::vector<std::uint32_t>(n + 1, 0));
  Rng rng(seed);
  const auto bound = static_cast<std::uint32_t>(n);
  for (std::size_t b = 0; b < resamples; ++b) {
    std::array<std::uint32_t, 3> count{};
    for (std::size_t i = 0; i < n; ++i) {
      std::uint8_t bits = items[rng.below(bound)];
      count[0] += bits & 1u;
      count[1] += (bits >> 1) & 1u;
      count[2] += (bits >> 2) & 1u;
    }
    for (std::size_t m = 0; m < metrics; ++m)
      ++hist[m][count[m]];
  }
  const double scale = static_cast<double>(n);
  for (std::size_t m = 0; m < metrics; ++m) {
    out.percentile[m] = {histogram_quantile(hist[m], resamples, alpha / 2, 0, scale),
                         histogram_quantile(hist[m], resamples, 1 - alpha / 2, 0, scale)};
    // BCa: the estimate is k / n; resampled counts below k and at k give the mid-rank share.
    std::size_t k = 0;
    for (auto bits : items)
      k += (bits >> m) & 1u;
    std::size_t below = 0, at_or_below = 0;
    for (std::size_t c = 0; c <= n; ++c) {
      if (c < k) below += hist[m][c];
      if (c <= k) at_or_below += hist[m][c];
    }
    double share =
        static_cast<double>(below + at_or_below) / (2.0 * static_cast<double>(resamples));
    const double floor_share = 0.5 / static_cast<double>(resamples);
    share = std::clamp(share, floor_share, 1.0 - floor_share);
    const double z0 = normal_quantile(share);
    // Jackknife: leaving out a success gives (k-1)/(n-1), a failure k/(n-1).
    double accel = 0.0;
    if (n > 1) {
      const double with_one = (static_cast<double>(k) - 1) / (scale - 1);
      const double with_zero = static_cast<double>(k) / (scale - 1);
      const double jk_mean =
          (static_cast<double>(k) * with_one + static_cast<double>(n - k) * with_zero) / scale;
      const double d1 = jk_mean - with_one, d0 = jk_mean - with_zero;
      const double num =
          static_cast<double>(k) * d1 * d1 * d1 + static_cast<double>(n - k) * d0 * d0 * d0;
      const double den = static_cast<double>(k) * d1 * d1 + static_cast<double>(n - k) * d0 * d0;
      if (den > 0) accel = num / (6.0 * std::pow(den, 1.5));
    }
    auto adjusted = [&](double a) {
      const double z = normal_quantile(a);
      return normal_cdf(z0 + (z0 + z) / (1.0 - accel * (z0 + z)));
    };
    out.bca[m] = {histogram_quantile(hist[m], resamples, adjusted(alpha / 2), 0, scale),
                  histogram_quantile(hist[m], resamples, adjusted(1 - alpha / 2), 0, scale)};
  }
  return out;
}

std::array<Interval, 3> paired_bootstrap_difference(const std::vector<std::uint8_t>& a,
                                                    const std::vector<std::uint8_t>& b,
                                                    std::size_t metrics, std::size_t resamples,
                                                    double confidence, std::uint64_t seed) {
  std::array<Interval, 3> out;
  const std::size_t n = a.size();
  if (n == 0 || n != b.size() || resamples < 2 || metrics == 0 || metrics > 3) return out;
  const double alpha = 1.0 - confidence;
  // Differences range over -n..n; histogram index = difference + n.
  std::vector<std::vector<std::uint32_t>> hist(metrics, std::vector<std::uint32_t>(2 * n + 1, 0));
  Rng rng(seed);
  const auto bound = static_cast<std::uint32_t>(n);
  for (std::size_t r = 0; r < resamples; ++r) {
    std::array<long, 3> diff{};
    for (std::size_t i = 0; i < n; ++i) {
      std::uint32_t j = rng.below(bound);
      for (std::size_t m = 0; m < 3; ++m) {
        diff[m] += static_cast<long>((a[j] >> m) & 1u) - static_cast<long>((b[j] >> m) & 1u);
      }
    }
    for (std::size_t m = 0; m < metrics; ++m) {
      ++hist[m][static_cast<std::size_t>(diff[m] + static_cast<long>(n))];
    }
  }
  const double scale = static_cast<double>(n);
  const double offset = -static_cast<double>(n);
  for (std::size_t m = 0; m < metrics; ++m) {
    out[m] = {histogram_quantile(hist[m], resamples, alpha / 2, offset, scale),
              histogram_quantile(hist[m], resamples, 1 - alpha / 2, offset, scale)};
  }
  return out;
}

double binomial_upper_tail(std::size_t k, std::size_t n, double p) {
  if (k == 0) return 1.0;
  if (k > n) return 0.0;
  bm::binomial_distribution<double> dist(static_cast<double>(n), p);
  return bm::cdf(bm::complement(dist, static_cast<double>(k - 1)));
}

double mcnemar_exact_p(std::size_t b, std::size_t c) {
  const std::size_t n = b + c;
  if (n == 0) return 1.0;
  bm::binomial_distribution<double> dist(static_cast<double>(n), 0.5);
  return std::min(1.0, 2.0 * bm::cdf(dist, static_cast<double>(std::min(b, c))));
}

Correlation pearson(const std::vector<double>& x, const std::vector<double>& y) {
  Correlation out;
  out.n = x.size();
  if (x.size() != y.size() || x.size() < 3) return out;
  const double n = static_cast<double>(x.size());
  const double mx = std::accumulate(x.begin(), x.end(), 0.0) / n;
  const double my = std::accumulate(y.begin(), y.end(), 0.0) / n;
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  if (sxx <= 0 || syy <= 0) return out;
  out.r = std::clamp(sxy / std::sqrt(sxx * syy), -1.0, 1.0);
  const double df = n - 2;
  if (std::abs(out.r) >= 1.0) {
    out.p = 0.0;
  } else {
    const double t = out.r * std::sqrt(df / (1 - out.r * out.r));
    out.p = 2.0 * bm::cdf(bm::complement(bm::students_t_distribution<double>(df), std::abs(t)));
  }
  return out;
}

std::vector<double> average_ranks(const std::vector<double>& values) {
  std::vector<std::size_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return values[a] < values[b]; });
  std::vector<double> ranks(values.size());
  std::size_t i = 0;
  while (i < order.size()) {
    std::size_t j = i;
    while (j + 1 < order.size() && values[order[j + 1]] == values[order[i]])
      ++j;
    const double rank = (static_cast<double>(i) + static_cast<double>(j)) / 2.0 + 1.0;
    for (std::size_t k = i; k <= j; ++k)
      ranks[order[k]] = rank;
    i = j + 1;
  }
  return ranks;
}

Correlation spearman(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size()) return {};
  return pearson(average_ranks(x), average_ranks(y));
}

}  // namespace winokit
