#include "profiler/counters.hpp"

#include <linux/perf_event.h>

#include <algorithm>
#include <cerrno>

#include "format/format.hpp"
#include "profiler/probe.hpp"

namespace runner::profiler {
namespace {

perf_event_attr counting_attr(uint32_t type, uint64_t config, bool user_only) {
  perf_event_attr attr{};
  attr.size = format::perf::kAttrSize;
  attr.type = type;
  attr.config = config;
  attr.read_format =
      PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  attr.inherit = 1;
  attr.exclude_kernel = user_only ? 1 : 0;
  attr.exclude_hv = user_only ? 1 : 0;
  return attr;
}

bool permission_error(const base::Error& error) {
  return error.code() == EACCES || error.code() == EPERM;
}

// Opens one counter, user + kernel first, user space only when that is
// refused for lack of permission. `info` records which, or why not.
PerfEvent open_counter(pid_t pid, uint32_t type, uint64_t config,
                       format::CounterInfo& info,
                       std::optional<base::Error>& error) {
  auto event = PerfEvent::open(counting_attr(type, config, false), pid, -1);
  if (!event && permission_error(event.error())) {
    event = PerfEvent::open(counting_attr(type, config, true), pid, -1);
    info.user_only = event.has_value();
  }
  if (event) {
    info.counted = true;
    return std::move(*event);
  }
  const int code = event.error().code();
  info.absent_reason =
      code == ENOENT || code == EOPNOTSUPP || code == ENODEV
          ? "no hardware PMU here (" + event.error().what() + ")"
          : event.error().what() + " (" + explain_open_error(code) + ")";
  error = std::move(event.error());
  return {};
}

std::optional<format::CounterDelta> delta(
    const std::optional<PerfEvent::Count>& start,
    const std::optional<PerfEvent::Count>& stop) {
  if (!start || !stop) return std::nullopt;
  auto minus = [](uint64_t a, uint64_t b) { return a >= b ? a - b : 0; };
  format::CounterDelta d;
  d.value = minus(stop->value, start->value);
  d.enabled_ns = minus(stop->time_enabled_ns, start->time_enabled_ns);
  d.running_ns = std::min(d.enabled_ns,
                          minus(stop->time_running_ns, start->time_running_ns));
  return d;
}

}  // namespace

base::Result<Counters> Counters::create(pid_t pid) {
  Counters out;
  std::optional<base::Error> error;
  struct Spec {
    std::string_view name;
    uint32_t type;
    uint64_t config;
    PerfEvent* event;
  };
  for (const Spec& spec :
       {Spec{format::kTaskClockCounter, PERF_TYPE_SOFTWARE,
             PERF_COUNT_SW_TASK_CLOCK, &out.task_clock_},
        Spec{format::kInstructionsCounter, PERF_TYPE_HARDWARE,
             PERF_COUNT_HW_INSTRUCTIONS, &out.instructions_},
        Spec{format::kCyclesCounter, PERF_TYPE_HARDWARE,
             PERF_COUNT_HW_CPU_CYCLES, &out.cycles_}}) {
    format::CounterInfo info;
    info.name = std::string(spec.name);
    error.reset();
    *spec.event = open_counter(pid, spec.type, spec.config, info, error);
    out.info_.push_back(std::move(info));
    if (spec.event == &out.task_clock_ && error)
      return std::move(*error).context("counting task-clock");
  }
  return out;
}

base::Result<CounterSnapshot> Counters::read() const {
  CounterSnapshot snapshot;
  RUNNER_ASSIGN_OR_RETURN(snapshot.task_clock, task_clock_.read_count(),
                          "task-clock");
  if (instructions_.valid()) {
    RUNNER_ASSIGN_OR_RETURN(snapshot.instructions, instructions_.read_count(),
                            "instructions");
  }
  if (cycles_.valid()) {
    RUNNER_ASSIGN_OR_RETURN(snapshot.cycles, cycles_.read_count(), "cycles");
  }
  snapshot.time_ns = base::monotonic_ns();
  return snapshot;
}

format::CounterWindow counter_window(const CounterSnapshot& start,
                                     const CounterSnapshot& stop) {
  format::CounterWindow w;
  w.start_ns = start.time_ns;
  w.stop_ns = std::max(start.time_ns, stop.time_ns);
  w.task_clock = delta(start.task_clock, stop.task_clock);
  w.instructions = delta(start.instructions, stop.instructions);
  w.cycles = delta(start.cycles, stop.cycles);
  return w;
}

}  // namespace runner::profiler
