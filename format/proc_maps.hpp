// /proc/<pid>/maps lines: "start-end perms offset maj:min inode   path"
// (proc(5)). Read by the profiler's snapshots of live processes and by the
// agent (its own vDSO); written here only so that tests can round-trip.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace runner::format {

// One line, every column as the kernel prints it.
struct MapsLine {
  uint64_t start = 0, end = 0, offset = 0;
  uint32_t dev_major = 0, dev_minor = 0;
  uint64_t inode = 0;
  std::string perms;  // "r-xp"
  // Everything after the padding that follows the inode column: "" for
  // anonymous memory, "[vdso]"-style pseudo names, or a path (which may
  // hold spaces and end in " (deleted)").
  std::string path;
};

// The line's columns, or nullopt when one is missing or malformed (also
// end < start, or a device number beyond 32 bits).
std::optional<MapsLine> parse_maps_line(std::string_view line);
// Every well-formed line of a maps file, in order; the others are skipped.
std::vector<MapsLine> parse_maps(std::string_view text);
// The line as the kernel prints it (path column padded to column 73).
std::string format_maps_line(const MapsLine& line);

// An executable mapping of a file, from one line.
struct ProcMapping {
  uint64_t start = 0, end = 0, offset = 0;
  uint32_t dev_major = 0, dev_minor = 0;
  uint64_t inode = 0;
  std::string perms;  // "r-xp"
  std::string path;   // without the " (deleted)" suffix
  bool deleted = false;
};

// Lines seen and why lines were not returned.
struct ProcMapsStats {
  uint64_t lines = 0, not_executable = 0, anonymous = 0, pseudo = 0,
           malformed = 0;
};

// Executable (perms has 'x'), file-backed lines only. The path is
// everything from the first '/' after the inode column (paths may contain
// spaces); "[vdso]"-style pseudo paths and other non-'/' names
// ("anon_inode:...") are skipped; a trailing " (deleted)" is stripped and
// flagged.
std::vector<ProcMapping> parse_proc_maps(std::string_view text,
                                         ProcMapsStats* stats = nullptr);

}  // namespace runner::format
