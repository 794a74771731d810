// Sampler: samples a process tree with perf_event_open and writes
// perf.pipedata. Flow: Sampler::create(pid) opens one sampling event and one
// tracking (dummy side-band) event per online CPU on the suspended child,
// mmaps one ring buffer per CPU shared by both, writes the pipe header,
// attrs and features, and starts the drain: threads that write the kernel's
// records into the file, the samples' stack copies cut to the program's
// stack, below the initial stack area where argv and the environment lie
// (stack_blanker.hpp). enable()/disable() bracket the measured windows;
// finish() drains the rest and closes the file. The Sampler owns the fds,
// mappings, output file and threads.
//
// The drain works in passes, each followed by a FINISHED_ROUND: the first
// thread waits for any buffer's watermark, takes every buffer's head, and
// reads what the blanker must know; then each drain thread takes the
// records of its group of CPUs out of their buffers at once, the first
// writing its own straight from the buffers and the others copying theirs
// aside, which the first writes after its own, in the groups' order. So the
// file is one stream, ordered within rounds as perf's own, and the memory
// aside is bounded by the buffers.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/base.hpp"
#include "format/format.hpp"
#include "profiler/sampler_options.hpp"
#include "profiler/stack_blanker.hpp"

namespace runner::profiler {

// What one CPU's buffer gave.
struct CpuSamples {
  int cpu = 0;
  uint64_t samples = 0, lost_samples = 0;
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
  uint64_t drain_cpu_ns = 0;   // CPU time of the drain threads (at finish)
  int drain_nice = 0;  // their nice value (-10 where it could be raised)
  uint32_t drain_threads = 0;
  std::vector<CpuSamples> per_cpu;  // in the order of the buffers
  // --compress: its zstd level (0: off), the kernel record bytes that went
  // into the stream and the COMPRESSED record bytes that came out.
  int compress_level = 0;
  uint64_t uncompressed_bytes = 0, compressed_bytes = 0;
  // DWARF mode: what was blanked of the stack copies (nothing of the
  // initial stack area, where argv and the environment lie, is written).
  BlankingStats blanking;
};

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
  // After finish(): the side-band records written (SideBandLog), for the
  // mapping replay; once (the log is empty afterwards). Incomplete when the
  // output's writing failed or the log passed its memory cap.
  format::perf::SideBandRecords take_side_band();
  const std::string& event_name() const;

  struct Impl;

 private:
  explicit Sampler(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace runner::profiler
