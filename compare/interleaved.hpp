// The interleaved mode of `runner compare` (docs/compare.md, "Interleaved
// runs"): one profile folder written by `runner exec --interleave`, whose
// two benchmarks ran alternately round by round in ABBA order in one run.
// Round i of the first benchmark (A, the BASE) and round i of the second
// (B, the HEAD) form pair i, compared on their differences
// (compare_paired).
#pragma once

#include <string>
#include <vector>

#include "base/base.hpp"
#include "compare/samples.hpp"
#include "format/format.hpp"

namespace runner::compare {

// The two benchmarks of an interleaved folder, A (BASE) first.
struct InterleavedPair {
  BenchmarkSamples base, head;
  std::vector<std::string> warnings;
};

// Loads `folder` and checks that it holds one interleaved run: exactly two
// benchmarks, each with its raw rounds in the results JSON, as many rounds
// each, and (when the folder has ExecutionTimestamps.msgpack) announced in
// ABBA order, one CurrentBenchmark per round: A B B A A B B A ... Without
// that file the order cannot be checked: a warning says so. Every other
// case is an Error that says what is wrong and how such a folder is made.
// With `metric` other than kWall, each round's value is its window's count
// (load_side): an Error when the folder has no window per round.
base::Result<InterleavedPair> load_interleaved(
    const std::string& folder, format::Metric metric = format::Metric::kWall);

// Whether `uris` (CurrentBenchmark order) is exactly A B B A A B ... for
// `pairs` pairs; the reason when not.
base::Status check_abba_order(const std::vector<std::string>& uris,
                              const std::string& a, const std::string& b,
                              uint64_t pairs);

}  // namespace runner::compare
