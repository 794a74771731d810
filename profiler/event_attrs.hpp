// The perf_event_attr of the sampler's two events (the sampling event and
// the always-on tracking event), built in one place so that `runner doctor`
// probes exactly what a run opens.
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <string>

#include "profiler/sampler_options.hpp"

namespace runner::profiler {

// The drain is woken when a buffer holds wakeup_bytes(): kWakeupMs of a
// busy CPU's samples, at most kWakeupSamples of them (each pass has a fixed
// cost, and a sample's record in the buffer is its whole stack copy,
// although only the program's stack is written), at least kWakeupBytes,
// at most half the buffer.
inline constexpr uint64_t kWakeupBytes = 256 << 10;
inline constexpr uint64_t kWakeupMs = 30;
inline constexpr uint64_t kWakeupSamples = 1024;
uint64_t wakeup_bytes(const SamplerOptions& options, uint64_t mmap_size);

struct EventChoice {
  uint32_t type = 0;
  uint64_t config = 0;
  std::string name;
};

EventChoice cycles_event();
EventChoice cpu_clock_event();
EventChoice task_clock_event();

// Starts disabled, inherited, user space only unless options.user_only is
// false, CLOCK_MONOTONIC, sample_id_all; DWARF (regs + stack copy) or
// frame-pointer call chains; wakes the reader every kWakeupBytes (at most
// half of `mmap_size`).
perf_event_attr sampling_attr(const SamplerOptions& options,
                              const EventChoice& event, uint64_t mmap_size);
// Software dummy with mmap/mmap2/comm/comm_exec/task, enabled on exec.
perf_event_attr tracking_attr(const SamplerOptions& options);

}  // namespace runner::profiler
