// perf-<pid>.map: the symbols a JIT (Node.js --perf-basic-prof, ...) writes
// to /tmp for its generated code, one "<start hex> <size hex> <name>" line
// each (perf's tools/perf/Documentation/jit-interface.txt). The agent copies
// the files into the profile folder; report/ reads them.
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

}  // namespace runner::format
