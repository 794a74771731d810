// Address ranges: the lookup shared by every table of half-open
// [start, end) ranges sorted by start (unwind ranges, CU and inline ranges).
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>

namespace runner::base {

// The element of `sorted` (ordered by .start; each covers [start, end))
// that contains `addr`, or nullptr. Ranges that ought not to overlap
// sometimes do a little: the `max_back` closest ranges starting at or below
// `addr` are tried, nearest first.
template <typename Container>
auto find_containing(Container& sorted, uint64_t addr, int max_back = 8)
    -> decltype(&*std::begin(sorted)) {
  auto first = std::begin(sorted);
  auto it = std::upper_bound(
      first, std::end(sorted), addr,
      [](uint64_t a, const auto& range) { return a < range.start; });
  for (int step = 0; step < max_back && it != first; ++step) {
    --it;
    if (addr >= it->start && addr < it->end) return &*it;
  }
  return nullptr;
}

}  // namespace runner::base
