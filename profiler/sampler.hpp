// Sampler: samples a process tree with perf_event_open and writes
// perf.pipedata. Flow: Sampler::create(pid) opens one sampling event and one
// tracking (dummy side-band) event per online CPU on the suspended child,
// mmaps one ring buffer per CPU shared by both, writes the pipe header,
// attrs and features, and starts a drain thread that copies kernel records
// into the file. enable()/disable() bracket the measured windows; finish()
// drains the rest and closes the file. The Sampler owns the fds, mappings,
// output file and thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>

#include "base/result.hpp"

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
};

struct SamplerStats {
  std::string event_name;  // "cycles" or "cpu-clock" actually used
  uint64_t samples = 0, lost_records = 0, lost_samples = 0, records = 0;
  uint64_t bytes_written = 0, drain_passes = 0;
  uint64_t window_drain_passes = 0;  // passes while sampling was enabled
  uint64_t mmap_size_per_cpu = 0;
  bool mmap_shrunk = false;
  bool write_failed = false;
  std::string write_error;     // e.g. ENOSPC; data after it is dropped
  uint64_t bytes_dropped = 0;  // record bytes not written after a failure
  uint64_t bad_records = 0;    // impossible ring buffer headers
  uint64_t nr_cpus = 0;        // per-CPU buffers
  uint64_t drain_cpu_ns = 0;   // CPU time of the drain thread (at finish)
};

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

// Clear errors for bad sizes (stack_size 0 / unaligned / > 65528, frequency
// 0, mmap_size not a power-of-two number of pages).
base::Status validate_options(const SamplerOptions& options);

class Sampler {
 public:
  // Opens the events on `pid` (a suspended child that has not exec'd yet),
  // mmaps the buffers, writes the pipe header, attrs and features, starts the
  // drain thread.
  static base::Result<std::unique_ptr<Sampler>> create(
      pid_t pid, const SamplerOptions& options, const std::string& output_path);

  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;
  ~Sampler();  // finish() if not done

  base::Status enable();   // PERF_EVENT_IOC_ENABLE on every sampling fd
  base::Status disable();  // PERF_EVENT_IOC_DISABLE
  // Disables, drains the rest, flushes and closes the output, joins the
  // thread. A write failure is reported in the stats, not as an Error.
  base::Result<SamplerStats> finish();
  SamplerStats stats() const;  // snapshot, thread-safe
  const std::string& event_name() const;

  struct Impl;

 private:
  explicit Sampler(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace runner::profiler
