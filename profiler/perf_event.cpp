#include "profiler/perf_event.hpp"

#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>

#include "base/base.hpp"

namespace runner::profiler {
namespace {

int perf_event_open_syscall(const perf_event_attr& attr, pid_t pid, int cpu,
                            int group_fd, unsigned long flags) {
  return static_cast<int>(
      ::syscall(SYS_perf_event_open, &attr, pid, cpu, group_fd, flags));
}

base::Status perf_ioctl(int fd, unsigned long request, unsigned long arg,
                        const char* what) {
  if (::ioctl(fd, request, arg) != 0) return base::errno_error(what);
  return {};
}

bool parse_int(std::string_view text, int& out) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && ptr == end && out >= 0;
}

}  // namespace

base::Result<PerfEvent> PerfEvent::open(const perf_event_attr& attr, pid_t pid,
                                        int cpu) {
  int fd = perf_event_open_syscall(attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0) {
    return base::errno_error(
        "perf_event_open(type=" + std::to_string(attr.type) +
        ", config=" + std::to_string(attr.config) +
        ", pid=" + std::to_string(pid) + ", cpu=" + std::to_string(cpu) + ")");
  }
  return PerfEvent(base::UniqueFd(fd));
}

base::Status PerfEvent::enable() const {
  return perf_ioctl(fd_.get(), PERF_EVENT_IOC_ENABLE, 0,
                    "ioctl(PERF_EVENT_IOC_ENABLE)");
}

base::Status PerfEvent::disable() const {
  return perf_ioctl(fd_.get(), PERF_EVENT_IOC_DISABLE, 0,
                    "ioctl(PERF_EVENT_IOC_DISABLE)");
}

base::Result<uint64_t> PerfEvent::id() const {
  uint64_t value = 0;
  if (::ioctl(fd_.get(), PERF_EVENT_IOC_ID, &value) != 0)
    return base::errno_error("ioctl(PERF_EVENT_IOC_ID)");
  return value;
}

base::Result<PerfEvent::Count> PerfEvent::read_count() const {
  uint64_t values[3] = {};
  const ssize_t n = ::read(fd_.get(), values, sizeof(values));
  if (n < 0) return base::errno_error("read(perf event)");
  if (static_cast<size_t>(n) != sizeof(values))
    return base::Error("read(perf event): " + std::to_string(n) +
                       " bytes instead of " + std::to_string(sizeof(values)));
  return Count{values[0], values[1], values[2]};
}

base::Status PerfEvent::set_output(const PerfEvent& target) const {
  return perf_ioctl(fd_.get(), PERF_EVENT_IOC_SET_OUTPUT,
                    static_cast<unsigned long>(target.fd()),
                    "ioctl(PERF_EVENT_IOC_SET_OUTPUT)");
}

base::Result<std::vector<int>> parse_cpu_list(std::string_view text) {
  std::vector<int> cpus;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
    text.remove_suffix(1);
  if (text.empty()) return base::Error("empty cpu list");
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view()
                                           : text.substr(comma + 1);
    size_t dash = item.find('-');
    int first = 0;
    int last = 0;
    bool ok = dash == std::string_view::npos
                  ? parse_int(item, first)
                  : parse_int(item.substr(0, dash), first) &&
                        parse_int(item.substr(dash + 1), last);
    if (dash == std::string_view::npos) last = first;
    // 1 << 16 CPUs is far above any real machine; it bounds a bad range.
    if (!ok || last < first || last >= (1 << 16))
      return base::Error("bad cpu list item '" + std::string(item) + "'");
    for (int cpu = first; cpu <= last; ++cpu) cpus.push_back(cpu);
  }
  return cpus;
}

base::Result<std::vector<int>> online_cpus() {
  RUNNER_ASSIGN_OR_RETURN(std::string text,
                          base::read_file("/sys/devices/system/cpu/online"),
                          "reading online cpus");
  return parse_cpu_list(text);
}

}  // namespace runner::profiler
