// Loading one side of a comparison: one or more profile folders (repeated
// runs of one commit), each read from results/*.json and
// ExecutionTimestamps.msgpack alone. Per benchmark URI the best data of
// each folder, best first:
//   1. the round arrays of the results JSON (times_per_round_ns /
//      iters_per_round): per-iteration time of each round;
//   2. the RoundStart/RoundEnd (older BenchmarkStart/BenchmarkEnd) markers
//      of ExecutionTimestamps.msgpack between the previous URI's timestamp
//      and the benchmark's own, divided by stats.iter_per_round when the
//      results agree on the round count (markers alone when the benchmark
//      has no results);
//   3. the summary stats of the results JSON.
// Folders (and several results files of one folder) pool: raw rounds are
// concatenated, summaries combined (pooled mean and variance). Internal to
// compare/.
//
// CPU time per iteration (FolderCounters, one per folder, never pooled):
// from runner.counters.json, the runner's task-clock (CPU time of the
// benchmark's process tree, user + kernel; instructions and cycles where
// counted) of each StartBenchmark..StopBenchmark window. A window belongs
// to a URI as a marker round does: the first URI of ExecutionTimestamps
// announced at or after the window's stop, when the window started after
// the URI before it (integrations call CurrentBenchmark right after
// StopBenchmark). A URI's windows are summed and divided by the iterations
// they held:
//   measured  the sum of iters_per_round of the benchmark's results entries
//             (round arrays), else of stats.rounds * stats.iter_per_round;
//   warmup    stats.warmup_iters, counted as inside the windows when the
//             windows' wall time beyond the measured rounds' (the sum of
//             times_per_round_ns, else stats.total_time) holds at least
//             half of the warmup at the measured pace, else as outside
//             (pytest-codspeed warms up before StartBenchmark; exec-harness
//             inside its window).
// This is exact when the integration reports its warmup iterations (or has
// none) and its windows hold all or none of them. A window holding
// unmeasured time that no warmup_iters explain (more than 10% of it, e.g.
// exec-harness's warmup while it reports warmup_iters 0) is said in a
// warning: its CPU time per iteration then includes the warmup. No
// results (markers only) or no iteration count: no CPU time per iteration.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/base.hpp"
#include "compare/verdict.hpp"
#include "format/format.hpp"

namespace runner::compare {

// What one folder's runner.counters.json says of one benchmark (see the
// comment at the top). All absent when the folder has no counters file, or
// the counter was not counted, or the benchmark had no window or no
// iteration count.
struct FolderCounters {
  bool counters_file = false;             // the folder has a readable one
  std::optional<double> cpu_ns_per_iter;  // task-clock / iterations
  std::optional<double> instructions_per_iter, cycles_per_iter;
  uint64_t windows = 0;            // the benchmark's windows
  uint64_t iterations = 0;         // the divisor, warmup included
  uint64_t warmup_iterations = 0;  // of which warmup inside the windows
  uint64_t task_clock_ns = 0;      // the windows' sum
  // Instructions or cycles were counted only part of a window (the PMU was
  // shared): their values are raw counts, not scaled.
  bool multiplexed = false;
  bool user_only = false;     // instructions/cycles exclude the kernel
  uint64_t lost_windows = 0;  // the folder's, whichever benchmark they were
};

// One benchmark of one side, pooled over the folders that have it.
struct BenchmarkSamples {
  std::string uri, name;
  SideSamples samples;
  // The median per-iteration time in each folder that has the benchmark,
  // in the order the folders were given (the noise report).
  std::vector<double> folder_medians_ns;
  // Aligned with folder_medians_ns: the CPU time (instructions, cycles) per
  // iteration in each of those folders.
  std::vector<FolderCounters> folder_counters;
};

struct LoadedSide {
  // In the order of first appearance (folders in order, results files by
  // name, benchmarks in file order, then marker-only URIs).
  std::vector<BenchmarkSamples> benchmarks;
  // Data left out or a weaker source chosen, each naming folder and URI.
  std::vector<std::string> warnings;
  // The same of runner.counters.json (unreadable files, lost windows,
  // multiplexed counters, window time no iteration explains): they concern
  // the CPU time and instruction metrics only.
  std::vector<std::string> counter_warnings;
};

// Loads `folders` (at least one). `side` ("base", "head") starts every
// error: "base folder 'x': no such directory", "head folder 'y': no results
// (no results/*.json, no ExecutionTimestamps.msgpack)", "base folder 'x':
// results/1.json: not JSON".
//
// `metric` other than kWall (runner compare --metric): each benchmark's
// samples are its counter's value per iteration instead of its times.
// When each of the folder's measured rounds had its own benchmark window
// (an interleaved run), per round: the window's count / the round's
// iterations (source kRounds, folder_medians_ns their medians). Otherwise
// one value per folder, FolderCounters' (source kRuns). A folder without
// runner.counters.json, or whose counters file says the metric's counter
// was not counted, is an Error naming the folder and why ("head folder
// 'y': --metric instructions: not counted (no hardware PMU ...)"). A
// benchmark without a value in some folder (no window, no iteration count)
// or, for instructions, multiplexed counts, gets SideSamples::unavailable.
base::Result<LoadedSide> load_side(
    std::string_view side, const std::vector<std::string>& folders,
    format::Metric metric = format::Metric::kWall);

// The pooled summary of several summaries of one benchmark: rounds summed,
// mean weighted by rounds, variance from the within and between parts;
// min/max of the parts, quartiles and median the medians of the parts'.
format::BenchmarkStats pool_summaries(
    const std::vector<format::BenchmarkStats>& parts);

// Summary stats of raw per-iteration times (sample stdev, n - 1).
format::BenchmarkStats summarize(const std::vector<double>& times_ns);

}  // namespace runner::compare
