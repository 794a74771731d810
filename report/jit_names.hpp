// JitNames (report/ internal): the names of one process's JIT code, and
// which of them names an address at a sample's time. JIT runtimes reuse
// addresses: V8 frees a function's code and compiles another one at the
// same place, and both land in the process's files.
//
//  - jit-<pid>.timeline (from the process's jitdump) says when each body
//    was at its address: at time t, an address belongs to the entry covering
//    it whose `from` is the latest at or before t (and whose `to`, the
//    body's next move, is after t).
//  - perf-<pid>.map has no times. When no timeline entry covers the address
//    at t, the LAST line of the file covering it names it: runtimes append,
//    so a later line describes code put there later, and a benchmark's
//    samples come after its code was compiled. perf itself keeps every line
//    in a red-black tree ordered by start address (dso__load_perf_map and
//    symbols__insert in tools/perf/util/symbol.c, equal starts to the
//    right) and returns the first entry covering the address on its
//    root-to-leaf search path (symbols__find): with overlapping lines its
//    choice depends on the tree's shape, not on the file (for two lines of
//    the same range, the older one) — no rule to follow.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "format/format.hpp"

namespace runner::report {

class JitNames {
 public:
  struct Entry {
    uint64_t start = 0, end = 0;         // [start, end)
    uint64_t from = 0, to = UINT64_MAX;  // [from, to): at this address
    std::string name;
  };
  // At most this many (segment, entry) pairs are indexed: a folder's files
  // are input, and nested ranges could otherwise take quadratic memory.
  // Entries past it are dropped (counted in dropped()).
  static constexpr size_t kMaxCover = size_t{16} << 20;

  JitNames(const std::vector<format::PerfMapEntry>& perf_map,
           const std::vector<format::TimedJitEntry>& timeline);

  // The entry naming `addr` at `time`, or nullptr.
  const Entry* find(uint64_t addr, uint64_t time) const;
  size_t size() const { return entries_.size(); }
  size_t dropped() const { return dropped_; }

 private:
  void index();

  // Perf map lines (from 0, in file order), then timeline lines.
  std::vector<Entry> entries_;
  // Segment j is [bounds_[j], bounds_[j + 1]); the entries covering it are
  // cover_[first_[j] .. first_[j + 1]), by (from, then file order).
  std::vector<uint64_t> bounds_;
  std::vector<uint32_t> first_;
  std::vector<uint32_t> cover_;
  size_t dropped_ = 0;
};

}  // namespace runner::report
