// RingBuffer: the mmapped perf ring buffer of one event fd (one metadata page
// followed by a power-of-two data area). The drain thread is its only reader;
// the kernel writes. It owns the mapping.
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <cstring>
#include <span>

#include "base/base.hpp"

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

  // The bytes of one record, in one piece or two when it wraps the end of
  // the buffer.
  struct RecordBytes {
    std::span<const uint8_t> first, second;
    size_t size() const { return first.size() + second.size(); }
    // Copies `n` bytes at `offset` into `out`; false when out of range.
    bool read(size_t offset, void* out, size_t n) const;
  };

  // Zero-copy drain: calls on_record(const perf_event_header&, RecordBytes)
  // for every complete record between data_tail and data_head, then
  // on_data(first, second) once with the whole run of those records as it
  // lies in the mapping (second is non-empty when the run wraps), and only
  // then gives the space back to the kernel. Returns the number of records.
  template <typename OnRecord, typename OnData>
  uint64_t drain(OnRecord&& on_record, OnData&& on_data);

 private:
  uint64_t load_head() const;
  void store_tail(uint64_t tail);

  base::MappedRegion region_;
  perf_event_mmap_page* meta_ = nullptr;
  const uint8_t* data_ = nullptr;
  uint64_t data_size_ = 0;
  uint64_t bad_records_ = 0;
};

inline bool RingBuffer::RecordBytes::read(size_t offset, void* out,
                                          size_t n) const {
  if (offset + n > size()) return false;
  auto* dst = static_cast<uint8_t*>(out);
  for (size_t i = 0; i < n; ++i) {
    const size_t at = offset + i;
    dst[i] = at < first.size() ? first[at] : second[at - first.size()];
  }
  return true;
}

template <typename OnRecord, typename OnData>
uint64_t RingBuffer::drain(OnRecord&& on_record, OnData&& on_data) {
  if (meta_ == nullptr) return 0;
  const uint64_t head = load_head();
  const uint64_t start = meta_->data_tail;  // only we write it
  const uint64_t mask = data_size_ - 1;
  uint64_t tail = start;
  uint64_t count = 0;
  auto bytes_at = [&](uint64_t position, uint64_t size) {
    const uint64_t offset = position & mask;
    RecordBytes bytes;
    if (offset + size <= data_size_) {
      bytes.first = {data_ + offset, size};
    } else {
      const uint64_t first = data_size_ - offset;
      bytes.first = {data_ + offset, first};
      bytes.second = {data_, size - first};
    }
    return bytes;
  };
  while (tail < head) {
    const uint64_t available = head - tail;
    perf_event_header header;
    if (available < sizeof(header)) {
      ++bad_records_;
      break;
    }
    bytes_at(tail, sizeof(header)).read(0, &header, sizeof(header));
    if (header.size < sizeof(header) || header.size > available) {
      ++bad_records_;
      break;
    }
    on_record(static_cast<const perf_event_header&>(header),
              bytes_at(tail, header.size));
    tail += header.size;
    ++count;
  }
  if (tail > start) {
    RecordBytes run = bytes_at(start, tail - start);
    on_data(run.first, run.second);
  }
  // On a bad header everything up to head is dropped, so that the reader
  // resynchronises instead of stalling the kernel forever.
  store_tail(head);
  return count;
}

}  // namespace runner::profiler
