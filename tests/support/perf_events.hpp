// Whether this machine lets tests open perf events (what `perf record` and
// the runner need): one software event on this process. A case that needs
// them starts with RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS(): when the syscall
// is refused, that case alone is skipped with the reason.
#pragma once

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "tests/support/skip.hpp"

namespace runner::testing {

// 0 when a disabled user-only event of `type` and `config` opens on this
// process, else the errno that refused it.
inline int perf_event_open_errno(uint32_t type, uint64_t config) {
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = type;
  attr.config = config;
  attr.disabled = 1;
  attr.exclude_kernel = 1;
  long fd = ::syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
  if (fd >= 0) {
    ::close(static_cast<int>(fd));
    return 0;
  }
  return errno;
}

// 0 when perf_event_open works here (or fails for a reason other than
// permission), else the errno that refused it (EACCES, EPERM, ENOSYS).
inline int perf_events_refused() {
  const int err =
      perf_event_open_errno(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
  return err == EACCES || err == EPERM || err == ENOSYS ? err : 0;
}

// Empty when perf events can be opened here, else why not.
inline std::string perf_events_refusal() {
  const int err = perf_events_refused();
  if (err == 0) return {};
  return std::string("perf_event_open refused here (") + std::strerror(err) +
         "); see runner doctor";
}

}  // namespace runner::testing

// Skips the running test case (only it) when perf_event_open is refused.
#define RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS()                                  \
  do {                                                                         \
    if (const std::string refusal_ = ::runner::testing::perf_events_refusal(); \
        !refusal_.empty())                                                     \
      RUNNER_SKIP_CASE(refusal_);                                              \
  } while (0)
