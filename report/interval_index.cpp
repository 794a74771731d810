#include "report/interval_index.hpp"

#include <algorithm>
#include <functional>
#include <queue>

namespace runner::report {

IntervalIndex::IntervalIndex(
    const std::vector<std::pair<uint64_t, uint64_t>>& intervals) {
  for (const auto& [start, end] : intervals) {
    if (start > end) continue;
    bounds_.push_back(start);
    if (end != UINT64_MAX) bounds_.push_back(end + 1);
  }
  std::sort(bounds_.begin(), bounds_.end());
  bounds_.erase(std::unique(bounds_.begin(), bounds_.end()), bounds_.end());
  const auto segment = [&](uint64_t point) {
    return static_cast<size_t>(
        std::lower_bound(bounds_.begin(), bounds_.end(), point) -
        bounds_.begin());
  };
  // (first segment, interval) in segment order; the segment each stops at.
  std::vector<std::pair<size_t, size_t>> starts;
  std::vector<size_t> stop(intervals.size(), bounds_.size());
  for (size_t i = 0; i < intervals.size(); ++i) {
    const auto& [start, end] = intervals[i];
    if (start > end) continue;
    starts.emplace_back(segment(start), i);
    if (end != UINT64_MAX) stop[i] = segment(end + 1);
  }
  std::sort(starts.begin(), starts.end());
  // A sweep over the segments: the smallest index among the intervals
  // started and not stopped (stopped ones leave the heap when on top).
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> open;
  first_.assign(bounds_.size(), kNone);
  size_t next = 0;
  for (size_t j = 0; j < bounds_.size(); ++j) {
    for (; next < starts.size() && starts[next].first == j; ++next)
      open.push(starts[next].second);
    while (!open.empty() && stop[open.top()] <= j) open.pop();
    if (!open.empty()) first_[j] = open.top();
  }
}

size_t IntervalIndex::find(uint64_t point) const {
  auto it = std::upper_bound(bounds_.begin(), bounds_.end(), point);
  if (it == bounds_.begin()) return kNone;
  return first_[static_cast<size_t>(it - bounds_.begin()) - 1];
}

}  // namespace runner::report
