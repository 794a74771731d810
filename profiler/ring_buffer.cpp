#include "profiler/ring_buffer.hpp"

#include <sys/mman.h>
#include <unistd.h>

namespace runner::profiler {

base::Result<RingBuffer> RingBuffer::map(int fd, uint64_t data_size) {
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  if (data_size < page || (data_size & (data_size - 1)) != 0 ||
      data_size % page != 0) {
    return base::Error("ring buffer size " + std::to_string(data_size) +
                           " is not a power-of-two number of pages",
                       EINVAL);
  }
  RUNNER_ASSIGN_OR_RETURN(
      base::MappedRegion region,
      base::MappedRegion::map(fd, page + data_size, PROT_READ | PROT_WRITE,
                              MAP_SHARED),
      "mmap perf ring buffer of " + std::to_string(data_size) + " bytes");
  RingBuffer ring;
  ring.meta_ = static_cast<perf_event_mmap_page*>(region.data());
  ring.data_ = static_cast<const uint8_t*>(region.data()) + page;
  ring.data_size_ = data_size;
  ring.region_ = std::move(region);
  return ring;
}

// The kernel publishes records before it advances data_head: the acquire load
// pairs with its store so the record bytes we read are complete.
uint64_t RingBuffer::head() const {
  return meta_ == nullptr
             ? 0
             : __atomic_load_n(&meta_->data_head, __ATOMIC_ACQUIRE);
}

uint64_t RingBuffer::tail() const {
  return meta_ == nullptr ? 0 : meta_->data_tail;  // only we write it
}

void RingBuffer::release(uint64_t stopped, uint64_t to) {
  if (meta_ == nullptr) return;
  if (stopped < to) ++bad_records_;
  store_tail(to);
}

// The release store orders our reads of the records before the kernel may
// overwrite them (it reads data_tail before writing new records).
void RingBuffer::store_tail(uint64_t tail) {
  __atomic_store_n(&meta_->data_tail, tail, __ATOMIC_RELEASE);
}

}  // namespace runner::profiler
