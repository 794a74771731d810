// PerfEvent: one perf_event_open() file descriptor. This is the only place
// that calls perf_event_open and the perf ioctls; everything else holds
// PerfEvent objects (move-only, the fd is closed on destruction).
#pragma once

#include <linux/perf_event.h>
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/base.hpp"

namespace runner::profiler {

class PerfEvent {
 public:
  PerfEvent() = default;

  // perf_event_open(attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC). On failure the
  // Error carries the errno (see explain_open_error in probe.hpp).
  static base::Result<PerfEvent> open(const perf_event_attr& attr, pid_t pid,
                                      int cpu);

  int fd() const { return fd_.get(); }
  bool valid() const { return fd_.valid(); }

  // PERF_EVENT_IOC_ENABLE / DISABLE: they also reach the inherited copies of
  // the event in every thread and child of the target task.
  base::Status enable() const;
  base::Status disable() const;
  // PERF_EVENT_IOC_ID: the id the kernel writes into records of this event.
  base::Result<uint64_t> id() const;
  // read() of an event opened with read_format PERF_FORMAT_TOTAL_TIME_ENABLED
  // | PERF_FORMAT_TOTAL_TIME_RUNNING (no group): the count (with inherit, the
  // sum over the target and its live and exited inherited copies) and the
  // times the event was enabled and running on a PMU.
  struct Count {
    uint64_t value = 0, time_enabled_ns = 0, time_running_ns = 0;
  };
  base::Result<Count> read_count() const;
  // PERF_EVENT_IOC_SET_OUTPUT: send this event's records to the ring buffer
  // mmapped on `target` (same CPU).
  base::Status set_output(const PerfEvent& target) const;

 private:
  explicit PerfEvent(base::UniqueFd fd) : fd_(std::move(fd)) {}
  base::UniqueFd fd_;
};

// "0-3,5,7-8" (the /sys/devices/system/cpu/online syntax) -> {0,1,2,3,5,7,8}.
base::Result<std::vector<int>> parse_cpu_list(std::string_view text);
// The CPUs listed in /sys/devices/system/cpu/online.
base::Result<std::vector<int>> online_cpus();

}  // namespace runner::profiler
