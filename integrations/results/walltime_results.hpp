// Walltime results (docs/formats.md, "Results JSON"): statistics of measured
// rounds and the results/<pid>.json writer shared by the example benchmark and
// exec-harness.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/base.hpp"
#include "format/format.hpp"

namespace runner::results {

// The schema's types live in format/ (read and written there).
using BenchmarkStats = format::BenchmarkStats;
using BenchmarkConfig = format::BenchmarkConfig;
using BenchmarkResult = format::BenchmarkResult;
using Creator = format::Creator;

// Per-iteration times = round_ns[i] / iters[i] (integer division), then the
// runner-shared conventions: sample stdev, exclusive quartiles, 1.5 IQR and
// 2 sigma outliers. `iters` may be empty (1 iteration per round).
BenchmarkStats compute_stats(std::span<const uint64_t> round_ns,
                             std::span<const uint64_t> iters = {});

// The pretty-printed results JSON document
// (format::write_walltime_results).
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
