// /proc/<pid>/maps: snapshots of a live process's executable
// file mappings. A snapshot is taken while the process is alive (when a pid
// announces itself) to backfill mappings perf never recorded (docs/formats.md,
// "Mappings"). Mappings of deleted files are pinned: the snapshot owns an fd on
// the mapped file, readable later through /proc/self/fd/<fd> even after the
// process and the directory entry are gone.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/base.hpp"
#include "format/format.hpp"

namespace runner::perfdata {

// The lines themselves are format/'s.
using format::parse_proc_maps;
using format::ProcMapping;
using format::ProcMapsStats;

struct PinnedFile {
  uint64_t start = 0, end = 0;  // the mapping the fd was opened through
  base::UniqueFd fd;
};

struct ProcSnapshot {
  int32_t pid = 0;
  uint64_t timestamp = 0;  // CLOCK_MONOTONIC ns when the maps were read
  // Owner of /proc/<pid> (the process's effective uid) when the maps were
  // read: who may write its /tmp/perf-<pid>.map.
  std::optional<uint32_t> uid;
  std::vector<ProcMapping> mappings;
  std::vector<PinnedFile> pinned;
  ProcMapsStats stats;
  uint64_t deleted_unreadable = 0;  // deleted mappings dropped: no fd
};

// Reads /proc/<pid>/maps. For each " (deleted)" executable mapping opens
// /proc/<pid>/map_files/<start>-<end> (needs CAP_SYS_ADMIN) and keeps the fd;
// when that fails the mapping is dropped and counted in deleted_unreadable.
// A dead pid gives an Error (ENOENT/ESRCH).
base::Result<ProcSnapshot> snapshot_proc_maps(int32_t pid);

}  // namespace runner::perfdata
