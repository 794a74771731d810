// Change points (see change_points.hpp and docs/history.md, "How change
// points are found"). In order:
//  1. x = ln(value): a step is relative, and so is the noise.
//  2. sigma, the run-to-run noise of x, from the successive differences
//     (a step moves one difference only, an outlier two): 1.4826 ·
//     median |d| / √2, refined by the mean of d² winsorized at 3·√2·sigma
//     (as efficient as the plain variance on normal noise, and still
//     bounded by one wild point); at least kMinSigma.
//  3. Outliers replaced (a Hampel filter): an x further than kOutlier·sigma
//     from the median of the 5 points around it (the first or last 5 at
//     the ends) becomes the median of those of the 5 that are not. One
//     or two wild runs take the level of their neighbours; a new level of 3
//     or more runs passes. Where the differences around a point are
//     noisier than sigma, their own noise is used instead.
//  4. PELT (Killick, Fearnhead & Eckley 2012) on these x: the cost of
//     a segment is its sum of squared deviations from its mean in units of
//     sigma² (a change in the mean of normal noise of known variance), each
//     change point costs settings.penalty (by default kPenaltyBase +
//     kPenaltyPerLog · ln n), and no segment is shorter than
//     settings.min_segment. Then sigma is estimated again from the
//     deviations around the segments' means, and PELT run again with it.
//  5. Each change point found is described from the segments on each side
//     (up to kWindow points of each, the nearest): the levels are the
//     medians of the values (outliers replaced), the p-value and the
//     interval come from Welch's t on the logs. A step smaller than
//     settings.min_change, or with a p-value over settings.max_p_value, is
//     merged into its neighbours, the smallest first, and the others are
//     described again, until each step left passes.
#include "history/change_points.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <vector>

#include <boost/math/distributions/students_t.hpp>

#include "format/format.hpp"

namespace runner::history {
namespace {

constexpr double kMadToSigma = 1.482602218505602;  // 1 / Φ⁻¹(3/4)
constexpr double kWinsor = 3;  // d² winsorized at (kWinsor·√2·sigma)²
constexpr double kMinSigma = 1e-6;  // relative: below any real noise
constexpr double kOutlier = 4;      // further from the local median: replaced
constexpr size_t kHampelHalf = 2;   // the local median's half window
constexpr size_t kLocalNoise = 30;  // differences giving the local noise
constexpr size_t kWindow = 30;      // points each side describing a step
// The default penalty per change point, in units of sigma²: it grows with
// the log of the series' length, as the largest of its many chances of a
// false step does (tuned by bench/history: docs/history.md).
constexpr double kPenaltyBase = 3;
constexpr double kPenaltyPerLog = 1.5;

namespace policies = boost::math::policies;
using Policy =
    policies::policy<policies::domain_error<policies::ignore_error>,
                     policies::pole_error<policies::ignore_error>,
                     policies::overflow_error<policies::ignore_error>,
                     policies::evaluation_error<policies::ignore_error>>;
using StudentsT = boost::math::students_t_distribution<double, Policy>;

// E[min(Z², c²)] for a standard normal Z: what the winsorized mean square
// of normal noise of variance 1 comes to.
double winsorized_square_mean(double c) {
  const double tail = std::erfc(c / std::numbers::sqrt2);  // P(|Z| > c)
  const double density = std::exp(-c * c / 2) / std::sqrt(2 * std::numbers::pi);
  return (1 - tail) - 2 * c * density + c * c * tail;
}

// The noise of x (step 2 above).
double noise_sigma(const std::vector<double>& x) {
  if (x.size() < 2) return kMinSigma;
  std::vector<double> d(x.size() - 1);
  for (size_t i = 0; i + 1 < x.size(); ++i) d[i] = std::abs(x[i + 1] - x[i]);
  const double robust =
      kMadToSigma * format::median_of(d) / std::numbers::sqrt2;
  double sum = 0;
  if (robust == 0) {  // most differences 0: the plain mean square
    for (double v : d) sum += v * v;
    return std::max(kMinSigma, std::sqrt(sum / d.size() / 2));
  }
  const double cap = kWinsor * std::numbers::sqrt2 * robust;
  for (double v : d) sum += std::min(v, cap) * std::min(v, cap);
  const double mean_square = sum / d.size() / winsorized_square_mean(kWinsor);
  return std::max(kMinSigma, std::sqrt(mean_square / 2));
}

// The window of `width` points (at most n) centred on i, moved inside the
// series at its ends: its first point.
size_t window_start(size_t i, size_t width, size_t n) {
  width = std::min(width, n);
  return std::min(i > width / 2 ? i - width / 2 : 0, n - width);
}

// The noise around each point of x: noise_sigma's first estimate on the
// kLocalNoise successive differences around it where that is more than
// `sigma` (so that a noisier stretch does not lose its extreme points as
// outliers), else `sigma`.
std::vector<double> local_sigma(const std::vector<double>& x, double sigma) {
  const size_t n = x.size();
  std::vector<double> d(n - 1), local(n, sigma);
  for (size_t i = 0; i + 1 < n; ++i) d[i] = std::abs(x[i + 1] - x[i]);
  for (size_t i = 0; i < n; ++i) {
    const auto from = d.begin() + window_start(i, kLocalNoise, d.size());
    const double scale =
        kMadToSigma / std::numbers::sqrt2 *
        format::median_of({from, from + std::min(kLocalNoise, d.size())});
    local[i] = std::max(sigma, scale);
  }
  return local;
}

// Step 3 above: each outlier becomes the median of the points of its window
// that are not outliers.
std::vector<double> without_outliers(const std::vector<double>& x,
                                     double sigma) {
  const size_t n = x.size(), width = 2 * kHampelHalf + 1;
  const std::vector<double> noise = local_sigma(x, sigma);
  std::vector<bool> outlier(n);
  for (size_t i = 0; i < n; ++i) {
    const auto from = x.begin() + window_start(i, width, n);
    const double center = format::median_of({from, from + std::min(width, n)});
    outlier[i] = std::abs(x[i] - center) > kOutlier * noise[i];
  }
  std::vector<double> y = x;
  for (size_t i = 0; i < n; ++i) {
    if (!outlier[i]) continue;
    std::vector<double> kept;
    const size_t first = window_start(i, width, n);
    for (size_t j = first; j < first + std::min(width, n); ++j)
      if (!outlier[j]) kept.push_back(x[j]);
    if (!kept.empty()) y[i] = format::median_of(kept);
  }
  return y;
}

// The cost of a segment [a, b) of z: its squared deviations from its mean,
// from prefix sums (z is centred and in units of sigma, so that the sums
// keep their precision).
class SegmentCost {
 public:
  explicit SegmentCost(const std::vector<double>& z)
      : sum_(z.size() + 1, 0), squares_(z.size() + 1, 0) {
    for (size_t i = 0; i < z.size(); ++i) {
      sum_[i + 1] = sum_[i] + z[i];
      squares_[i + 1] = squares_[i] + z[i] * z[i];
    }
  }
  double operator()(size_t a, size_t b) const {
    const double s = sum_[b] - sum_[a];
    return squares_[b] - squares_[a] - s * s / static_cast<double>(b - a);
  }

 private:
  std::vector<double> sum_, squares_;
};

struct Candidate {
  size_t at;
  size_t pruned_from;  // no longer a candidate for ends >= this
};

// PELT with segments of at least `min_segment` points: the starts of the
// segments after the first of the optimal segmentation of z. A candidate
// τ beaten at end t (F(τ) + C(τ, t) > F(t)) can never be the best last
// change point for an end s ≥ t + min_segment, where t itself is allowed
// (the cost is additive: C(τ, s) ≥ C(τ, t) + C(t, s)), so it is dropped
// from then on.
std::vector<size_t> pelt(const std::vector<double>& z, double penalty,
                         size_t min_segment) {
  const size_t n = z.size();
  const SegmentCost cost(z);
  constexpr double kInf = std::numeric_limits<double>::infinity();
  constexpr size_t kNever = std::numeric_limits<size_t>::max();
  std::vector<double> best(n + 1, kInf);  // F(t)
  std::vector<size_t> last(n + 1, 0);
  best[0] = -penalty;
  std::vector<Candidate> candidates{{0, kNever}};
  for (size_t t = min_segment; t <= n; ++t) {
    if (t >= 2 * min_segment) candidates.push_back({t - min_segment, kNever});
    std::erase_if(candidates,
                  [&](const Candidate& c) { return c.pruned_from <= t; });
    for (const Candidate& c : candidates) {
      const double f = best[c.at] + cost(c.at, t) + penalty;
      if (f < best[t]) best[t] = f, last[t] = c.at;
    }
    for (Candidate& c : candidates)
      if (c.pruned_from == kNever && best[c.at] + cost(c.at, t) > best[t])
        c.pruned_from = t + min_segment;
  }
  std::vector<size_t> starts;
  for (size_t t = last[n]; t > 0; t = last[t]) starts.push_back(t);
  std::reverse(starts.begin(), starts.end());
  return starts;
}

// The noise of z around the means of the segments that start at `starts`,
// in units of z: the pooled standard deviation.
double residual_sigma(const std::vector<double>& z,
                      const std::vector<size_t>& starts) {
  const SegmentCost cost(z);
  double squares = 0;
  for (size_t i = 0; i <= starts.size(); ++i)
    squares += cost(i == 0 ? 0 : starts[i - 1],
                    i == starts.size() ? z.size() : starts[i]);
  const size_t df = z.size() - starts.size() - 1;
  return std::sqrt(squares / static_cast<double>(df));
}

struct MeanVar {
  double mean = 0, variance = 0, n = 0;
};

MeanVar mean_var(const std::vector<double>& y, size_t a, size_t b) {
  MeanVar m;
  m.n = static_cast<double>(b - a);
  for (size_t i = a; i < b; ++i) m.mean += y[i] / m.n;
  for (size_t i = a; i < b; ++i)
    m.variance += (y[i] - m.mean) * (y[i] - m.mean) / (m.n - 1);
  return m;
}

// Welch's t of the step from `a` to `b`: its p-value, and the half width
// of the 95% interval of the difference of their medians (the standard
// error of a median of normal data is √(π/2) times that of the mean).
void welch(const MeanVar& a, const MeanVar& b, Step& step) {
  const double va = a.variance / a.n, vb = b.variance / b.n;
  const double se = std::sqrt(va + vb);
  const double ratio = std::log(step.after / step.before);
  if (!(se > 0)) {  // both sides constant
    step.p_value = a.mean == b.mean ? 1 : 0;
    step.low = step.high = step.change;
    return;
  }
  const double df =
      (va + vb) * (va + vb) / (va * va / (a.n - 1) + vb * vb / (b.n - 1));
  const StudentsT t(df);
  const double stat = std::abs(b.mean - a.mean) / se;
  step.p_value = std::min(1.0, 2 * cdf(complement(t, stat)));
  const double half =
      quantile(complement(t, 0.025)) * std::sqrt(std::numbers::pi / 2) * se;
  step.low = std::expm1(ratio - half);
  step.high = std::expm1(ratio + half);
}

// The step at `start` between the segments [lo, start) and [start, hi).
Step describe(const std::vector<double>& y, size_t lo, size_t start,
              size_t hi) {
  const size_t from = std::max(lo, start >= kWindow ? start - kWindow : 0);
  const size_t to = std::min(hi, start + kWindow);
  Step step;
  step.start = start;
  step.before =
      std::exp(format::median_of({y.begin() + from, y.begin() + start}));
  step.after = std::exp(format::median_of({y.begin() + start, y.begin() + to}));
  step.change = step.after / step.before - 1;
  welch(mean_var(y, from, start), mean_var(y, start, to), step);
  return step;
}

// The i-th step of `starts`, between its neighbours.
Step describe_at(const std::vector<double>& y,
                 const std::vector<size_t>& starts, size_t i) {
  const size_t lo = i == 0 ? 0 : starts[i - 1];
  const size_t hi = i + 1 == starts.size() ? y.size() : starts[i + 1];
  return describe(y, lo, starts[i], hi);
}

bool passes(const Step& step, const DetectSettings& settings) {
  return std::abs(step.change) >= settings.min_change &&
         step.p_value <= settings.max_p_value;
}

// Step 5 above: the steps that pass, after merging those that do not. Only
// the two neighbours of a merged step change.
std::vector<Step> checked(const std::vector<double>& y,
                          std::vector<size_t> starts,
                          const DetectSettings& settings) {
  std::vector<Step> steps;
  for (size_t i = 0; i < starts.size(); ++i)
    steps.push_back(describe_at(y, starts, i));
  for (;;) {
    size_t worst = steps.size();
    for (size_t i = 0; i < steps.size(); ++i)
      if (!passes(steps[i], settings) &&
          (worst == steps.size() ||
           std::abs(steps[i].change) < std::abs(steps[worst].change)))
        worst = i;
    if (worst == steps.size()) return steps;
    const auto at = static_cast<std::ptrdiff_t>(worst);
    starts.erase(starts.begin() + at);
    steps.erase(steps.begin() + at);
    if (worst > 0) steps[worst - 1] = describe_at(y, starts, worst - 1);
    if (worst < steps.size()) steps[worst] = describe_at(y, starts, worst);
  }
}

// Steps 1 to 5 above, on values all finite and > 0.
std::vector<Step> detect(const std::vector<double>& values,
                         const DetectSettings& settings) {
  const size_t min_segment = std::max<size_t>(settings.min_segment, 2);
  const double n = static_cast<double>(values.size());
  if (values.size() < 2 * min_segment) return {};
  std::vector<double> x(values.size());
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::log(values[i]);
  const double sigma = noise_sigma(x);
  const std::vector<double> y = without_outliers(x, sigma);
  const double center = format::median_of(y);
  std::vector<double> z(y.size());
  for (size_t i = 0; i < z.size(); ++i) z[i] = (y[i] - center) / sigma;
  const double penalty = settings.penalty > 0
                             ? settings.penalty
                             : kPenaltyBase + kPenaltyPerLog * std::log(n);
  std::vector<size_t> starts = pelt(z, penalty, min_segment);
  const double factor = residual_sigma(z, starts);
  if (factor > 0 && factor != 1) {
    for (double& v : z) v /= factor;
    starts = pelt(z, penalty, min_segment);
  }
  return checked(y, starts, settings);
}

}  // namespace

std::vector<Step> find_change_points(std::span<const double> values,
                                     const DetectSettings& settings) {
  std::vector<double> usable;
  std::vector<size_t> index;  // of each usable value in values
  for (size_t i = 0; i < values.size(); ++i) {
    if (!(std::isfinite(values[i]) && values[i] > 0)) continue;
    usable.push_back(values[i]);
    index.push_back(i);
  }
  std::vector<Step> steps = detect(usable, settings);
  for (Step& step : steps) step.start = index[step.start];
  return steps;
}

}  // namespace runner::history
