// perfdata: reading what the profiler recorded.
//
// PipedataReader streams perf.pipedata records back (bounded memory; the
// record layouts are format::perf's). MappingTracker replays the side-band
// records (MMAP2, COMM exec, FORK, EXIT) for the tracked pids and backfills
// mappings from ProcSnapshots of /proc/<pid>/maps, which the agent takes
// with snapshot_proc_maps() while a benchmark process is alive (a snapshot
// owns fds pinning deleted files; the tracker takes them over).
// Depends on base and format only: report/ reads profiles through this part
// without linking the sampler.
#pragma once

#include "perfdata/mapping_tracker.hpp"
#include "perfdata/pipedata_reader.hpp"
#include "perfdata/proc_maps.hpp"
