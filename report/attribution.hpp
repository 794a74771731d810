// Attribution (report/ internal): which benchmark a sample belongs to (the
// windows and rounds of ExecutionTimestamps.msgpack, the tracked pids of
// perf.metadata), and per benchmark the counts of its distinct stacks of
// frame ids. Memory grows with distinct stacks, not with samples.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "report/interval_index.hpp"
#include "report/output.hpp"
#include "report/profile_folder.hpp"
#include "report/symbolizer.hpp"
#include "report/unwinder.hpp"

namespace runner::report {

struct StackHash {
  size_t operator()(const std::vector<uint32_t>& v) const {
    size_t h = 1469598103934665603ull;
    for (uint32_t x : v) h = (h ^ x) * 1099511628211ull;
    return h;
  }
};

// Frame ids (Symbolizer) root first -> samples.
using StackCounts =
    std::unordered_map<std::vector<uint32_t>, uint64_t, StackHash>;

class Attribution {
 public:
  // Benchmarks in the order of their first window.
  explicit Attribution(const ProfileFolder& folder);

  enum class Verdict { kBenchmark, kOutsideWindows, kUntrackedPid };
  struct Target {
    Verdict verdict = Verdict::kOutsideWindows;
    size_t benchmark = 0;
    bool proper = false;  // in a round (else the harness's part)
  };
  Target target(const perfdata::SampleRecord& sample) const;
  // Counts one sample of `target` (a kBenchmark verdict).
  void add(const Target& target, const std::vector<uint32_t>& frame_ids,
           const UnwoundStack& stack);
  // Lost samples at `time` count against the benchmark whose window has it.
  void add_lost(uint64_t time, uint64_t count);

  size_t size() const { return benches_.size(); }
  // Benchmark `index` as the outputs see it: stacks folded by frame names,
  // the `top` functions with the most samples.
  BenchmarkProfile profile(size_t index, const Symbolizer& symbolizer,
                           unsigned top) const;

 private:
  struct Bench {
    std::string uri;
    StackCounts proper, harness;
    BenchmarkSummary summary;
  };
  const Window* window_at(uint64_t time, size_t* index) const;

  const ProfileFolder& folder_;
  std::vector<Bench> benches_;
  std::vector<size_t> bench_of_window_;
  // The first window holding a time; per window, whether a round does.
  IntervalIndex windows_;
  std::vector<IntervalIndex> rounds_;
};

}  // namespace runner::report
