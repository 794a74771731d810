// UnwindPool (report/ internal): the report's stages on threads. A reading
// thread fills batches with what it reads, in file order: the samples to
// unwind (jobs) and the items the later stages need in that order; worker
// threads unwind the batches' jobs, each with its own Unwinder (its own row
// cache; the ProfileFolder is shared, its loaders lock); the main thread
// takes the batches back in the order they were submitted and symbolizes,
// attributes and writes.
//
// A job owns what unwinding needs: the sample's scalars, registers and call
// chain, and its stack copy, either where the reader mapped it (kept alive
// by `owner` until it is unwound) or copied into `stack_copy`. At most
// kMaxInFlight batches are submitted and not taken back: that bounds memory.
// Batches are recycled, their vectors keeping their capacity.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "perfdata/perfdata.hpp"
#include "report/attribution.hpp"
#include "report/profile_folder.hpp"
#include "report/unwinder.hpp"

namespace runner::report {

struct UnwindJob {
  perfdata::SampleRecord sample;  // its `stack` vector is not used
  std::span<const uint8_t> stack;
  std::shared_ptr<const void> owner;  // keeps `stack` mapped, or nullptr
  std::vector<uint8_t> stack_copy;    // holds `stack` when owner is nullptr
  UnwoundStack result;
};

// A COMM or FORK, for the per-sample output's thread names.
struct SideBand {
  uint64_t time = 0;
  uint32_t tid = 0, parent_tid = 0;
  bool is_fork = false;
  std::string comm;
};

// What the stages after unwinding take in file order: a sample (its job is
// the batch's next), a COMM/FORK, a round's end, lost samples.
struct BatchItem {
  enum class Kind : uint8_t { kSample, kSideBand, kRoundEnd, kLost };
  Kind kind = Kind::kSample;
  Attribution::Target target;   // kSample
  SideBand side_band;           // kSideBand
  uint64_t time = 0, lost = 0;  // kLost
};

struct UnwindBatch {
  std::vector<BatchItem> items;
  std::vector<UnwindJob> jobs;
  size_t job_count = 0;  // jobs[0, job_count) are this batch's
  // Samples read, and of them those not unwound (not shown).
  uint64_t samples_read = 0, outside_windows = 0, filtered_pids = 0;
  std::string read_error;  // set on the last batch when the file broke
  bool done = false;
  void clear();
};

class UnwindPool {
 public:
  static constexpr size_t kMaxInFlight = 4;

  // `workers` >= 1 unwinding threads, started at once.
  UnwindPool(ProfileFolder& folder, unsigned workers);
  ~UnwindPool();  // unwinds what was submitted, then joins
  UnwindPool(const UnwindPool&) = delete;
  UnwindPool& operator=(const UnwindPool&) = delete;

  // Producer side. A batch to fill (a recycled one when there is one).
  std::unique_ptr<UnwindBatch> make_batch();
  // Queues a batch; waits while kMaxInFlight are in flight.
  void submit(std::unique_ptr<UnwindBatch> batch);
  // No more batches will come.
  void close();

  // Consumer side. The oldest submitted batch once it is unwound (waits for
  // it), or nullptr when the producer has closed and all were taken.
  std::unique_ptr<UnwindBatch> take();
  // Gives a taken batch back for reuse.
  void recycle(std::unique_ptr<UnwindBatch> batch);

 private:
  void work(Unwinder& unwinder);

  std::mutex mutex_;
  std::condition_variable work_ready_, batch_done_, room_;
  std::deque<std::unique_ptr<UnwindBatch>> in_order_;  // submitted, oldest 1st
  size_t next_to_unwind_ = 0;  // index into in_order_ of the next untaken
  bool closed_ = false, stopping_ = false;
  std::vector<std::unique_ptr<UnwindBatch>> spare_;
  std::vector<std::unique_ptr<Unwinder>> unwinders_;
  std::vector<std::thread> threads_;
};

// Unwinds a batch's jobs (on the calling thread) and lets their stack
// copies go.
void unwind_jobs(Unwinder& unwinder, UnwindBatch& batch);

}  // namespace runner::report
