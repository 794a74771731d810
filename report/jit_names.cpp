#include "report/jit_names.hpp"

#include <algorithm>
#include <numeric>

namespace runner::report {

JitNames::JitNames(const std::vector<format::PerfMapEntry>& perf_map,
                   const std::vector<format::TimedJitEntry>& timeline) {
  entries_.reserve(perf_map.size() + timeline.size());
  auto add = [&](uint64_t start, uint64_t size, uint64_t from, uint64_t to,
                 const std::string& name) {
    // An empty range names nothing; one that wraps is cut at the top.
    if (size == 0) return;
    const uint64_t end = start + size < start ? UINT64_MAX : start + size;
    entries_.push_back(Entry{start, end, from, to, name});
  };
  for (const auto& e : perf_map) add(e.start, e.size, 0, UINT64_MAX, e.name);
  for (const auto& e : timeline) add(e.start, e.size, e.from, e.to, e.name);
  index();
}

void JitNames::index() {
  for (const Entry& e : entries_) {
    bounds_.push_back(e.start);
    bounds_.push_back(e.end);
  }
  std::sort(bounds_.begin(), bounds_.end());
  bounds_.erase(std::unique(bounds_.begin(), bounds_.end()), bounds_.end());
  // Entries in the order a segment lists them: by from, then file order.
  std::vector<uint32_t> order(entries_.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return entries_[a].from < entries_[b].from;
  });
  // Count, then fill, the entries of each segment.
  const size_t segments = bounds_.empty() ? 0 : bounds_.size() - 1;
  std::vector<size_t> count(segments + 1, 0);
  auto segment_of = [&](uint64_t addr) {
    return static_cast<size_t>(
        std::lower_bound(bounds_.begin(), bounds_.end(), addr) -
        bounds_.begin());
  };
  size_t total = 0;
  std::vector<bool> kept(entries_.size(), false);
  for (uint32_t i : order) {
    const size_t a = segment_of(entries_[i].start);
    const size_t b = segment_of(entries_[i].end);
    if (total + (b - a) > kMaxCover) {
      ++dropped_;
      continue;
    }
    kept[i] = true;
    total += b - a;
    for (size_t j = a; j < b; ++j) ++count[j];
  }
  first_.assign(segments + 1, 0);
  for (size_t j = 0; j < segments; ++j)
    first_[j + 1] = first_[j] + static_cast<uint32_t>(count[j]);
  cover_.assign(total, 0);
  std::vector<uint32_t> next(first_.begin(), first_.end());
  for (uint32_t i : order) {
    if (!kept[i]) continue;
    const size_t a = segment_of(entries_[i].start);
    const size_t b = segment_of(entries_[i].end);
    for (size_t j = a; j < b; ++j) cover_[next[j]++] = i;
  }
}

const JitNames::Entry* JitNames::find(uint64_t addr, uint64_t time) const {
  auto it = std::upper_bound(bounds_.begin(), bounds_.end(), addr);
  if (it == bounds_.begin() || it == bounds_.end()) return nullptr;
  const size_t j = static_cast<size_t>(it - bounds_.begin()) - 1;
  // The latest `from` at or before `time` whose `to` is after it.
  for (uint32_t k = first_[j + 1]; k-- > first_[j];) {
    const Entry& e = entries_[cover_[k]];
    if (e.from <= time && time < e.to) return &e;
  }
  return nullptr;
}

}  // namespace runner::report
