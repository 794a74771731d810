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
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/base.hpp"
#include "compare/verdict.hpp"
#include "format/format.hpp"

namespace runner::compare {

// One benchmark of one side, pooled over the folders that have it.
struct BenchmarkSamples {
  std::string uri, name;
  SideSamples samples;
  // The median per-iteration time in each folder that has the benchmark,
  // in the order the folders were given (the noise report).
  std::vector<double> folder_medians_ns;
};

struct LoadedSide {
  // In the order of first appearance (folders in order, results files by
  // name, benchmarks in file order, then marker-only URIs).
  std::vector<BenchmarkSamples> benchmarks;
  // Data left out or a weaker source chosen, each naming folder and URI.
  std::vector<std::string> warnings;
};

// Loads `folders` (at least one). `side` ("base", "head") starts every
// error: "base folder 'x': no such directory", "head folder 'y': no results
// (no results/*.json, no ExecutionTimestamps.msgpack)", "base folder 'x':
// results/1.json: not JSON".
base::Result<LoadedSide> load_side(std::string_view side,
                                   const std::vector<std::string>& folders);

// The pooled summary of several summaries of one benchmark: rounds summed,
// mean weighted by rounds, variance from the within and between parts;
// min/max of the parts, quartiles and median the medians of the parts'.
format::BenchmarkStats pool_summaries(
    const std::vector<format::BenchmarkStats>& parts);

// Summary stats of raw per-iteration times (sample stdev, n - 1).
format::BenchmarkStats summarize(const std::vector<double>& times_ns);

}  // namespace runner::compare
