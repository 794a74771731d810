// Turns what a run collected into the upload-ready artifacts:
// ExecutionTimestamps.msgpack, per-ELF symbols/unwind data (through
// symbols::build_artifacts after mapping replay + /proc backfill),
// perf-<pid>.map copies and perf.metadata.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/base.hpp"
#include "fifo/fifo.hpp"
#include "perfdata/perfdata.hpp"
#include "profiler/profiler.hpp"
#include "symbols/symbols.hpp"

namespace runner::agent {

struct FinalizeInput {
  std::string folder;
  fifo::RunData run;
  profiler::SamplerOptions sampler_options;
  std::optional<profiler::SamplerStats> sampler_stats;
  std::vector<perfdata::ProcSnapshot> snapshots;
  bool profiled = false;
  // Reuse per-file artifacts through the finalize cache (see
  // finalize_cache_options()).
  bool use_cache = true;
};

base::Status finalize_profile(FinalizeInput input);

// Exposed for tests: the msgpack bytes of ExecutionTimestamps.
std::string execution_timestamps_msgpack(const fifo::RunData& run);

}  // namespace runner::agent
