// RunOptions: what `runner run` and `runner exec` hand to a Session once
// their options are parsed (the boundary between the command line and the
// session; a plain struct, owned by the caller).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "agent/child_watcher.hpp"
#include "base/base.hpp"
#include "profiler/profiler.hpp"

namespace runner::agent {

struct RunOptions {
  std::vector<std::string> command;
  std::string profile_folder;  // empty: ./runner-profile.<timestamp>
  bool profile = true;
  bool allow_no_profile = false;
  bool allow_empty = false;
  bool report = false;
  // Switch on perf maps, jitdumps and frame pointers of Node, CPython and
  // Java through their environment variables (agent/language_env.hpp).
  bool language_support = true;
  // Reuse the per-file artifacts of earlier runs (symbols/module_cache.hpp).
  bool cache = true;
  profiler::SamplerOptions sampler;
  // --call-graph dwarf,SIZE was given: the stack size is the user's.
  bool stack_size_given = false;
  // Why the stack size is not the default one, for the run summary
  // (choose_stack_size()); empty when it is the default or the user's.
  std::string stack_size_reason;
  std::string fifo_dir;  // empty: /tmp
  // Serve the fixed /tmp FIFO paths under the global lock even when the
  // benchmark could get its own mount namespace.
  bool shared_fifos = false;
  int stdin_fd = -1;  // the benchmark's stdin (-1: inherited)
  // After forwarding SIGINT/SIGTERM/SIGHUP, SIGKILL the benchmark this long
  // later if it still runs.
  std::chrono::milliseconds kill_after = kDefaultKillAfter;
};

}  // namespace runner::agent
