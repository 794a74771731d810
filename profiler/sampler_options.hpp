// The options of one sampling run: which event, how often, which call
// graph, how large the buffers. Plain data, filled by the agent from the
// command line and read by the Sampler and by sampling_attr(); in a header of
// its own so that the lower files (event_attrs) need not include the Sampler.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/base.hpp"

namespace runner::profiler {

enum class CallGraphMode { kDwarf, kFramePointer };
// kAuto: cycles where the machine has a hardware PMU, else cpu-clock.
enum class SamplingEvent { kAuto, kCycles, kCpuClock, kTaskClock };

struct SamplerOptions {
  uint32_t frequency = 997;
  CallGraphMode call_graph = CallGraphMode::kDwarf;
  uint32_t stack_size = 8192;  // dwarf copy size, 8-byte aligned, max 65528
  uint64_t mmap_size = 0;  // data bytes per CPU buffer; 0 = default_mmap_size
  bool tracking_event = true;  // the always-on dummy side-band event
  bool user_only = true;       // exclude_kernel (+ exclude_hv)
  SamplingEvent event = SamplingEvent::kAuto;
  // zstd level of perf.pipedata's kernel records (perf record -z), 1..19;
  // 0 writes them uncompressed.
  int compress_level = 0;
  // Threads that drain the ring buffers, each a group of CPUs (perf record
  // --threads); 0: drain_threads_for() picks from the sampling rate.
  uint32_t drain_threads = 0;
  // What perf.pipedata's HEADER_CMDLINE says (what `perf report --header`
  // shows as the cmdline): the runner's own name and subcommand, never the
  // benchmark's arguments. Empty: "runner".
  std::vector<std::string> cmdline;
};

// A sample's record in a ring buffer: its stack copy (DWARF mode) plus
// kSampleOverheadBytes of header, ids, time and registers, or for a
// frame-pointer sample the whole record with its call chain.
inline constexpr uint64_t kSampleOverheadBytes = 512;
inline uint64_t sample_record_bytes(const SamplerOptions& options) {
  const uint64_t stack =
      options.call_graph == CallGraphMode::kDwarf ? options.stack_size : 0;
  return stack + kSampleOverheadBytes;
}

// The default buffer holds about this long of samples per CPU at the chosen
// frequency and stack size, rounded to a power of two (4 MiB for 997 Hz x
// dwarf,8192, 16 MiB for dwarf,32768, 256 KiB for fp), within
// [kMinMmapSize, kMaxDefaultMmapSize]. Larger buffers cost cache and memory
// without helping: the drain thread empties them every 256 KiB.
inline constexpr uint64_t kDefaultBufferMs = 500;
inline constexpr uint64_t kMaxDefaultMmapSize = 64ULL << 20;
uint64_t default_mmap_size(const SamplerOptions& options);
// mmap_size is halved down to this on EPERM (mlock limits), unless the
// requested size was already smaller.
inline constexpr uint64_t kMinMmapSize = 64ULL << 10;

// How many threads drain `nr_cpus` buffers: options.drain_threads when
// given (at most nr_cpus), else one per kSamplesPerDrainThread samples a
// second that every CPU busy would give at the chosen frequency, at most
// one per two CPUs. One thread holds that rate with room to spare (about
// 1-2 us per sample for typical stacks, bench/perf's scale part); more
// threads take each group's records out of its ring buffers at once
// (docs/performance.md, "Capture at scale").
inline constexpr uint64_t kSamplesPerDrainThread = 64000;
inline constexpr uint32_t kMaxDrainThreads = 64;
uint32_t drain_threads_for(const SamplerOptions& options, size_t nr_cpus);

// Clear errors for bad sizes (stack_size 0 / unaligned / > 65528, frequency
// 0, mmap_size not a power-of-two number of pages, compress_level not 0 or
// 1..19, drain_threads above kMaxDrainThreads).
base::Status validate_options(const SamplerOptions& options);

}  // namespace runner::profiler
