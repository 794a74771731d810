#include "profiler/event_attrs.hpp"

#include <time.h>

#include <algorithm>

#include "format/format.hpp"

namespace runner::profiler {

namespace {

// MMAP/MMAP2 (non-executable mappings too: perf's unwinder reads
// .eh_frame_hdr through the read-only segment that holds it, and needs its
// MMAP2 to find it), COMM with exec, FORK/EXIT.
void request_side_band(perf_event_attr& attr) {
  attr.mmap = 1;
  attr.mmap2 = 1;
  attr.mmap_data = 1;
  attr.comm = 1;
  attr.comm_exec = 1;
  attr.task = 1;
}

}  // namespace

EventChoice cycles_event() {
  return {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "cycles"};
}
EventChoice cpu_clock_event() {
  return {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, "cpu-clock"};
}
EventChoice task_clock_event() {
  return {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, "task-clock"};
}

uint64_t wakeup_bytes(const SamplerOptions& options, uint64_t mmap_size) {
  const uint64_t record = sample_record_bytes(options);
  const uint64_t samples = std::clamp<uint64_t>(
      uint64_t{options.frequency} * kWakeupMs / 1000, 1, kWakeupSamples);
  const uint64_t wanted = std::max(kWakeupBytes, samples * record);
  return std::min(mmap_size / 2, wanted);
}

perf_event_attr sampling_attr(const SamplerOptions& options,
                              const EventChoice& event, uint64_t mmap_size) {
  perf_event_attr attr{};
  attr.size = format::perf::kAttrSize;
  attr.type = event.type;
  attr.config = event.config;
  attr.freq = 1;
  attr.sample_freq = options.frequency;
  attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                     PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
                     PERF_SAMPLE_CALLCHAIN;
  if (options.call_graph == CallGraphMode::kDwarf) {
    attr.sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
    attr.sample_regs_user = format::perf::kX86_64DwarfRegsMask;
    attr.sample_stack_user = options.stack_size;
    // The user part of the stack is unwound from the copy; a frame-pointer
    // user callchain would only cost bytes (perf does the same).
    attr.exclude_callchain_user = 1;
  }
  attr.disabled = 1;
  attr.inherit = 1;
  attr.exclude_kernel = options.user_only ? 1 : 0;
  attr.exclude_hv = options.user_only ? 1 : 0;
  attr.exclude_callchain_kernel = options.user_only ? 1 : 0;
  attr.use_clockid = 1;
  attr.clockid = CLOCK_MONOTONIC;
  attr.sample_id_all = 1;
  // Wake the drain every wakeup_bytes() (inside windows that is its only
  // wake-up). Each pass has a fixed cost (reading every buffer's head, the
  // blanker's lookups, a FINISHED_ROUND and a write call): at 256 KiB, a
  // pass every 8 samples of dwarf,32768, it was most of the drain's CPU;
  // at 300 samples a pass the drain costs about 2 us per sample at
  // dwarf,8192 and dwarf,32768 alike, against 5.8-8 (bench/perf, scale
  // part). A busy CPU still gets a pass every kWakeupMs or so, while the
  // processes it sampled are alive: the blanker learns a process's initial
  // stack area from /proc, and a process gone before its first pass has its
  // samples written without their stacks. The rest of the buffer absorbs
  // the drain's wake-up latency.
  attr.watermark = 1;
  attr.wakeup_watermark =
      static_cast<uint32_t>(wakeup_bytes(options, mmap_size));
  if (!options.tracking_event) {
    // Without the side-band event the sampling event reports mappings and
    // tasks itself (only while enabled), like a plain `perf record`.
    request_side_band(attr);
  }
  return attr;
}

// Always enabled from the child's exec on (enable_on_exec), so MMAP2, COMM,
// FORK and EXIT records arrive even while sampling is disabled. A dummy
// event never overflows, so it produces no samples.
perf_event_attr tracking_attr(const SamplerOptions& options) {
  perf_event_attr attr{};
  attr.size = format::perf::kAttrSize;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_DUMMY;
  attr.sample_period = 1;
  // Same id/is position as the sampling event (IDENTIFIER first in samples,
  // last in sample_id) so perf can tell the two events apart.
  attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                     PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
  attr.disabled = 1;
  attr.enable_on_exec = 1;
  attr.inherit = 1;
  attr.exclude_kernel = options.user_only ? 1 : 0;
  attr.exclude_hv = options.user_only ? 1 : 0;
  request_side_band(attr);
  attr.use_clockid = 1;
  attr.clockid = CLOCK_MONOTONIC;
  attr.sample_id_all = 1;
  return attr;
}

}  // namespace runner::profiler
