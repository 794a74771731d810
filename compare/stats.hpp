// compare's statistics (internal to compare/; see
// docs/compare.md): the distributions (normal, Student t via the regularized
// incomplete beta), mid-ranks, the rank tests (Mann-Whitney U, Wilcoxon
// signed-rank) with their exact null distributions, the Hodges-Lehmann
// estimates with their distribution-free confidence intervals, Welch's t-test,
// and the Holm and Benjamini-Hochberg p-value adjustments. Pure functions over
// values; conventions follow R's stats package unless said otherwise.
//
// Sizes: ranks are O(n log n); the Hodges-Lehmann medians and bounds are
// found by selection over the sorted samples (O((n1 + n2) * 64) per order
// statistic, exact, no n1*n2 enumeration), so 100 000 rounds a side stay
// fast. The exact null distributions are used only below 50 values.
//
// Out-of-domain inputs (NaN, df <= 0, empty samples where a value is
// needed) give NaN from the distribution functions; the tests and
// estimates return documented neutral values instead (p = 1, shift 0).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace runner::compare::stats {

// Exact null distributions are used below this many values per sample.
inline constexpr uint64_t kExactLimit = 50;

enum class Alternative { kTwoSided, kGreater, kLess };
// kAuto: exact when every sample has < kExactLimit values and there are no
// ties (signed-rank: and no zero difference), as R does; kNormal: always
// the normal approximation.
enum class Method { kAuto, kNormal };

// Median (mean of the two middle values for an even count); 0 when empty.
double median(std::span<const double> values);
// The q-quantile (0 <= q <= 1) by linear interpolation between the closest
// ranks (R's type 7); 0 when empty.
double quantile(std::span<const double> values, double q);
// Sample mean and standard deviation (divisor n - 1; 0 below two values).
double mean(std::span<const double> values);
double stdev(std::span<const double> values);

// 1-based mid-ranks of `values` in their order, and the tie term
// sum(t^3 - t) over groups of t equal values.
struct MidRanks {
  std::vector<double> ranks;
  double tie_term = 0;
  bool ties = false;
};
MidRanks mid_ranks(std::span<const double> values);

// The distributions are Boost.Math's; NaN for a NaN argument or df <= 0.
// Standard normal CDF and its inverse (-inf/+inf for p <= 0 / p >= 1).
double normal_cdf(double z);
double normal_quantile(double p);
// Regularized incomplete beta I_x(a, b) (0 for x <= 0, 1 for x >= 1).
double incomplete_beta(double x, double a, double b);
// Student t with df > 0 (non-integer allowed) degrees of freedom.
double t_cdf(double t, double df);
double t_quantile(double p, double df);

// Null distributions: P(U = u) for u = 0 .. m*n (Mann-Whitney, no ties;
// O(m^2 n^2 / 4) time) and P(V = v) for v = 0 .. n(n+1)/2 (signed-rank, no
// ties; 2^n must stay finite). Meant for sizes below kExactLimit.
std::vector<double> mann_whitney_null(uint64_t m, uint64_t n);
std::vector<double> signed_rank_null(uint64_t n);

struct RankTest {
  double statistic = 0;  // U of the first sample, or V = W+
  double p_value = 1;
  bool exact = false;
  uint64_t n = 0;  // signed-rank: differences used (zeros dropped)
};
// U_x = #{x_i > y_j} + #{x_i = y_j}/2 (R's W of wilcox.test(x, y)). Exact
// p from the counted null; otherwise normal with tie and continuity
// correction. An empty sample gives p = 1; all values tied gives p = 1.
RankTest mann_whitney_u(std::span<const double> x, std::span<const double> y,
                        Alternative alternative = Alternative::kTwoSided,
                        Method method = Method::kAuto);
// Wilcoxon signed-rank on differences d (zeros dropped, as Wilcoxon and R):
// V = sum of the mid-ranks of |d_i| over positive d_i. No nonzero
// difference gives p = 1.
RankTest wilcoxon_signed_rank(std::span<const double> d,
                              Alternative alternative = Alternative::kTwoSided,
                              Method method = Method::kAuto);

// A location shift with its distribution-free confidence interval.
struct ShiftEstimate {
  double estimate = 0, ci_low = 0, ci_high = 0;
  double coverage = 0;  // achieved (exact) or nominal (normal) confidence
  bool exact = false;
};
// Two-sample Hodges-Lehmann shift of x - y = median of the n1*n2 differences
// x_i - y_j, and the Moses interval [D(k), D(n1 n2 + 1 - k)] with k the
// largest integer such that P0(U <= k - 1) <= (1 - confidence)/2: from the
// exact null when exact (as the test: both < 50, no ties), else
// k = floor(n1 n2/2 - z sigma_U + 1/2) (continuity-corrected normal,
// sigma_U without tie correction); k is kept in [1, (n1 n2 + 1)/2], so too
// small samples give the whole range (its coverage reported). R's
// non-exact interval (root finding on the statistic) can differ slightly.
ShiftEstimate hodges_lehmann_shift(std::span<const double> x,
                                   std::span<const double> y, double confidence,
                                   Method method = Method::kAuto);
// Paired (one-sample) Hodges-Lehmann: median of the n(n+1)/2 Walsh averages
// (d_i + d_j)/2, i <= j, over ALL differences (zeros included: the
// estimator's definition; R drops zeros here too), with [A(k), A(M + 1 - k)]
// from the signed-rank null of n in the same way (exact when n < 50 and the
// d_i are distinct, else normal without tie correction).
ShiftEstimate hodges_lehmann_paired(std::span<const double> d,
                                    double confidence,
                                    Method method = Method::kAuto);

// The k-th smallest (1-based) of x_i - y_j (x and y sorted ascending) and of
// the Walsh averages of d (sorted ascending), by bisection over the
// ordered bit patterns of doubles with an O(n) count per step.
double kth_difference(std::span<const double> x, std::span<const double> y,
                      uint64_t k);
double kth_walsh_average(std::span<const double> d, uint64_t k);

// A difference d with standard error se, tested two-sided against 0: the
// statistic d / se, p and the interval d -+ q * se from Student's t with
// df degrees of freedom (the normal when df is infinite). A zero (or NaN)
// se gives the point itself: p = 1 when d = 0, else p = 0 with the
// statistic +-inf.
struct DifferenceTest {
  double statistic = 0, p_value = 1, ci_low = 0, ci_high = 0;
};
DifferenceTest test_difference(double d, double se, double df,
                               double confidence);

// One side of Welch's test.
struct MeanSummary {
  double mean = 0, stdev = 0;
  double n = 0;
};
struct WelchTest {
  double t = 0, df = 0, p_value = 1;
  double difference = 0, ci_low = 0, ci_high = 0;  // of mean(x) - mean(y)
};
// Welch's t on x - y (each n >= 2, stdev >= 0). A zero standard error
// gives p = 1 when the means are equal, else p = 0 (t = +-inf), the
// interval being the point; df is then n_x + n_y - 2.
WelchTest welch_t(const MeanSummary& x, const MeanSummary& y,
                  double confidence);

// One side of the median test: its median, quartiles and rounds.
struct QuartileSummary {
  double q1 = 0, median = 0, q3 = 0;
  double n = 0;
};
struct MedianTest {
  double z = 0, p_value = 1;
  double difference = 0, ci_low = 0, ci_high = 0;  // of median(x) - median(y)
};
// The difference of two medians known only from summary statistics (an
// integration that writes quartiles, not rounds): each median's standard
// error is sqrt(pi / 2) * sigma / sqrt(n), the large-sample one of a
// normal sample, with sigma estimated from the interquartile range as
// IQR / 1.3490 (the normal's IQR in sigmas), so that outlier rounds move
// neither the estimate nor its error; then a two-sided normal test and
// interval. Each n >= 2, q1 <= median <= q3. A zero standard error gives
// p = 1 when the medians are equal, else p = 0, the interval being the
// point.
MedianTest median_difference(const QuartileSummary& x, const QuartileSummary& y,
                             double confidence);

// Adjusted p-values in the order given (R's p.adjust "holm" and "BH").
std::vector<double> holm_adjust(std::span<const double> p);
std::vector<double> benjamini_hochberg_adjust(std::span<const double> p);

}  // namespace runner::compare::stats
