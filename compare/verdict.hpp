// One benchmark's statistics and verdict (docs/compare.md): Mann-Whitney U +
// Hodges-Lehmann shift with its Moses confidence interval on raw rounds,
// a median test on one folder's summary quartiles, else Welch's t on the
// summary means, Wilcoxon signed-rank
// + paired Hodges-Lehmann on paired rounds; then the correction across
// benchmarks and the verdicts. Pure functions over values.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "format/format.hpp"

namespace runner::compare {

// One side of one benchmark, pooled over its folders.
struct SideSamples {
  std::vector<double> times_ns;  // per-iteration time of each round
  // The results JSON's stats (used when times_ns is empty); with several
  // folders, their rounds, mean and stdev pooled.
  std::optional<format::BenchmarkStats> summary;
  format::SampleSource source = format::SampleSource::kSummary;
  uint64_t folders = 1;
  // Each folder's (run's) median time per iteration, in the order given:
  // the run-level estimate (runs.hpp) when a side has several. Source
  // kRuns (--metric cpu/instructions, no window per round): each run's one
  // value, and times_ns and summary are empty.
  std::vector<double> folder_medians_ns;
  // Why the metric has no value on this side ("base folder 'a': no
  // instructions counted for X"): the benchmark is inconclusive with it.
  std::string unavailable;
  // --metric instructions: counted in user space only (the kernel's
  // excluded), in some folder of this side.
  bool user_only = false;
};

// The test, change and confidence interval of one benchmark (uri and name
// left to the caller); p_value = p_value_raw, verdict still to be set by
// apply_verdicts. Fewer than settings.min_rounds rounds on a side, NaN,
// infinite, zero or negative times: kInconclusive with the reason.
// Then the run-to-run noise (runs.hpp): with several folders on a side
// (folder_medians_ns), the run-level test; with one per side, the
// between-run spread of `history_medians_ns` (the base branch's stored
// runs; at least kMinHistoryRuns); the wider interval and the larger p
// decide, b.noise says whose. Without either, b.noise is kNotEstimated.
format::BenchmarkComparison compare_benchmark(
    const SideSamples& base, const SideSamples& head,
    const format::CompareSettings& settings,
    std::span<const double> history_medians_ns = {});

// base[i] and head[i] timed in the same pair: Wilcoxon signed-rank on the
// differences, change = paired Hodges-Lehmann shift / median(base).
format::BenchmarkComparison compare_paired(
    std::span<const double> base, std::span<const double> head,
    const format::CompareSettings& settings);

// Corrects the p-values of the benchmarks that have one (Holm or
// Benjamini-Hochberg over those, or none) and sets every verdict:
// regression when p_value < alpha, change > threshold and ci_low > 0;
// improvement symmetrically; unchanged when [ci_low, ci_high] lies within
// [-threshold, +threshold]; inconclusive otherwise (a row without a test
// stays inconclusive), its reason giving detectable_change, the smallest
// change the data would call 4 times out of 5 (docs/compare.md). Outside
// paired mode, a regression or improvement whose lower quartile (q1_ns) did
// not move beyond the threshold the same way becomes inconclusive (a
// disturbed run), its numbers kept.
void apply_verdicts(std::vector<format::BenchmarkComparison>& benchmarks,
                    const format::CompareSettings& settings);

// (max - min) / min of per-folder medians (0 for fewer than two).
double relative_spread(std::span<const double> medians);

}  // namespace runner::compare
