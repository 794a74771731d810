#include "report/attribution.hpp"

#include <algorithm>
#include <map>
#include <string_view>
#include <utility>

namespace runner::report {
namespace {

struct NameCount {
  uint64_t samples = 0;
  uint32_t first_id = UINT32_MAX;
};

// Samples per display name: as the leaf (`self`) or anywhere in the stack
// (a name counted once per stack, under its smallest frame id).
std::map<std::string_view, NameCount> count_by_name(
    const StackCounts& stacks, const Symbolizer& symbolizer, bool self) {
  std::map<std::string_view, NameCount> counts;
  auto add = [&](uint32_t id, uint64_t n) {
    NameCount& c = counts[symbolizer.frame(id).name];
    c.samples += n;
    c.first_id = std::min(c.first_id, id);
  };
  for (const auto& [stack, n] : stacks) {
    if (stack.empty()) continue;
    if (self) {
      add(stack.back(), n);
      continue;
    }
    std::map<std::string_view, uint32_t> seen;  // name -> its smallest id
    for (uint32_t id : stack) {
      auto [it, added] = seen.emplace(symbolizer.frame(id).name, id);
      if (!added) it->second = std::min(it->second, id);
    }
    for (const auto& [name, id] : seen) add(id, n);
  }
  return counts;
}

// The functions with the most samples (self: as the leaf; else: anywhere in
// the stack), by display name like the folded stacks and the flamegraph: one
// name from two modules (e.g. the same JIT function in the perf maps of two
// processes) is one entry. Ties go by the name's first frame id (the order
// in which the report first met them).
std::vector<FunctionCount> top_functions(const StackCounts& stacks,
                                         const Symbolizer& symbolizer,
                                         bool self, size_t limit) {
  const auto counts = count_by_name(stacks, symbolizer, self);
  std::vector<std::pair<std::string_view, NameCount>> sorted(counts.begin(),
                                                             counts.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return a.second.samples != b.second.samples
               ? a.second.samples > b.second.samples
               : a.second.first_id < b.second.first_id;
  });
  if (sorted.size() > limit) sorted.resize(limit);
  std::vector<FunctionCount> out;
  for (const auto& [name, c] : sorted)
    out.push_back(FunctionCount{std::string(name), c.samples});
  return out;
}

// Folded stacks sorted by frame names, one line per distinct name sequence
// (stacks of different frames with equal names, e.g. the same JIT function
// from two processes' perf maps, are summed).
std::vector<FoldedStack> folded(const StackCounts& stacks,
                                const Symbolizer& symbolizer) {
  std::map<std::vector<std::string>, uint64_t> merged;
  for (const auto& [stack, n] : stacks) {
    std::vector<std::string> frames;
    frames.reserve(stack.size());
    for (uint32_t id : stack) frames.push_back(symbolizer.frame(id).name);
    merged[std::move(frames)] += n;
  }
  std::vector<FoldedStack> out;
  out.reserve(merged.size());
  for (auto& [frames, n] : merged) out.push_back(FoldedStack{frames, n});
  return out;
}

}  // namespace

Attribution::Attribution(const ProfileFolder& folder) : folder_(folder) {
  std::map<std::string, size_t> by_name;
  std::vector<std::pair<uint64_t, uint64_t>> spans;
  for (const Window& w : folder.windows()) {
    spans.emplace_back(w.start, w.end);
    rounds_.emplace_back(w.rounds);
    auto [it, added] = by_name.emplace(w.name, benches_.size());
    if (added) {
      benches_.push_back(Bench{});
      benches_.back().uri = w.uri;
      benches_.back().summary.name = w.name;
    }
    bench_of_window_.push_back(it->second);
  }
  windows_ = IntervalIndex(spans);
}

const Window* Attribution::window_at(uint64_t time, size_t* index) const {
  const size_t i = windows_.find(time);
  if (i == IntervalIndex::kNone) return nullptr;
  *index = i;
  return &folder_.windows()[i];
}

Attribution::Target Attribution::target(
    const perfdata::SampleRecord& sample) const {
  Target t;
  size_t index = 0;
  const Window* window = window_at(sample.time, &index);
  if (window == nullptr) return t;
  if (folder_.filter_pids() &&
      folder_.tracked_pids().count(static_cast<int32_t>(sample.pid)) == 0) {
    t.verdict = Verdict::kUntrackedPid;
    return t;
  }
  t.verdict = Verdict::kBenchmark;
  t.benchmark = bench_of_window_[index];
  t.proper = window->rounds.empty() ||
             rounds_[index].find(sample.time) != IntervalIndex::kNone;
  return t;
}

void Attribution::add(const Target& target,
                      const std::vector<uint32_t>& frame_ids,
                      const UnwoundStack& stack) {
  const StackEnd end = stack.end;
  Bench& bench = benches_[target.benchmark];
  (target.proper ? bench.proper : bench.harness)[frame_ids] += 1;
  BenchmarkSummary& s = bench.summary;
  (target.proper ? s.samples : s.harness_samples) += 1;
  if (!stack.frame_pointer.empty()) ++s.frame_pointer;
  switch (end) {
    case StackEnd::kComplete:
      ++s.unwound_full;
      break;
    case StackEnd::kTruncated:
      ++s.truncated;
      break;
    case StackEnd::kUnknown:
      ++s.unknown;
      break;
  }
}

void Attribution::add_lost(uint64_t time, uint64_t count) {
  size_t index = 0;
  if (window_at(time, &index))
    benches_[bench_of_window_[index]].summary.lost += count;
}

BenchmarkProfile Attribution::profile(size_t index,
                                      const Symbolizer& symbolizer,
                                      unsigned top) const {
  const Bench& bench = benches_[index];
  BenchmarkProfile p;
  p.index = index;
  p.name = bench.summary.name;
  p.uri = bench.uri;
  p.summary = bench.summary;
  p.stacks = folded(bench.proper, symbolizer);
  p.harness_stacks = folded(bench.harness, symbolizer);
  p.top_self = top_functions(bench.proper, symbolizer, true, top);
  p.top_total = top_functions(bench.proper, symbolizer, false, top);
  return p;
}

}  // namespace runner::report
