#include "profiler/probe.hpp"

#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include "base/base.hpp"
#include "format/format.hpp"
#include "profiler/event_attrs.hpp"
#include "profiler/perf_event.hpp"
#include "profiler/ring_buffer.hpp"

namespace runner::profiler {
namespace {

int read_int_file(const std::string& path, int fallback) {
  auto text = base::read_file(path);
  if (!text) return fallback;
  return static_cast<int>(std::strtol(text->c_str(), nullptr, 10));
}

// Opens `attr` the way the sampler does (on this process, per CPU, which is
// what lets an inherited event be mmapped) and optionally maps a buffer.
std::string try_open(const perf_event_attr& attr, int cpu,
                     bool map_buffer = false) {
  auto event = PerfEvent::open(attr, 0, cpu);
  if (!event) return event.error().what();
  if (map_buffer) {
    auto ring = RingBuffer::map(event->fd(), kMinMmapSize);
    if (!ring) return ring.error().what();
  }
  return "ok";
}

std::string rlimit_text(uint64_t value) {
  if (value == RLIM_INFINITY) return "unlimited";
  return std::to_string(value >> 10) + " KiB";
}

}  // namespace

ProbeReport probe_system() {
  ProbeReport report;
  report.perf_event_paranoid =
      read_int_file("/proc/sys/kernel/perf_event_paranoid", 2);
  report.kptr_restrict = read_int_file("/proc/sys/kernel/kptr_restrict", 0);
  report.perf_event_mlock_kb = static_cast<uint64_t>(
      read_int_file("/proc/sys/kernel/perf_event_mlock_kb", 0));
  rlimit limit{};
  if (::getrlimit(RLIMIT_MEMLOCK, &limit) == 0) {
    report.memlock_soft = limit.rlim_cur;
    report.memlock_hard = limit.rlim_max;
  }
  report.is_root = ::geteuid() == 0;

  // The sampler's own attributes (profiler/event_attrs.hpp), so that what
  // doctor reports is what a run opens.
  auto cpus = online_cpus();
  const int cpu = cpus && !cpus->empty() ? cpus->front() : 0;
  SamplerOptions dwarf_options;
  SamplerOptions fp_options;
  fp_options.call_graph = CallGraphMode::kFramePointer;
  const uint64_t size = kMinMmapSize;
  std::string cycles =
      try_open(sampling_attr(dwarf_options, cycles_event(), size), cpu);
  report.has_pmu = cycles == "ok";
  report.checks.emplace_back("cycles (hardware PMU)", cycles);
  const EventChoice clock = cpu_clock_event();
  report.checks.emplace_back(
      "cpu-clock + user regs and stack (dwarf)",
      try_open(sampling_attr(dwarf_options, clock, size), cpu));
  report.checks.emplace_back(
      "cpu-clock + callchain (frame pointers)",
      try_open(sampling_attr(fp_options, clock, size), cpu));
  report.checks.emplace_back("dummy tracking event (mmap2, comm, task)",
                             try_open(tracking_attr(dwarf_options), cpu));
  report.checks.emplace_back(
      "ring buffer mmap (" + std::to_string(size >> 10) + " KiB)",
      try_open(sampling_attr(dwarf_options, clock, size), cpu,
               /*map_buffer=*/true));
  return report;
}

std::string format_probe_report(const ProbeReport& report) {
  std::ostringstream out;
  out << "perf_event_paranoid: " << report.perf_event_paranoid << "\n"
      << "kptr_restrict: " << report.kptr_restrict << "\n"
      << "perf_event_mlock_kb: " << report.perf_event_mlock_kb << "\n"
      << "RLIMIT_MEMLOCK: soft " << rlimit_text(report.memlock_soft)
      << ", hard " << rlimit_text(report.memlock_hard) << "\n"
      << "root: " << (report.is_root ? "yes" : "no") << "\n";
  bool all_software_ok = true;
  for (const auto& [name, result] : report.checks) {
    out << "  " << name << ": " << result << "\n";
    if (name != "cycles (hardware PMU)" && result != "ok")
      all_software_ok = false;
  }
  out << "The runner will sample "
      << (report.has_pmu ? "hardware cycles"
                         : "cpu-clock (no hardware PMU: cycles did not open)")
      << " at 997 Hz, user space only, with DWARF call graphs.\n";
  if (!all_software_ok) {
    out << "Sampling will fail: ";
    int err = EACCES;
    if (!report.is_root && report.perf_event_paranoid > 2) err = EACCES;
    out << explain_open_error(err) << "\n";
  }
  if (!report.is_root) {
    out << "Ring buffers are " << (default_mmap_size(SamplerOptions{}) >> 10)
        << " KiB per CPU by default; when locked-memory limits refuse that "
           "they are halved (down to "
        << (kMinMmapSize >> 10)
        << " KiB) with a warning. Raise kernel.perf_event_mlock_kb or "
           "ulimit -l to avoid lost samples.\n";
  }
  return out.str();
}

std::string explain_open_error(int err) {
  const int paranoid = read_int_file("/proc/sys/kernel/perf_event_paranoid", 2);
  const std::string current =
      "kernel.perf_event_paranoid is " + std::to_string(paranoid);
  switch (err) {
    case EACCES:
    case EPERM:
      return current +
             "; sampling your own processes in user space needs a value of "
             "2 or less (run `sudo sysctl -w kernel.perf_event_paranoid=2`, "
             "or 1 to also see kernel frames), or run the runner as root / "
             "with CAP_PERFMON (`sudo setcap cap_perfmon+ep $(which "
             "runner)`); inside a container perf_event_open may also be "
             "blocked by the seccomp profile (docker --security-opt "
             "seccomp=unconfined or --cap-add PERFMON)";
    case ENOSYS:
      return "perf_event_open is not available: the kernel lacks "
             "CONFIG_PERF_EVENTS or a seccomp filter (container runtime) "
             "blocks the syscall; allow perf_event_open in the seccomp "
             "profile";
    case ENOENT:
    case EOPNOTSUPP:
    case ENODEV:
      return "this event is not supported here (no hardware PMU, as in "
             "most VMs); use --event cpu-clock";
    case EMFILE:
    case ENFILE:
      return "too many open files (one fd per CPU and event): raise "
             "`ulimit -n`";
    case EINVAL:
      return "the kernel rejected the event attributes (kernel too old for "
             "use_clockid/sample_id_all, or a bad stack size/frequency; "
             "check kernel.perf_event_max_sample_rate)";
    case E2BIG:
      return "the kernel does not know this perf_event_attr size";
    case EBUSY:
      return "the PMU is in use by another tool";
    case ESRCH:
      return "the process to sample no longer exists";
    case ENOMEM:
      return "out of memory for perf buffers";
    default:
      return std::strerror(err);
  }
}

}  // namespace runner::profiler
