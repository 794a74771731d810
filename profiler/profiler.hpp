// profiler: recording perf events into perf.pipedata.
//
// Recording:  Sampler (per-CPU perf_event_open on the benchmark's root pid,
//   inherit=1, sampling events enabled only inside benchmark windows, an
//   always-on dummy tracking event) owns the perf fds, the per-CPU ring
//   buffers and a drain thread that appends the records to perf.pipedata
//   (perf's pipe format, readable by `perf script`), with StackBlanker
//   zeroing what the samples' stack copies hold of the initial stack area
//   (argv, environment, auxv; InitialStacks says where it lies), and
//   SideBandLog keeping the side-band records it writes for the mapping
//   replay after the run.
// Reading it back is perfdata/'s (PipedataReader, MappingTracker).
// Counting:  Counters (task-clock, instructions, cycles on the benchmark's
//   process tree, inherit, read at each benchmark window's start and stop).
// probe_system() reports what the machine allows (for `runner doctor`);
// estimate_capacity() whether it holds a sampling request (the warning
// before a run, and doctor).
#pragma once

#include "profiler/capacity.hpp"
#include "profiler/counters.hpp"
#include "profiler/pipedata_writer.hpp"
#include "profiler/probe.hpp"
#include "profiler/sampler.hpp"
#include "profiler/sampler_options.hpp"
#include "profiler/side_band_log.hpp"
#include "profiler/stack_blanker.hpp"
