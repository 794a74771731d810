// Runs as the unit of replication (internal to compare/; docs/compare.md,
// "Run-to-run noise in the verdict"). The rounds of one run share its
// machine state (CPU placement, frequency, neighbours, memory layout), so
// they say nothing about how much the next run would differ: a
// benchmark's verdict must also hold at the level of runs (Kalibera and
// Jones, "Rigorous benchmarking in reasonable time", ISMM 2013). Each run
// (profile folder) gives one value, the log of its median time per
// iteration; the spread of those values between runs is the noise a
// comparison of runs must beat.
#pragma once

#include <optional>
#include <span>

#include "format/format.hpp"

namespace runner::compare {

// Fewest stored runs whose spread estimates the between-run variance.
inline constexpr size_t kMinHistoryRuns = 3;

// The run-level test on per-run medians (ns per iteration, one per folder).
// Both sides with >= 2 runs: Welch's t on x = log(base medians) and
// y = log(head medians): d = mean(y) - mean(x), interval d -+ t * se with
// Welch's se and degrees of freedom. One side with a single run and the
// other with n >= 2: the many-run side's sample variance s^2 stands for
// both, se = s * sqrt(1/n + 1), df = n - 1. Then change = exp(d) - 1 and
// the bounds exp(bound) - 1; p two-sided from Student's t (p = 1 for
// d = 0, else 0, when se is 0). std::nullopt with one run per side, or a
// median that is not a positive finite number.
std::optional<format::RunLevelStats> run_level_test(
    std::span<const double> base_medians_ns,
    std::span<const double> head_medians_ns, double confidence);

// One run per side: the round-level outcome of `rounds` (change, ci_low,
// ci_high) against the between-run variance of the benchmark in the
// store's history of the base branch (medians ns per iteration, one per
// stored run). v = sample variance of log(history) (n >= kMinHistoryRuns
// positive finite values, else std::nullopt): the difference of two single
// runs has variance 2 v on the log scale (v holds the within-run noise of
// a median too, so it is not added again). With L = log(1 + change),
// se = sqrt(2 v), the interval L -+ t(df = n - 1) * se and p two-sided
// from t(n - 1) of L / se, in exp(.) - 1 terms. std::nullopt too when
// `rounds` has no outcome.
std::optional<format::RunLevelStats> history_test(
    const format::BenchmarkComparison& rounds,
    std::span<const double> history_medians_ns, double confidence);

// Puts the run-level estimate into `b` (which has an outcome): b.runs set;
// when its interval is wider than b's (ci_high - ci_low) the change and
// interval are the run level's and b.noise is `source` (kRuns, kHistory),
// else kRounds; the raw p-value is the larger of the two. So pooling
// rounds never makes a verdict more confident than its runs allow.
void apply_run_level(format::BenchmarkComparison& b,
                     const format::RunLevelStats& runs,
                     format::NoiseSource source);

}  // namespace runner::compare
