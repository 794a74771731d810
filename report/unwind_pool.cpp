#include "report/unwind_pool.hpp"

#include <utility>

namespace runner::report {

void UnwindBatch::clear() {
  items.clear();
  job_count = 0;
  samples_read = outside_windows = filtered_pids = 0;
  read_error.clear();
  done = false;
}

void unwind_jobs(Unwinder& unwinder, UnwindBatch& batch) {
  for (size_t i = 0; i < batch.job_count; ++i) {
    UnwindJob& job = batch.jobs[i];
    job.result = unwinder.unwind(job.sample, job.stack);
    job.owner.reset();  // the reader's window may be unmapped now
  }
}

UnwindPool::UnwindPool(ProfileFolder& folder, unsigned workers) {
  for (unsigned i = 0; i < workers; ++i)
    unwinders_.push_back(std::make_unique<Unwinder>(folder));
  for (unsigned i = 0; i < workers; ++i)
    threads_.emplace_back([this, i] { work(*unwinders_[i]); });
}

UnwindPool::~UnwindPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void UnwindPool::work(Unwinder& unwinder) {
  while (true) {
    UnwindBatch* batch = nullptr;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      work_ready_.wait(lock, [this] {
        return stopping_ || next_to_unwind_ < in_order_.size();
      });
      if (next_to_unwind_ >= in_order_.size()) return;  // stopping, all done
      batch = in_order_[next_to_unwind_++].get();
    }
    // The batch stays in in_order_ until it is done: the pointer is stable.
    unwind_jobs(unwinder, *batch);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      batch->done = true;
    }
    batch_done_.notify_all();
  }
}

std::unique_ptr<UnwindBatch> UnwindPool::make_batch() {
  std::unique_ptr<UnwindBatch> batch;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!spare_.empty()) {
      batch = std::move(spare_.back());
      spare_.pop_back();
    }
  }
  if (!batch) batch = std::make_unique<UnwindBatch>();
  batch->clear();
  return batch;
}

void UnwindPool::submit(std::unique_ptr<UnwindBatch> batch) {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    room_.wait(lock, [this] { return in_order_.size() < kMaxInFlight; });
    in_order_.push_back(std::move(batch));
  }
  work_ready_.notify_one();
}

void UnwindPool::close() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
  }
  batch_done_.notify_all();
}

std::unique_ptr<UnwindBatch> UnwindPool::take() {
  std::unique_lock<std::mutex> lock(mutex_);
  batch_done_.wait(lock, [this] {
    return (!in_order_.empty() && in_order_.front()->done) ||
           (closed_ && in_order_.empty());
  });
  if (in_order_.empty()) return nullptr;
  std::unique_ptr<UnwindBatch> batch = std::move(in_order_.front());
  in_order_.pop_front();
  --next_to_unwind_;  // the front was taken by a worker: the index was >= 1
  lock.unlock();
  room_.notify_one();
  return batch;
}

void UnwindPool::recycle(std::unique_ptr<UnwindBatch> batch) {
  std::lock_guard<std::mutex> lock(mutex_);
  spare_.push_back(std::move(batch));
}

}  // namespace runner::report
