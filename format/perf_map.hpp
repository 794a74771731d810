// perf-<pid>.map: the symbols a JIT (Node.js --perf-basic-prof, ...) writes
// to /tmp for its generated code, one "<start hex> <size hex> <name>" line
// each (perf's tools/perf/Documentation/jit-interface.txt). The agent copies
// the files into the profile folder; report/ reads them.
//
// jit-<pid>.timeline: the same names with the time each was at its address,
// from the process's jitdump (the folder's own file; perf maps have no
// times): "<start hex> <size hex> <from hex> <to hex> <name>" per line, from
// and to CLOCK_MONOTONIC ns (the samples' clock) of the record that put the
// code there (CODE_LOAD, CODE_MOVE) and of the one that took it away (the
// body's next CODE_MOVE), to = ffffffffffffffff while it stayed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace runner::format {

struct PerfMapEntry {
  uint64_t start = 0, size = 0;
  std::string name;
};

// The entries of a perf map in file order. Hex fields may carry "0x"; the
// name is the rest of the line (spaces included, possibly empty). Lines
// that are not of that shape are skipped and counted in *bad_lines.
std::vector<PerfMapEntry> parse_perf_map(std::string_view text,
                                         std::size_t* bad_lines = nullptr);
// "<start hex> <size hex> <name>\n" per entry, lowercase hex without 0x
// (line breaks in a name written as '?').
std::string format_perf_map(std::span<const PerfMapEntry> entries);

struct TimedJitEntry {
  uint64_t start = 0, size = 0;
  uint64_t from = 0, to = UINT64_MAX;  // [from, to): at this address
  std::string name;
};

// The entries of a jit-<pid>.timeline in file order; lines not of that
// shape (or with to < from) are skipped and counted in *bad_lines.
std::vector<TimedJitEntry> parse_jit_timeline(std::string_view text,
                                              std::size_t* bad_lines = nullptr);
std::string format_jit_timeline(std::span<const TimedJitEntry> entries);

}  // namespace runner::format
