// One profiled run of a benchmark command: profile folder, FIFO server,
// suspended child, sampler, signal forwarding, then finalization (artifacts),
// results validation and the optional report.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "agent/child_watcher.hpp"
#include "base/result.hpp"
#include "profiler/sampler.hpp"

namespace runner::agent {

struct RunOptions {
  std::vector<std::string> command;
  std::string profile_folder;  // empty: ./runner-profile.<timestamp>
  bool profile = true;
  bool allow_no_profile = false;
  bool allow_empty = false;
  bool report = false;
  profiler::SamplerOptions sampler;
  std::string fifo_dir;  // empty: /tmp
  // Serve the fixed /tmp FIFO paths under the global lock even when the
  // benchmark could get its own mount namespace.
  bool shared_fifos = false;
  int stdin_fd = -1;  // the benchmark's stdin (-1: inherited)
  // After forwarding SIGINT/SIGTERM/SIGHUP, SIGKILL the benchmark this long
  // later if it still runs.
  std::chrono::milliseconds kill_after = kDefaultKillAfter;
};

// Runs the session and returns the exit code for the runner process.
int run_session(const RunOptions& options);

}  // namespace runner::agent
