// Whether this machine lets tests open perf events (what `perf record` and
// the runner need): one software event on this process. Shared by the unit
// and end-to-end tests that skip (exit 77) when it is refused.
#pragma once

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace runner::testing {

// 0 when perf_event_open works here (or fails for a reason other than
// permission), else the errno that refused it (EACCES, EPERM, ENOSYS).
inline int perf_events_refused() {
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.disabled = 1;
  attr.exclude_kernel = 1;
  long fd = ::syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
  if (fd >= 0) {
    ::close(static_cast<int>(fd));
    return 0;
  }
  const int err = errno;
  return err == EACCES || err == EPERM || err == ENOSYS ? err : 0;
}

}  // namespace runner::testing
