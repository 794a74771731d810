// results/<pid>.json: the walltime results an integration writes for the
// runner (docs/formats.md, "Results JSON"). Written by integrations/results
// (exec-harness, the example benchmark), read and validated by the agent at the
// end of a run.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/base.hpp"

namespace runner::format {

struct BenchmarkStats {
  double min_ns = 0, max_ns = 0, mean_ns = 0, stdev_ns = 0;
  double q1_ns = 0, median_ns = 0, q3_ns = 0;
  uint64_t rounds = 0;
  double total_time = 0;  // seconds, sum of round times
  uint64_t iqr_outlier_rounds = 0, stdev_outlier_rounds = 0;
  uint64_t iter_per_round = 0, warmup_iters = 0;
  bool operator==(const BenchmarkStats&) const = default;
};

struct BenchmarkConfig {
  std::optional<double> warmup_time_ns, min_round_time_ns, max_time_ns;
  std::optional<uint64_t> max_rounds;
  bool operator==(const BenchmarkConfig&) const = default;
};

struct BenchmarkResult {
  std::string name;
  std::string uri;
  BenchmarkConfig config;
  BenchmarkStats stats;
  // The raw rounds, right after "stats" as "times_per_round_ns" and
  // "iters_per_round" (same length; both written when either is non-empty;
  // optional when read, but then both, of equal length, with no round of 0
  // iterations; readers that predate them ignore them). A round's
  // per-iteration time is times_per_round_ns[i] / iters_per_round[i].
  std::vector<uint64_t> times_per_round_ns, iters_per_round;
  bool operator==(const BenchmarkResult&) const = default;
};

struct Creator {
  std::string name;
  std::string version;
  uint32_t pid = 0;
  bool operator==(const Creator&) const = default;
};

struct WalltimeResults {
  Creator creator;
  std::string instrument = "walltime";  // instrument.type
  std::vector<BenchmarkResult> benchmarks;
  bool operator==(const WalltimeResults&) const = default;
};

// Per URI of `results`, the median time per iteration in ns as `runner
// compare` estimates it for one run: the median of the per-iteration times
// of the round arrays of every entry of that URI when they all have them,
// else the median of their summary medians (ExecutionTimestamps markers
// are not read here). Sorted by URI.
std::vector<std::pair<std::string, double>> median_per_iteration_ns(
    std::span<const BenchmarkResult> results);

// The median of `values` (the mean of the middle two); 0 when empty.
double median_of(std::vector<double> values);

// The same medians as median_per_iteration_ns with, when they come from
// round arrays of at least kMinRoundsForInterval rounds, the
// distribution-free 95% interval of the median: the order statistics of
// ranks n/2 -+ 1.96 sqrt(n)/2 of the per-iteration times.
struct IterationMedian {
  std::string uri;
  double median_ns = 0;
  std::optional<double> low_ns, high_ns;
};
inline constexpr size_t kMinRoundsForInterval = 6;
std::vector<IterationMedian> per_iteration_medians(
    std::span<const BenchmarkResult> results);

// The pretty-printed document (2 spaces, trailing newline), members in the
// schema's order. Invalid UTF-8 in a name is replaced, not thrown.
std::string write_walltime_results(const Creator& creator,
                                   std::span<const BenchmarkResult> benchmarks);

// Errors name what is wrong: "not JSON (at byte 7)", "nested deeper than
// 128 levels", "missing creator/instrument/
// benchmarks", "a benchmark is not an object", "benchmark without string
// 'uri'", "benchmark without 'config' object", "stats without number
// 'q1_ns'", "stats without unsigned 'rounds'", "benchmark's
// 'iters_per_round' is not an array of unsigned integers", ... creator and
// instrument must be present; their members are read when well-typed.
// Bytes that are not UTF-8 (in a name, a URI) read as U+FFFD.
base::Result<WalltimeResults> read_walltime_results(std::string_view text);

}  // namespace runner::format
