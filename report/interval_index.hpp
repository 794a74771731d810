// IntervalIndex (report/ internal): which of a list of closed intervals
// [first, second] holds a point (the first in list order when several do)
// in O(log n) per point, built in O(n log n): a profile folder can hold
// 100,000s of benchmark windows and rounds, and every sample asks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace runner::report {

class IntervalIndex {
 public:
  static constexpr size_t kNone = SIZE_MAX;

  IntervalIndex() = default;
  // An interval whose end is before its start holds nothing.
  explicit IntervalIndex(
      const std::vector<std::pair<uint64_t, uint64_t>>& intervals);

  // The index of the first interval holding `point`, or kNone.
  size_t find(uint64_t point) const;

 private:
  // The points where the set of intervals holding a point changes: segment
  // j is [bounds_[j], bounds_[j + 1]) (the last one up to UINT64_MAX), and
  // first_[j] the first interval holding it.
  std::vector<uint64_t> bounds_;
  std::vector<size_t> first_;
};

}  // namespace runner::report
