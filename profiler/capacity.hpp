// capacity: whether this machine can hold a sampling request, before the
// run. A model of the drain's CPU per sample and of the locked memory the
// ring buffers need; the run warns (and `runner doctor` says) when the
// requested rate needs more than kMaxDrainCoreShare of one core with every
// CPU busy, or when the locked-memory limit makes the sampler shrink its
// buffers below kDefaultBufferMs of samples, with what to lower.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "profiler/sampler_options.hpp"

namespace runner::profiler {

// The drain's CPU per sample: a fixed part for every sample (reading the
// ring buffer, counting, its share of a write call), one more for a dwarf
// sample (what its large record costs besides the bytes: the line through
// the dwarf figures does not pass through the frame-pointer one), and a part
// per KiB of stack copy written (the copy into the page cache). Copies are
// written cut to the program's stack (stack_blanker.hpp), which cannot be
// known before the run: the model charges the size asked for up to
// kWrittenStackBytes (bench/overhead's threads write 2.2 KiB a sample, a
// shallow main thread 0.35 KiB; deep interpreter stacks more).
// Measured with `make bench-perf BENCH_PERF_ARGS=--parts=scale`
// (bench/perf/scale.py, runner exec's drain_cpu_us / samples) on 2 x86-64
// CPUs without a PMU (cpu-clock), at 10 kHz with 1 and 2 CPUs busy, on a
// machine shared with builds: 0.09-0.12 us per frame-pointer sample, and
// 1.8-2.2 us per dwarf sample at dwarf,8192 and dwarf,32768 alike (2.2 KiB
// of stack written a sample). The line 1.0 us + 0.4 us per KiB written
// passes through those figures; charged up to kWrittenStackBytes it gives
// 2.6 us. An estimate for the warning, not a promise: other machines drain
// faster or slower, and bench/perf says what one does.
inline constexpr double kDrainNsPerSample = 100.0;
inline constexpr double kDrainNsPerDwarfSample = 900.0;
inline constexpr double kDrainNsPerStackKiB = 400.0;
inline constexpr uint32_t kWrittenStackBytes = 4096;
// More than this share of one core for the drain, with every CPU busy, is
// warned about: the drain shares the machine with the benchmark, and beyond
// it the buffers fill faster than they are emptied.
inline constexpr double kMaxDrainCoreShare = 0.5;

// What the machine allows, as the kernel accounts it for perf ring buffers
// (kernel/events/core.c: each buffer costs its pages + 1; a user may lock
// perf_event_mlock_kb per online CPU, and beyond that RLIMIT_MEMLOCK;
// root, CAP_IPC_LOCK or perf_event_paranoid -1 lift the limit).
struct MachineLimits {
  uint32_t cpus = 1;  // online CPUs: one ring buffer each
  uint64_t page_size = 4096;
  uint64_t perf_event_mlock_kb = 516;
  uint64_t memlock_bytes = 0;   // RLIMIT_MEMLOCK soft; UINT64_MAX: unlimited
  bool lock_unlimited = false;  // root or perf_event_paranoid -1
};

struct CapacityEstimate {
  uint32_t cpus = 0;
  uint64_t samples_per_second = 0;  // every CPU busy at the frequency
  uint64_t bytes_per_sample = 0;    // stack copy + kSampleOverheadBytes
  double drain_us_per_sample = 0;
  double drain_core_share = 0;  // of one core (1.0 = a whole core)
  // Per CPU: what the request wants (--mmap-size, else default_mmap_size)
  // and what the sampler will map once the locked-memory limit is applied
  // (halved as the sampler does; 0 when even the smallest does not fit).
  uint64_t wanted_buffer_bytes = 0;
  uint64_t buffer_bytes = 0;
  uint64_t lock_limit_bytes = 0;  // UINT64_MAX: no limit
  double buffer_ms = 0;           // how long one CPU's buffer holds at the rate
  // The largest frequency the drain holds within kMaxDrainCoreShare at this
  // stack size, and the largest dwarf stack size at this frequency (0:
  // none, use fp).
  uint32_t max_frequency = 0;
  uint32_t max_stack_size = 0;
  bool drain_too_slow = false;
  bool buffers_limited = false;  // shrunk below kDefaultBufferMs of samples
  bool buffers_fail = false;     // not even the smallest buffer fits
};

// The pure model: `options` (frequency, call graph, stack size, mmap_size)
// on a machine with `limits`.
CapacityEstimate estimate_capacity(const SamplerOptions& options,
                                   const MachineLimits& limits);

// One line per problem, each saying what to lower or raise; empty when the
// request fits.
std::vector<std::string> capacity_warnings(const CapacityEstimate& estimate,
                                           const SamplerOptions& options,
                                           const MachineLimits& limits);

// `runner doctor`'s paragraph: the estimate for `options`, then the
// warnings (or that it fits).
std::string format_capacity(const CapacityEstimate& estimate,
                            const SamplerOptions& options,
                            const MachineLimits& limits);

// This machine's limits: online CPUs, page size, perf_event_mlock_kb,
// RLIMIT_MEMLOCK, root or perf_event_paranoid -1.
MachineLimits machine_limits();

}  // namespace runner::profiler
