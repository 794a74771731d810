// Counters: counting perf events (no samples, no ring buffer) on the
// benchmark's root process, opened by the runner with inherit and cpu = -1,
// so that every thread and child process the benchmark starts afterwards
// counts too: read() returns the sum over the root, its live inherited
// copies and those of exited children. Read at each benchmark window's
// start and stop (agent/session.cpp), the differences of two reads are a
// window's counts (counter_window).
//
//  - task-clock (always): the CPU time, in ns, the process tree spent on a
//    CPU, user and kernel alike. The kernel accounts it whatever
//    exclude_kernel says (that bit only filters where samples are taken), so
//    the user-only fallback below counts the same time.
//  - instructions, cycles: only where a hardware PMU exists; elsewhere the
//    open fails (ENOENT, EOPNOTSUPP, ENODEV) and they are absent, with the
//    reason, not an error. They share the PMU with other users, so the
//    kernel may multiplex them: read with PERF_FORMAT_TOTAL_TIME_ENABLED and
//    _RUNNING, a window with running < enabled is flagged, never scaled.
//
// Permissions: counting another user's process needs what the sampler needs
// (root or CAP_PERFMON, or a low kernel.perf_event_paranoid). At
// perf_event_paranoid 2 an unprivileged user may count its own child, but
// only with exclude_kernel: an EACCES/EPERM on the first try is retried so,
// and the counter is then marked user_only (for task-clock this changes
// nothing, for instructions and cycles it drops the kernel's part).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/base.hpp"
#include "format/format.hpp"
#include "profiler/perf_event.hpp"

namespace runner::profiler {

// One read of every counter that is open.
struct CounterSnapshot {
  uint64_t time_ns = 0;  // CLOCK_MONOTONIC, right after the reads
  std::optional<PerfEvent::Count> task_clock, instructions, cycles;
};

class Counters {
 public:
  // Opens the counters on `pid` (counting from now on). Error only when
  // task-clock itself cannot be opened (its message says why: paranoid,
  // seccomp, ...); instructions and cycles that cannot be opened are
  // absent (info() says why).
  static base::Result<Counters> create(pid_t pid);

  base::Result<CounterSnapshot> read() const;
  // task-clock, instructions, cycles: opened or why not.
  const std::vector<format::CounterInfo>& info() const { return info_; }

 private:
  Counters() = default;
  PerfEvent task_clock_, instructions_, cycles_;
  std::vector<format::CounterInfo> info_;
};

// The counts of the window between two reads (start <= stop), as
// runner.counters.json stores them: a counter is present when both reads
// have it.
format::CounterWindow counter_window(const CounterSnapshot& start,
                                     const CounterSnapshot& stop);

}  // namespace runner::profiler
