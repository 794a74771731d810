#include "profiler/capacity.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <sstream>

#include "base/base.hpp"
#include "format/format.hpp"
#include "profiler/perf_event.hpp"

namespace runner::profiler {
namespace {

constexpr uint64_t kUnlimited = std::numeric_limits<uint64_t>::max();
// A smaller dwarf stack copy rarely unwinds past a frame or two: below it
// the warning suggests frame pointers instead.
constexpr uint32_t kMinUsefulStack = 1024;

// The drain's estimated CPU for one sample with a `stack_size` stack copy
// (0: a frame-pointer sample).
double drain_ns(uint32_t stack_size) {
  if (stack_size == 0) return kDrainNsPerSample;
  const uint32_t written = std::min(stack_size, kWrittenStackBytes);
  return kDrainNsPerSample + kDrainNsPerDwarfSample +
         kDrainNsPerStackKiB * static_cast<double>(written) / 1024.0;
}

uint32_t copied_stack(const SamplerOptions& options) {
  return options.call_graph == CallGraphMode::kDwarf ? options.stack_size : 0;
}

// Bytes the kernel lets this user lock for perf buffers, with nothing else
// locked: perf_event_mlock_kb (in pages) per online CPU, then RLIMIT_MEMLOCK.
uint64_t lock_limit(const MachineLimits& limits) {
  if (limits.lock_unlimited || limits.memlock_bytes == kUnlimited)
    return kUnlimited;
  const uint64_t page = std::max<uint64_t>(limits.page_size, 1);
  const uint64_t perf_pages = limits.perf_event_mlock_kb * 1024 / page;
  const uint64_t rlimit_pages = limits.memlock_bytes / page;
  return (perf_pages * limits.cpus + rlimit_pages) * page;
}

// What the sampler maps: the wanted size, halved while the buffers of every
// CPU (each one page more) exceed the limit, down to min(wanted, 64 KiB);
// 0 when even that does not fit.
uint64_t mapped_buffer(uint64_t wanted, uint64_t limit,
                       const MachineLimits& limits) {
  if (limit == kUnlimited) return wanted;
  const uint64_t min_size = std::min(wanted, kMinMmapSize);
  const uint64_t cpus = std::max<uint64_t>(limits.cpus, 1);
  for (uint64_t size = wanted; size >= min_size && size > 0; size /= 2) {
    if (cpus * (size + limits.page_size) <= limit) return size;
  }
  return 0;
}

// The largest dwarf stack size whose samples the drain holds at `frequency`
// on every CPU within kMaxDrainCoreShare; 0 when none does.
uint32_t max_stack_for(uint32_t frequency, uint32_t cpus) {
  const double budget_ns =
      kMaxDrainCoreShare * 1e9 / (static_cast<double>(cpus) * frequency);
  const double bytes =
      (budget_ns - kDrainNsPerSample - kDrainNsPerDwarfSample) /
      kDrainNsPerStackKiB * 1024.0;
  if (bytes < 8) return 0;
  // Copies are written cut: beyond kWrittenStackBytes a larger copy asked
  // for costs the drain no more.
  if (bytes >= kWrittenStackBytes) return format::perf::kMaxStackSize / 8 * 8;
  const double capped =
      std::min(bytes, static_cast<double>(format::perf::kMaxStackSize));
  return static_cast<uint32_t>(capped) / 8 * 8;
}

std::string call_graph_text(const SamplerOptions& options) {
  return options.call_graph == CallGraphMode::kDwarf
             ? "dwarf," + std::to_string(options.stack_size)
             : "fp";
}

std::string fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.*f", decimals, value);
  return text;
}

std::string kib(uint64_t bytes) { return std::to_string(bytes >> 10) + " KiB"; }

std::string limit_text(const MachineLimits& limits) {
  std::string rlimit = limits.memlock_bytes == kUnlimited
                           ? "unlimited"
                           : kib(limits.memlock_bytes);
  return "kernel.perf_event_mlock_kb " +
         std::to_string(limits.perf_event_mlock_kb) + " per CPU, ulimit -l " +
         rlimit;
}

std::string drain_warning(const CapacityEstimate& e,
                          const SamplerOptions& options) {
  std::ostringstream out;
  out << "sampling " << e.cpus << " CPUs at " << options.frequency
      << " Hz with " << call_graph_text(options) << " is up to "
      << e.samples_per_second << " samples/s of about "
      << fixed(static_cast<double>(e.bytes_per_sample) / 1024.0, 1)
      << " KiB when every CPU is busy: the drain would need about "
      << fixed(e.drain_core_share * 100.0, 0) << "% of one core ("
      << fixed(e.drain_us_per_sample, 1)
      << " us per sample, estimated), more than "
      << fixed(kMaxDrainCoreShare * 100.0, 0)
      << "%, and samples may be lost; lower --freq (at most about "
      << e.max_frequency << " Hz here)";
  if (options.call_graph == CallGraphMode::kDwarf) {
    const double fp_share =
        drain_ns(0) * static_cast<double>(e.samples_per_second) / 1e9;
    if (e.max_stack_size >= kMinUsefulStack)
      out << " or the stack copy (--call-graph dwarf," << e.max_stack_size
          << " at this frequency)";
    else if (fp_share <= kMaxDrainCoreShare)
      out << " or use --call-graph fp";
  }
  return out.str();
}

std::string buffer_warning(const CapacityEstimate& e,
                           const SamplerOptions& options,
                           const MachineLimits& limits) {
  const uint64_t needed_kb =
      (e.wanted_buffer_bytes + limits.page_size + 1023) / 1024;
  const std::string raise =
      "raise the limit (sudo sysctl -w kernel.perf_event_mlock_kb=" +
      std::to_string(needed_kb) + ", ulimit -l, or run as root)";
  if (e.buffers_fail)
    return "the locked-memory limit (" + limit_text(limits) +
           ") does not allow even a " +
           kib(std::min(e.wanted_buffer_bytes, kMinMmapSize)) +
           " ring buffer on each of " + std::to_string(e.cpus) +
           " CPUs: sampling will fail; " + raise;
  return "the locked-memory limit (" + limit_text(limits) +
         ") shrinks the ring buffers to " + kib(e.buffer_bytes) +
         " per CPU from the " + kib(e.wanted_buffer_bytes) +
         " wanted: they hold " + fixed(e.buffer_ms, 0) + " ms of samples at " +
         std::to_string(options.frequency) + " Hz with " +
         call_graph_text(options) + " (" + std::to_string(kDefaultBufferMs) +
         " ms wanted), and a busy moment may lose samples; lower --freq or "
         "--call-graph dwarf,SIZE, or " +
         raise;
}

}  // namespace

CapacityEstimate estimate_capacity(const SamplerOptions& options,
                                   const MachineLimits& limits) {
  CapacityEstimate e;
  e.cpus = std::max<uint32_t>(limits.cpus, 1);
  const uint32_t frequency = std::max<uint32_t>(options.frequency, 1);
  e.samples_per_second = uint64_t{e.cpus} * frequency;
  e.bytes_per_sample = sample_record_bytes(options);
  const double ns = drain_ns(copied_stack(options));
  e.drain_us_per_sample = ns / 1000.0;
  e.drain_core_share = static_cast<double>(e.samples_per_second) * ns / 1e9;
  e.drain_too_slow = e.drain_core_share > kMaxDrainCoreShare;
  const double max_frequency =
      kMaxDrainCoreShare * 1e9 / (static_cast<double>(e.cpus) * ns);
  e.max_frequency = static_cast<uint32_t>(
      std::min(max_frequency,
               static_cast<double>(std::numeric_limits<uint32_t>::max())));
  e.max_stack_size = options.call_graph == CallGraphMode::kDwarf
                         ? max_stack_for(frequency, e.cpus)
                         : 0;

  e.wanted_buffer_bytes =
      options.mmap_size != 0 ? options.mmap_size : default_mmap_size(options);
  e.lock_limit_bytes = lock_limit(limits);
  e.buffer_bytes =
      mapped_buffer(e.wanted_buffer_bytes, e.lock_limit_bytes, limits);
  const double bytes_per_second =
      static_cast<double>(frequency) * static_cast<double>(e.bytes_per_sample);
  e.buffer_ms = static_cast<double>(e.buffer_bytes) * 1000.0 / bytes_per_second;
  e.buffers_fail = e.buffer_bytes == 0;
  e.buffers_limited =
      e.buffers_fail || (e.buffer_bytes < e.wanted_buffer_bytes &&
                         e.buffer_ms < static_cast<double>(kDefaultBufferMs));
  return e;
}

std::vector<std::string> capacity_warnings(const CapacityEstimate& estimate,
                                           const SamplerOptions& options,
                                           const MachineLimits& limits) {
  std::vector<std::string> warnings;
  if (estimate.drain_too_slow)
    warnings.push_back(drain_warning(estimate, options));
  if (estimate.buffers_limited)
    warnings.push_back(buffer_warning(estimate, options, limits));
  return warnings;
}

std::string format_capacity(const CapacityEstimate& e,
                            const SamplerOptions& options,
                            const MachineLimits& limits) {
  std::ostringstream out;
  out << "Capacity at " << options.frequency << " Hz with "
      << call_graph_text(options) << " on " << e.cpus
      << " CPUs (every CPU busy):\n  up to " << e.samples_per_second
      << " samples/s of about " << e.bytes_per_sample << " bytes ("
      << fixed(static_cast<double>(e.samples_per_second) *
                   static_cast<double>(e.bytes_per_sample) / (1 << 20),
               1)
      << " MiB/s)\n  drain: about " << fixed(e.drain_core_share * 100.0, 1)
      << "% of one core (" << fixed(e.drain_us_per_sample, 1)
      << " us per sample, estimated); up to about " << e.max_frequency
      << " Hz at this stack size within "
      << fixed(kMaxDrainCoreShare * 100.0, 0)
      << "% of a core\n  ring buffers: " << kib(e.buffer_bytes) << " per CPU, "
      << fixed(e.buffer_ms, 0) << " ms of samples (locked-memory limit: "
      << (e.lock_limit_bytes == kUnlimited
              ? std::string("none")
              : kib(e.lock_limit_bytes) + " for all CPUs")
      << ")\n";
  auto warnings = capacity_warnings(e, options, limits);
  if (warnings.empty()) out << "This request fits this machine.\n";
  for (const auto& warning : warnings) out << "Warning: " << warning << "\n";
  return out.str();
}

MachineLimits machine_limits() {
  MachineLimits limits;
  auto cpus = online_cpus();
  if (cpus && !cpus->empty()) limits.cpus = static_cast<uint32_t>(cpus->size());
  const long page = ::sysconf(_SC_PAGESIZE);
  if (page > 0) limits.page_size = static_cast<uint64_t>(page);
  if (auto text = base::read_file("/proc/sys/kernel/perf_event_mlock_kb"))
    limits.perf_event_mlock_kb = std::strtoull(text->c_str(), nullptr, 10);
  int paranoid = 2;
  if (auto text = base::read_file("/proc/sys/kernel/perf_event_paranoid"))
    paranoid = static_cast<int>(std::strtol(text->c_str(), nullptr, 10));
  rlimit limit{};
  if (::getrlimit(RLIMIT_MEMLOCK, &limit) == 0)
    limits.memlock_bytes =
        limit.rlim_cur == RLIM_INFINITY ? kUnlimited : limit.rlim_cur;
  limits.lock_unlimited = ::geteuid() == 0 || paranoid < 0;
  return limits;
}

}  // namespace runner::profiler
