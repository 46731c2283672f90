// Statistics for benchmark figures, each with its method stated where it is reported.
//
//   auto ci = winokit::paper_fold_t_interval(outcomes_in_id_order, 4, 0.95, 0); // the paper's
//   auto id = winokit::fold_t_interval(outcomes_in_id_order, 4, 0.95);   // folds in id order
//   auto boot = winokit::bootstrap_proportions(bits, 10000, 0.95, seed); // percentile and BCa
//   double p = winokit::binomial_upper_tail(123, 400, 0.25);             // P(X >= 123)
//   auto r = winokit::pearson(x, y);    // r and two-sided p (t with n-2 df)
//   double q = winokit::student_t_quantile(0.975, 3);                    // 3.182446...
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(eval);

namespace winokit {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Interval {
  double low = kNaN;
  double high = kNaN;
  bool valid() const { return std::isfinite(low) && std::isfinite(high); }
};

double normal_cdf(double x);
double normal_quantile(double p);
double student_t_quantile(double p, double df);
double student_t_cdf(double x, double df);

// Quantile of sorted data with linear interpolation between order statistics (numpy's default
// "linear" method): position q * (n - 1).
double quantile_linear(const std::vector<double>& sorted, double q);

// The t interval over folds in the given order: the values are split into `folds` contiguous
// groups as equal as possible (the first n % folds groups get one more, like numpy.array_split);
// the interval is mean(fold means) +- t_{(1+confidence)/2, folds-1} * sd(fold means) /
// sqrt(folds), with sd over folds - 1 degrees of freedom. nullopt when n < folds.
struct FoldInterval {
  double mean = kNaN;
  Interval ci;
  std::vector<double> fold_means;
};
std::optional<FoldInterval> fold_t_interval(const std::vector<double>& values, int folds,
                                            double confidence);

// The Winoground paper's interval (Thrush et al. 2022, Appendix A): the values (one per example,
// in id order) are taken in the order Python's `random.seed(seed); ids = list(range(n));
// random.shuffle(ids)` leaves (CPython's generator, winokit::PythonRandom), split into `folds`
// consecutive groups (100 each for 4 folds of 400; otherwise as fold_t_interval), and the t
// interval above is computed on the group means, its lower bound clipped at 0. With seed 0 and 4
// folds this reproduces the paper's published intervals to the digit.
std::optional<FoldInterval> paper_fold_t_interval(const std::vector<double>& values, int folds,
                                                  double confidence, std::uint64_t seed);

// Bootstrap of up to three proportions measured on the same items (bit m of items[i] is
// outcome m of item i). Each resample draws n items with replacement; the same resample serves
// all metrics. Percentile interval: linear-interpolated quantiles of the resampled proportions.
// BCa interval (Efron 1987) as in SciPy's scipy.stats.bootstrap(method="BCa"): bias correction
// z0 = Phi^-1 of the mid-rank share of resampled values below the estimate, acceleration from
// the jackknife.
struct BootstrapIntervals {
  std::array<Interval, 3> percentile;
  std::array<Interval, 3> bca;
};
BootstrapIntervals bootstrap_proportions(const std::vector<std::uint8_t>& items,
                                         std::size_t metrics, std::size_t resamples,
                                         double confidence, std::uint64_t seed);

// Paired bootstrap of the difference of proportions a - b on the same items (bits as above).
std::array<Interval, 3> paired_bootstrap_difference(const std::vector<std::uint8_t>& a,
                                                    const std::vector<std::uint8_t>& b,
                                                    std::size_t metrics, std::size_t resamples,
                                                    double confidence, std::uint64_t seed);

// Exact one-sided binomial test: P(X >= k) for X ~ Binomial(n, p).
double binomial_upper_tail(std::size_t k, std::size_t n, double p);

// Exact McNemar test (two-sided): b and c are the discordant counts;
// p = min(1, 2 * P(X <= min(b, c))) with X ~ Binomial(b + c, 1/2); 1 when b + c = 0.
double mcnemar_exact_p(std::size_t b, std::size_t c);

struct Correlation {
  std::size_t n = 0;
  double r = kNaN;  // NaN when a variable is constant or n < 3
  double p = kNaN;  // two-sided, t with n - 2 degrees of freedom
};
Correlation pearson(const std::vector<double>& x, const std::vector<double>& y);
// Spearman's rho: Pearson on average ranks (ties share the mean rank), p as for Pearson (as
// scipy.stats.spearmanr).
Correlation spearman(const std::vector<double>& x, const std::vector<double>& y);
std::vector<double> average_ranks(const std::vector<double>& values);

}  // namespace winokit
