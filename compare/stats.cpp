// compare's statistics: see stats.hpp for the conventions of each function.
#include "compare/stats.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <numeric>
#include <vector>

#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <boost/math/special_functions/beta.hpp>

namespace runner::compare::stats {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// A strict weak order that puts NaN last, so that sorting bad input is
// still well defined (the callers reject it; this only keeps us safe).
bool less_nan_last(double a, double b) {
  if (std::isnan(a)) return false;
  if (std::isnan(b)) return true;
  return a < b;
}

std::vector<double> sorted_copy(std::span<const double> values) {
  std::vector<double> out(values.begin(), values.end());
  std::sort(out.begin(), out.end(), less_nan_last);
  return out;
}

bool has_equal_neighbours(const std::vector<double>& sorted) {
  return std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end();
}

// Boost.Math with errors as values: nothing throws; a quantile of 0 or 1
// is -inf/+inf and a bad argument NaN (the callers check theirs first).
namespace policies = boost::math::policies;
using Policy =
    policies::policy<policies::domain_error<policies::ignore_error>,
                     policies::pole_error<policies::ignore_error>,
                     policies::overflow_error<policies::ignore_error>,
                     policies::evaluation_error<policies::ignore_error>>;
using Normal = boost::math::normal_distribution<double, Policy>;
using StudentsT = boost::math::students_t_distribution<double, Policy>;

// P(S <= j) and P(S >= j) under a null distribution given as P(S = s).
double lower_tail(const std::vector<double>& pmf, double j) {
  double sum = 0;
  for (size_t s = 0; s < pmf.size() && static_cast<double>(s) <= j; ++s)
    sum += pmf[s];
  return std::min(1.0, sum);
}

double upper_tail(const std::vector<double>& pmf, double j) {
  double sum = 0;
  for (size_t s = pmf.size(); s-- > 0 && static_cast<double>(s) >= j;)
    sum += pmf[s];
  return std::min(1.0, sum);
}

double exact_p(const std::vector<double>& pmf, double statistic,
               Alternative alternative) {
  if (alternative == Alternative::kGreater) return upper_tail(pmf, statistic);
  if (alternative == Alternative::kLess) return lower_tail(pmf, statistic);
  const double middle = static_cast<double>(pmf.size() - 1) / 2;
  const double one_side = statistic > middle ? upper_tail(pmf, statistic)
                                             : lower_tail(pmf, statistic);
  return std::min(1.0, 2 * one_side);
}

// Normal approximation with continuity correction (R's convention: 1/2
// towards the mean; two-sided p = 2 P(Z >= |z|)). sigma 0: p = 1.
double normal_p(double statistic, double mu, double sigma,
                Alternative alternative) {
  if (!(sigma > 0)) return 1;
  const double z = statistic - mu;
  if (alternative == Alternative::kGreater)
    return normal_cdf(-(z - 0.5) / sigma);
  if (alternative == Alternative::kLess) return normal_cdf((z + 0.5) / sigma);
  const double correction = z > 0 ? 0.5 : (z < 0 ? -0.5 : 0.0);
  return std::min(1.0, 2 * normal_cdf(-std::fabs((z - correction) / sigma)));
}

// The null of a rank statistic for a confidence interval: exact (pmf) or
// normal (mu, sigma, continuity-corrected).
struct NullModel {
  std::vector<double> pmf;  // empty: normal
  double mu = 0, sigma = 0;
};

double null_cdf(const NullModel& null, double j) {
  if (!null.pmf.empty()) return lower_tail(null.pmf, j);
  if (!(null.sigma > 0)) return j + 0.5 >= null.mu ? 1 : 0;
  return normal_cdf((j + 0.5 - null.mu) / null.sigma);
}

// The largest k in [1, (total + 1)/2] with P0(S <= k - 1) <= alpha/2.
uint64_t interval_rank(const NullModel& null, double confidence,
                       uint64_t total) {
  const double half_alpha = (1 - confidence) / 2;
  const uint64_t most = std::max<uint64_t>(1, (total + 1) / 2);
  if (null.pmf.empty()) {
    const double z = normal_quantile(1 - half_alpha);
    const double k = std::floor(null.mu - z * null.sigma + 0.5);
    if (!(k > 1)) return 1;
    return k >= static_cast<double>(most) ? most : static_cast<uint64_t>(k);
  }
  uint64_t k = 1;
  double below = 0;  // P0(S <= j)
  for (uint64_t j = 0; j < most && j < null.pmf.size(); ++j) {
    below += null.pmf[j];
    if (below > half_alpha * (1 + 1e-12)) break;
    k = j + 1;
  }
  return k;
}

// Estimate (the median order statistic) and interval of `total` ordered
// values given by kth(k), k 1-based.
template <class Kth>
ShiftEstimate shift_estimate(uint64_t total, const NullModel& null,
                             double confidence, const Kth& kth) {
  ShiftEstimate out;
  out.estimate = total % 2 == 1 ? kth((total + 1) / 2)
                                : (kth(total / 2) + kth(total / 2 + 1)) / 2;
  const uint64_t k = interval_rank(null, confidence, total);
  out.ci_low = kth(k);
  out.ci_high = kth(total + 1 - k);
  out.coverage = 1 - 2 * null_cdf(null, static_cast<double>(k - 1));
  out.exact = !null.pmf.empty();
  return out;
}

// Doubles mapped to unsigned integers in the same order (no NaN).
uint64_t order_key(double v) {
  const auto bits = std::bit_cast<uint64_t>(v);
  constexpr uint64_t kSign = uint64_t{1} << 63;
  return (bits & kSign) != 0 ? ~bits : (bits | kSign);
}

double from_order_key(uint64_t key) {
  constexpr uint64_t kSign = uint64_t{1} << 63;
  return std::bit_cast<double>((key & kSign) != 0 ? (key & ~kSign) : ~key);
}

// The smallest double v in [lo, hi] with count(v) >= k (count(hi) >= k and
// count non-decreasing): at most 64 steps. +0.0 for a zero result.
template <class Count>
double smallest_with_count(double lo, double hi, uint64_t k,
                           const Count& count) {
  uint64_t low = order_key(lo), high = order_key(hi);
  while (low < high) {
    const uint64_t mid = low + (high - low) / 2;
    if (count(from_order_key(mid)) >= k)
      high = mid;
    else
      low = mid + 1;
  }
  return from_order_key(low) + 0.0;
}

}  // namespace

double median(std::span<const double> values) {
  if (values.empty()) return 0;
  std::vector<double> v(values.begin(), values.end());
  const auto middle = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), middle, v.end(), less_nan_last);
  if (v.size() % 2 == 1) return *middle;
  const double lower = *std::max_element(v.begin(), middle, less_nan_last);
  return (lower + *middle) / 2;
}

double quantile(std::span<const double> values, double q) {
  if (values.empty()) return 0;
  std::vector<double> v(values.begin(), values.end());
  std::sort(v.begin(), v.end(), less_nan_last);
  const double pos =
      std::clamp(q, 0.0, 1.0) * static_cast<double>(v.size() - 1);
  const auto low = static_cast<size_t>(std::floor(pos));
  const size_t high = std::min(low + 1, v.size() - 1);
  return v[low] + (pos - static_cast<double>(low)) * (v[high] - v[low]);
}

double mean(std::span<const double> values) {
  if (values.empty()) return 0;
  const double sum = std::accumulate(values.begin(), values.end(), 0.0);
  return sum / static_cast<double>(values.size());
}

double stdev(std::span<const double> values) {
  if (values.size() < 2) return 0;
  const double center = mean(values);
  double squares = 0;
  for (const double v : values) squares += (v - center) * (v - center);
  return std::sqrt(squares / static_cast<double>(values.size() - 1));
}

MidRanks mid_ranks(std::span<const double> values) {
  MidRanks out;
  const size_t n = values.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return less_nan_last(values[a], values[b]);
  });
  out.ranks.assign(n, 0);
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && values[order[j]] == values[order[i]]) ++j;
    const double rank = static_cast<double>(i + 1 + j) / 2;
    for (size_t k = i; k < j; ++k) out.ranks[order[k]] = rank;
    const auto t = static_cast<double>(j - i);
    out.tie_term += t * t * t - t;
    out.ties = out.ties || j - i > 1;
    i = j;
  }
  return out;
}

double normal_cdf(double z) {
  if (std::isnan(z)) return kNaN;
  return boost::math::cdf(Normal(), z);
}

double normal_quantile(double p) {
  if (std::isnan(p)) return kNaN;
  if (p <= 0) return -kInf;
  if (p >= 1) return kInf;
  return boost::math::quantile(Normal(), p);
}

double incomplete_beta(double x, double a, double b) {
  if (std::isnan(x) || !(a > 0) || !(b > 0)) return kNaN;
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  return boost::math::ibeta(a, b, x, Policy());
}

double t_cdf(double t, double df) {
  if (std::isnan(t) || !(df > 0)) return kNaN;
  return boost::math::cdf(StudentsT(df), t);
}

double t_quantile(double p, double df) {
  if (std::isnan(p) || !(df > 0)) return kNaN;
  if (p <= 0) return -kInf;
  if (p >= 1) return kInf;
  return boost::math::quantile(StudentsT(df), p);
}

std::vector<double> mann_whitney_null(uint64_t m, uint64_t n) {
  // counts[j][u] = c(u; i, j), ways for i x's and j y's to give U = u:
  // c(u; i, j) = c(u - j; i - 1, j) + c(u; i, j - 1) (the largest value is
  // an x above all j y's, or a y), c(0; 0, j) = c(0; i, 0) = 1. Only sums
  // of positive counts: no cancellation. O(m^2 n^2 / 4).
  std::vector<std::vector<double>> counts(n + 1, std::vector<double>{1.0});
  for (uint64_t i = 1; i <= m; ++i) {
    std::vector<std::vector<double>> next(n + 1, std::vector<double>{1.0});
    for (uint64_t j = 1; j <= n; ++j) {
      next[j].assign(i * j + 1, 0.0);
      for (size_t u = 0; u < counts[j].size(); ++u)
        next[j][u + j] += counts[j][u];
      for (size_t u = 0; u < next[j - 1].size(); ++u)
        next[j][u] += next[j - 1][u];
    }
    counts = std::move(next);
  }
  std::vector<double>& last = counts[n];
  const double total = std::accumulate(last.begin(), last.end(), 0.0);
  for (double& c : last) c /= total;  // total = C(m + n, m) >= 1
  return std::move(last);
}

std::vector<double> signed_rank_null(uint64_t n) {
  const uint64_t most = n * (n + 1) / 2;
  std::vector<double> counts(most + 1);
  counts[0] = 1;
  for (uint64_t rank = 1; rank <= n; ++rank)
    for (uint64_t s = most; s >= rank; --s) counts[s] += counts[s - rank];
  const double total = std::ldexp(1.0, static_cast<int>(n));
  for (double& c : counts) c /= total;
  return counts;
}

RankTest mann_whitney_u(std::span<const double> x, std::span<const double> y,
                        Alternative alternative, Method method) {
  RankTest out;
  const uint64_t m = x.size(), n = y.size();
  if (m == 0 || n == 0) return out;
  std::vector<double> pooled(x.begin(), x.end());
  pooled.insert(pooled.end(), y.begin(), y.end());
  const MidRanks ranks = mid_ranks(pooled);
  const double rank_sum = std::accumulate(
      ranks.ranks.begin(), ranks.ranks.begin() + static_cast<std::ptrdiff_t>(m),
      0.0);
  const auto dm = static_cast<double>(m), dn = static_cast<double>(n);
  out.statistic = rank_sum - dm * (dm + 1) / 2;
  out.exact = method == Method::kAuto && m < kExactLimit && n < kExactLimit &&
              !ranks.ties;
  if (out.exact) {
    out.p_value = exact_p(mann_whitney_null(m, n), out.statistic, alternative);
    return out;
  }
  const double total = dm + dn;  // >= 2
  const double variance =
      dm * dn / 12 * ((total + 1) - ranks.tie_term / (total * (total - 1)));
  out.p_value = normal_p(out.statistic, dm * dn / 2,
                         std::sqrt(std::max(0.0, variance)), alternative);
  return out;
}

RankTest wilcoxon_signed_rank(std::span<const double> d,
                              Alternative alternative, Method method) {
  RankTest out;
  std::vector<double> nonzero;
  for (const double v : d)
    if (v != 0) nonzero.push_back(v);
  const bool zeros = nonzero.size() != d.size();
  out.n = nonzero.size();
  if (nonzero.empty()) return out;
  std::vector<double> magnitudes(nonzero.size());
  std::transform(nonzero.begin(), nonzero.end(), magnitudes.begin(),
                 [](double v) { return std::fabs(v); });
  const MidRanks ranks = mid_ranks(magnitudes);
  for (size_t i = 0; i < nonzero.size(); ++i)
    if (nonzero[i] > 0) out.statistic += ranks.ranks[i];
  out.exact =
      method == Method::kAuto && out.n < kExactLimit && !ranks.ties && !zeros;
  if (out.exact) {
    out.p_value = exact_p(signed_rank_null(out.n), out.statistic, alternative);
    return out;
  }
  const auto n = static_cast<double>(out.n);
  const double variance = n * (n + 1) * (2 * n + 1) / 24 - ranks.tie_term / 48;
  out.p_value = normal_p(out.statistic, n * (n + 1) / 4,
                         std::sqrt(std::max(0.0, variance)), alternative);
  return out;
}

double kth_difference(std::span<const double> x, std::span<const double> y,
                      uint64_t k) {
  if (x.empty() || y.empty()) return 0;
  // #{(i, j): x_i - y_j <= v}: for each x_i (ascending) a suffix of y
  // qualifies, starting no earlier than for the previous x_i.
  const auto count = [&](double v) {
    uint64_t pairs = 0;
    size_t j = 0;
    for (const double xi : x) {
      while (j < y.size() && xi - y[j] > v) ++j;
      pairs += y.size() - j;
    }
    return pairs;
  };
  return smallest_with_count(x.front() - y.back(), x.back() - y.front(), k,
                             count);
}

double kth_walsh_average(std::span<const double> d, uint64_t k) {
  if (d.empty()) return 0;
  // #{i <= j: (d_i + d_j)/2 <= v}: for each d_i (ascending) the j in
  // [i, last(i)] qualify, last(i) never growing with i.
  const auto count = [&](double v) {
    uint64_t pairs = 0;
    auto last = static_cast<std::ptrdiff_t>(d.size()) - 1;
    for (std::ptrdiff_t i = 0; i <= last; ++i) {
      const double di = d[static_cast<size_t>(i)];
      while (last >= i && (di + d[static_cast<size_t>(last)]) / 2 > v) --last;
      if (last >= i) pairs += static_cast<uint64_t>(last - i + 1);
    }
    return pairs;
  };
  return smallest_with_count((d.front() + d.front()) / 2,
                             (d.back() + d.back()) / 2, k, count);
}

ShiftEstimate hodges_lehmann_shift(std::span<const double> x,
                                   std::span<const double> y, double confidence,
                                   Method method) {
  if (x.empty() || y.empty()) return {};
  const std::vector<double> sx = sorted_copy(x), sy = sorted_copy(y);
  std::vector<double> pooled(sx.size() + sy.size());
  std::merge(sx.begin(), sx.end(), sy.begin(), sy.end(), pooled.begin(),
             less_nan_last);
  const uint64_t m = sx.size(), n = sy.size();
  NullModel null;
  if (method == Method::kAuto && m < kExactLimit && n < kExactLimit &&
      !has_equal_neighbours(pooled)) {
    null.pmf = mann_whitney_null(m, n);
  } else {
    const auto dm = static_cast<double>(m), dn = static_cast<double>(n);
    null.mu = dm * dn / 2;
    null.sigma = std::sqrt(dm * dn * (dm + dn + 1) / 12);
  }
  return shift_estimate(m * n, null, confidence,
                        [&](uint64_t k) { return kth_difference(sx, sy, k); });
}

ShiftEstimate hodges_lehmann_paired(std::span<const double> d,
                                    double confidence, Method method) {
  if (d.empty()) return {};
  const std::vector<double> sd = sorted_copy(d);
  const uint64_t n = sd.size();
  NullModel null;
  if (method == Method::kAuto && n < kExactLimit && !has_equal_neighbours(sd)) {
    null.pmf = signed_rank_null(n);
  } else {
    const auto dn = static_cast<double>(n);
    null.mu = dn * (dn + 1) / 4;
    null.sigma = std::sqrt(dn * (dn + 1) * (2 * dn + 1) / 24);
  }
  return shift_estimate(n * (n + 1) / 2, null, confidence,
                        [&](uint64_t k) { return kth_walsh_average(sd, k); });
}

DifferenceTest test_difference(double d, double se, double df,
                               double confidence) {
  DifferenceTest out;
  if (!(se > 0)) {
    out.p_value = d == 0 ? 1 : 0;
    out.statistic = d == 0 ? 0 : std::copysign(kInf, d);
    out.ci_low = out.ci_high = d;
    return out;
  }
  const bool normal = std::isinf(df);
  out.statistic = d / se;
  const double tail = normal ? normal_cdf(-std::fabs(out.statistic))
                             : t_cdf(-std::fabs(out.statistic), df);
  out.p_value = std::min(1.0, 2 * tail);
  const double level = 1 - (1 - confidence) / 2;
  const double half_width =
      (normal ? normal_quantile(level) : t_quantile(level, df)) * se;
  out.ci_low = d - half_width;
  out.ci_high = d + half_width;
  return out;
}

WelchTest welch_t(const MeanSummary& x, const MeanSummary& y,
                  double confidence) {
  WelchTest out;
  out.difference = x.mean - y.mean;
  if (!(x.n >= 2 && y.n >= 2)) {
    out.ci_low = -kInf;
    out.ci_high = kInf;
    return out;
  }
  const double vx = x.stdev * x.stdev / x.n, vy = y.stdev * y.stdev / y.n;
  const double se = std::sqrt(vx + vy);
  if (se > 0) {
    const double wx = vx / (vx + vy), wy = vy / (vx + vy);
    out.df = 1 / (wx * wx / (x.n - 1) + wy * wy / (y.n - 1));
  } else {
    out.df = x.n + y.n - 2;
  }
  const DifferenceTest test =
      test_difference(out.difference, se, out.df, confidence);
  out.t = test.statistic;
  out.p_value = test.p_value;
  out.ci_low = test.ci_low;
  out.ci_high = test.ci_high;
  return out;
}

MedianTest median_difference(const QuartileSummary& x, const QuartileSummary& y,
                             double confidence) {
  MedianTest out;
  out.difference = x.median - y.median;
  if (!(x.n >= 2 && y.n >= 2)) {
    out.ci_low = -kInf;
    out.ci_high = kInf;
    return out;
  }
  constexpr double kIqrSigmas = 1.3489795003921634;  // 2 * z(0.75)
  const double factor = std::sqrt(std::numbers::pi / 2) / kIqrSigmas;
  const double se_x = factor * (x.q3 - x.q1) / std::sqrt(x.n);
  const double se_y = factor * (y.q3 - y.q1) / std::sqrt(y.n);
  const DifferenceTest test = test_difference(
      out.difference, std::sqrt(se_x * se_x + se_y * se_y), kInf, confidence);
  out.z = test.statistic;
  out.p_value = test.p_value;
  out.ci_low = test.ci_low;
  out.ci_high = test.ci_high;
  return out;
}

namespace {

std::vector<size_t> ascending_order(std::span<const double> p) {
  std::vector<size_t> order(p.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return less_nan_last(p[a], p[b]);
  });
  return order;
}

}  // namespace

std::vector<double> holm_adjust(std::span<const double> p) {
  const std::vector<size_t> order = ascending_order(p);
  std::vector<double> out(p.size());
  const auto m = static_cast<double>(p.size());
  double running = 0;
  for (size_t r = 0; r < order.size(); ++r) {
    const double scaled = (m - static_cast<double>(r)) * p[order[r]];
    running = std::max(running, std::min(1.0, scaled));
    out[order[r]] = running;
  }
  return out;
}

std::vector<double> benjamini_hochberg_adjust(std::span<const double> p) {
  const std::vector<size_t> order = ascending_order(p);
  std::vector<double> out(p.size());
  const auto m = static_cast<double>(p.size());
  double running = 1;
  for (size_t r = order.size(); r-- > 0;) {
    const double scaled = m * p[order[r]] / static_cast<double>(r + 1);
    running = std::min(running, std::min(1.0, scaled));
    out[order[r]] = running;
  }
  return out;
}

}  // namespace runner::compare::stats
