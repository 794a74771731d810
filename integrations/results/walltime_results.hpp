// Walltime results (spec: codspeed-runner-walltime.md §7.2, results schema of
// fifo-protocol-and-results.md §2.2): statistics of measured rounds and the
// results/<pid>.json writer shared by the example benchmark and exec-harness.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/result.hpp"

namespace runner::results {

struct BenchmarkStats {
  double min_ns = 0, max_ns = 0, mean_ns = 0, stdev_ns = 0;
  double q1_ns = 0, median_ns = 0, q3_ns = 0;
  uint64_t rounds = 0;
  double total_time = 0;  // seconds, sum of round times
  uint64_t iqr_outlier_rounds = 0, stdev_outlier_rounds = 0;
  uint64_t iter_per_round = 0, warmup_iters = 0;
};

// Per-iteration times = round_ns[i] / iters[i] (integer division), then the
// runner-shared conventions: sample stdev, exclusive quartiles, 1.5 IQR and
// 2 sigma outliers. `iters` may be empty (1 iteration per round).
BenchmarkStats compute_stats(std::span<const uint64_t> round_ns,
                             std::span<const uint64_t> iters = {});

struct BenchmarkConfig {
  std::optional<double> warmup_time_ns, min_round_time_ns, max_time_ns;
  std::optional<uint64_t> max_rounds;
};

struct BenchmarkResult {
  std::string name;
  std::string uri;
  BenchmarkConfig config;
  BenchmarkStats stats;
};

struct Creator {
  std::string name;
  std::string version;
  uint32_t pid = 0;
};

// The pretty-printed JSON document of spec §7.2.
std::string results_json(const Creator& creator,
                         std::span<const BenchmarkResult> benchmarks);
// Directory results go to: $CODSPEED_PROFILE_FOLDER/results, else
// ./.codspeed/results.
std::string results_directory();
// Writes <results_directory()>/<creator.pid>.json atomically; returns the path.
base::Result<std::string> write_results(
    const Creator& creator, std::span<const BenchmarkResult> benchmarks);
// Same into `dir` (created if missing): <dir>/<creator.pid>.json.
base::Result<std::string> write_results(
    const std::string& dir, const Creator& creator,
    std::span<const BenchmarkResult> benchmarks);

}  // namespace runner::results
