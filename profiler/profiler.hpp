// profiler: everything about perf events and the records they produce.
//
// Recording:  Sampler (per-CPU perf_event_open on the benchmark's root pid,
//   inherit=1, sampling events enabled only inside benchmark windows, an
//   always-on dummy tracking event) owns the perf fds, the per-CPU ring
//   buffers and a drain thread that appends the records to perf.pipedata
//   (perf's pipe format, readable by `perf script`).
// Reading:    PipeDataReader streams perf.pipedata records back (bounded
//   memory); MappingTracker replays the side-band records (MMAP2, COMM exec,
//   FORK, EXIT) for the tracked pids and backfills mappings from
//   ProcSnapshots of /proc/<pid>/maps taken when a pid was announced.
// probe_system() reports what the machine allows (for `runner doctor`).
#pragma once

#include "profiler/mapping_tracker.hpp"
#include "profiler/pipedata_reader.hpp"
#include "profiler/probe.hpp"
#include "profiler/proc_maps.hpp"
#include "profiler/sampler.hpp"
