// probe: what `runner doctor` prints about perf_event_open on this machine,
// and the text that explains a refused perf_event_open in errors.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace runner::profiler {

struct ProbeReport {
  int perf_event_paranoid = 0;
  int kptr_restrict = 0;
  uint64_t perf_event_mlock_kb = 0;
  uint64_t memlock_soft = 0, memlock_hard = 0;  // RLIMIT_MEMLOCK, bytes
  bool is_root = false;
  bool has_pmu = false;  // hardware cycles opens
  // check name -> "ok" or error text
  std::vector<std::pair<std::string, std::string>> checks;
};

// Opens test events (cycles, cpu-clock, and cpu-clock with each sample type:
// regs+stack, callchain, dummy tracking, ring buffer mmap) on the current
// process and reads the relevant sysctls and limits.
ProbeReport probe_system();
// Human text including what the runner will do (event, mode).
std::string format_probe_report(const ProbeReport& report);
// What to change when perf_event_open fails with `err` (EACCES, EPERM,
// ENOSYS, ENOENT, EMFILE, ...): paranoid value, sysctl command, CAP_PERFMON,
// seccomp.
std::string explain_open_error(int err);

}  // namespace runner::profiler
