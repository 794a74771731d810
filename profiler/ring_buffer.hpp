// RingBuffer: the mmapped perf ring buffer of one event fd (one metadata page
// followed by a power-of-two data area). The drain thread is its only reader;
// the kernel writes. It owns the mapping.
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "base/mapped_region.hpp"
#include "base/result.hpp"

namespace runner::profiler {

class RingBuffer {
 public:
  RingBuffer() = default;

  // Maps 1 + data_size / page_size pages of `fd`. data_size must be a power
  // of two multiple of the page size. Fails with the mmap errno (EPERM when
  // perf_event_mlock_kb / RLIMIT_MEMLOCK is exceeded).
  static base::Result<RingBuffer> map(int fd, uint64_t data_size);

  uint64_t data_size() const { return data_size_; }
  // Records whose header is impossible (size < 8 or past data_head); the
  // rest of the buffer is skipped when one is seen.
  uint64_t bad_records() const { return bad_records_; }

  // Calls on_record(std::span<const uint8_t>) for every complete record
  // between data_tail and data_head, then gives the space back to the kernel.
  // A record that wraps the end of the buffer is handed over as one
  // contiguous copy. Returns the number of records.
  template <typename OnRecord>
  uint64_t drain(OnRecord&& on_record);

 private:
  uint64_t load_head() const;
  void store_tail(uint64_t tail);

  base::MappedRegion region_;
  perf_event_mmap_page* meta_ = nullptr;
  const uint8_t* data_ = nullptr;
  uint64_t data_size_ = 0;
  uint64_t bad_records_ = 0;
  std::vector<uint8_t> scratch_;
};

template <typename OnRecord>
uint64_t RingBuffer::drain(OnRecord&& on_record) {
  if (meta_ == nullptr) return 0;
  const uint64_t head = load_head();
  uint64_t tail = meta_->data_tail;  // only we write it
  const uint64_t mask = data_size_ - 1;
  uint64_t count = 0;
  while (tail < head) {
    const uint64_t available = head - tail;
    perf_event_header header;
    const uint64_t offset = tail & mask;
    if (available < sizeof(header)) {
      ++bad_records_;
      break;
    }
    if (offset + sizeof(header) <= data_size_) {
      std::memcpy(&header, data_ + offset, sizeof(header));
    } else {
      const uint64_t first = data_size_ - offset;
      std::memcpy(&header, data_ + offset, first);
      std::memcpy(reinterpret_cast<uint8_t*>(&header) + first, data_,
                  sizeof(header) - first);
    }
    if (header.size < sizeof(header) || header.size > available) {
      ++bad_records_;
      break;
    }
    if (offset + header.size <= data_size_) {
      on_record(std::span<const uint8_t>(data_ + offset, header.size));
    } else {
      const uint64_t first = data_size_ - offset;
      scratch_.resize(header.size);
      std::memcpy(scratch_.data(), data_ + offset, first);
      std::memcpy(scratch_.data() + first, data_, header.size - first);
      on_record(std::span<const uint8_t>(scratch_.data(), header.size));
    }
    tail += header.size;
    ++count;
  }
  // On a bad header everything up to head is dropped, so that the reader
  // resynchronises instead of stalling the kernel forever.
  store_tail(head);
  return count;
}

}  // namespace runner::profiler
