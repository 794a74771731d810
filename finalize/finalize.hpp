// finalize: the owner of the profile folder's artifacts. What a run
// collected flows in as one FinalizeInput (the FIFO's RunData from fifo/,
// the sampler's options and counters from profiler/, the /proc snapshots
// from perfdata/) and leaves as files of the folder, each written here and
// nowhere else:
//   ExecutionTimestamps.msgpack   the benchmark windows and their URIs
//   <key>.symbols.map, <key>.unwind_data, debug info
//                                 of every mapped ELF (built by symbols/
//                                 after the mapping replay of perfdata/ and
//                                 the /proc backfill), and of JIT code from
//                                 jitdumps (jit_artifacts.hpp)
//   perf-<pid>.map                copies of /tmp/perf-<pid>.map, plus the
//                                 jitdumps' names
//   jit-<pid>.timeline            the jitdumps' names with their times
//   perf.pipedata                 HEADER_BUILD_ID records appended (the
//                                 records themselves are profiler/'s)
//   perf.metadata                 the index of all of the above, last
// The layout and encodings are format/'s; the folder itself, runner.log,
// perf.pipedata and results/ are created by the agent and the benchmark.
// The agent calls finalize_profile once, after the benchmark exited.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/base.hpp"
#include "fifo/fifo.hpp"
#include "perfdata/perfdata.hpp"
#include "profiler/profiler.hpp"

namespace runner::finalize {

struct FinalizeInput {
  std::string folder;
  fifo::RunData run;
  profiler::SamplerOptions sampler_options;
  std::optional<profiler::SamplerStats> sampler_stats;
  // The side-band records the sampler kept (Sampler::take_side_band): when
  // usable, the mappings are replayed from them instead of perf.pipedata.
  std::optional<format::perf::SideBandRecords> side_band;
  std::vector<perfdata::ProcSnapshot> snapshots;
  bool profiled = false;
  // Reuse per-file artifacts through the finalize cache
  // ($XDG_CACHE_HOME/runner/finalize, capped by RUNNER_CACHE_MAX_MB).
  bool use_cache = true;
  // CLOCK_REALTIME ns when the run started (0: unknown): the runtimes' logs
  // modified since are the run's (remove_runtime_files).
  uint64_t run_started_realtime_ns = 0;
};

// Writes the artifacts above into input.folder. Artifacts that could not be
// written make it fail, after everything else was written.
base::Status finalize_profile(FinalizeInput input);

// Exposed for tests: the msgpack bytes of ExecutionTimestamps.
std::string execution_timestamps_msgpack(const fifo::RunData& run);

}  // namespace runner::finalize
