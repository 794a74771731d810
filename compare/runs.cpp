// Runs as the unit of replication (see runs.hpp).
#include "compare/runs.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "compare/stats.hpp"

namespace runner::compare {
namespace {

// log(values), or nothing when one is not a positive finite number.
std::optional<std::vector<double>> logs(std::span<const double> values) {
  std::vector<double> out;
  for (const double v : values) {
    if (!(v > 0) || !std::isfinite(v)) return std::nullopt;
    out.push_back(std::log(v));
  }
  return out;
}

double variance(std::span<const double> values) {
  const double s = stats::stdev(values);
  return s * s;
}

// The outcome of a difference d of logs with standard error se and df
// degrees of freedom, in exp(.) - 1 terms.
void set_outcome(format::RunLevelStats& out, double d, double se, double df,
                 double confidence) {
  const stats::DifferenceTest test =
      stats::test_difference(d, se, df, confidence);
  out.change = std::expm1(d);
  out.ci_low = std::expm1(test.ci_low);
  out.ci_high = std::expm1(test.ci_high);
  out.p_value = test.p_value;
}

}  // namespace

std::optional<format::RunLevelStats> run_level_test(
    std::span<const double> base_medians_ns,
    std::span<const double> head_medians_ns, double confidence) {
  const auto x = logs(base_medians_ns), y = logs(head_medians_ns);
  if (!x || !y || x->empty() || y->empty()) return std::nullopt;
  const double nx = static_cast<double>(x->size());
  const double ny = static_cast<double>(y->size());
  if (nx < 2 && ny < 2) return std::nullopt;
  format::RunLevelStats out;
  out.base_runs = x->size();
  out.head_runs = y->size();
  const double d = stats::mean(*y) - stats::mean(*x);
  if (nx >= 2 && ny >= 2) {
    out.log_stdev = std::sqrt(
        ((nx - 1) * variance(*x) + (ny - 1) * variance(*y)) / (nx + ny - 2));
    const stats::WelchTest welch =
        stats::welch_t({stats::mean(*y), stats::stdev(*y), ny},
                       {stats::mean(*x), stats::stdev(*x), nx}, confidence);
    out.change = std::expm1(welch.difference);
    out.ci_low = std::expm1(welch.ci_low);
    out.ci_high = std::expm1(welch.ci_high);
    out.p_value = welch.p_value;
    return out;
  }
  // One run on one side: the other side's spread stands for both.
  const std::vector<double>& many = nx >= 2 ? *x : *y;
  const double n = std::max(nx, ny);
  out.log_stdev = stats::stdev(many);
  set_outcome(out, d, out.log_stdev * std::sqrt(1 / n + 1), n - 1, confidence);
  return out;
}

std::optional<format::RunLevelStats> history_test(
    const format::BenchmarkComparison& rounds,
    std::span<const double> history_medians_ns, double confidence) {
  if (!rounds.change || !(*rounds.change > -1)) return std::nullopt;
  const auto h = logs(history_medians_ns);
  if (!h || h->size() < kMinHistoryRuns) return std::nullopt;
  format::RunLevelStats out;
  out.base_runs = out.head_runs = 1;
  out.history_runs = h->size();
  out.log_stdev = stats::stdev(*h);
  const double se = std::sqrt(2.0) * out.log_stdev;
  set_outcome(out, std::log1p(*rounds.change), se,
              static_cast<double>(h->size() - 1), confidence);
  return out;
}

void apply_run_level(format::BenchmarkComparison& b,
                     const format::RunLevelStats& runs,
                     format::NoiseSource source) {
  b.runs = runs;
  b.noise = format::NoiseSource::kRounds;
  const bool finite = std::isfinite(runs.change) &&
                      std::isfinite(runs.p_value) &&
                      std::isfinite(runs.ci_low) && std::isfinite(runs.ci_high);
  if (!finite) return;
  const double p = std::max(*b.p_value_raw, runs.p_value);
  b.p_value_raw = b.p_value = p;
  if (runs.ci_high - runs.ci_low <= *b.ci_high - *b.ci_low) return;
  b.noise = source;
  b.change = runs.change;
  b.ci_low = runs.ci_low;
  b.ci_high = runs.ci_high;
}

}  // namespace runner::compare
