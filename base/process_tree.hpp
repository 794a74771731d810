// What a process that runs a benchmark needs so that nothing outlives the
// run: it becomes the reaper of its orphaned descendants
// (PR_SET_CHILD_SUBREAPER), reaps them while the benchmark runs, and kills
// and reaps whatever is left once the benchmark exited. A descendant that
// escaped into its own session or process group is still found: when its
// parent dies it is re-parented to us, not to init.
//
// Only for a process whose children are all the benchmark's (the runner
// spawns nothing else): "every child of ours" is the set that gets killed.
// No pid is ever signalled that is not an unreaped child of ours, so pid
// reuse cannot redirect a kill to an unrelated process.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <vector>

#include "base/result.hpp"

namespace runner::base {

// prctl(PR_SET_CHILD_SUBREAPER, 1) for the calling process.
Status become_child_subreaper();

// The children of `parent` (from /proc/<pid>/stat), zombies included.
std::vector<pid_t> children_of(pid_t parent);

// Reaps (WNOHANG) exited children of ours other than `keep` until the next
// exited child is `keep` or none is left; returns how many were reaped.
size_t reap_children_except(pid_t keep);

struct LeftoverCleanup {
  std::vector<pid_t> killed;  // live children that got SIGKILL
  size_t reaped = 0;
  size_t unreaped = 0;  // still there at the deadline
};

// SIGKILLs every child of this process, reaps them and repeats for the
// children they leave behind (re-parented here when we are a subreaper),
// until no child is left or `timeout` passed.
LeftoverCleanup kill_all_children(std::chrono::milliseconds timeout);

}  // namespace runner::base
