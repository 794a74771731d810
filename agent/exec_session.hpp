// `runner exec` once its options are parsed: every target is checked (its
// command exists, its walltime options are valid) before anything runs, the
// targets go to `exec-harness -` on stdin (spec §6.1), and exec-harness runs
// as the benchmark command of a Session.
#pragma once

#include <vector>

#include "agent/exec_config.hpp"
#include "agent/run_options.hpp"

namespace runner::agent {

// Returns the exit code for the runner process; `options.command` and
// `options.stdin_fd` are set here.
int run_exec_session(RunOptions options,
                     const std::vector<ExecTarget>& targets);

}  // namespace runner::agent
