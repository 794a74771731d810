// RingBuffer: the mmapped perf ring buffer of one event fd (one metadata page
// followed by a power-of-two data area). The drain thread is its only reader;
// the kernel writes. It owns the mapping.
#pragma once

#include <linux/perf_event.h>

#include <algorithm>
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

  // Positions are the kernel's: byte counts since the buffer was mapped.
  // head(): where the kernel's published records end; tail(): where ours
  // begin (what was given back).
  uint64_t head() const;
  uint64_t tail() const;
  // Calls on_record(const perf_event_header&, RecordBytes) for every
  // complete record in [from, to), records lying in the mapping (valid
  // until release()). Returns where it stopped: `to`, or the position of an
  // impossible header (size < 8, or past `to`).
  template <typename OnRecord>
  uint64_t walk(uint64_t from, uint64_t to, OnRecord&& on_record) const;
  // Gives [tail, to) back to the kernel. `stopped` is where the walk of it
  // stopped: before `to`, the rest was dropped past an impossible header
  // (counted), so that the reader resynchronises instead of stalling the
  // kernel forever.
  void release(uint64_t stopped, uint64_t to);
  // The `size` bytes at `position`, in one piece or two.
  RecordBytes bytes_at(uint64_t position, uint64_t size) const;

  // Zero-copy drain: calls on_record(const perf_event_header&, RecordBytes)
  // for every complete record between data_tail and data_head, then
  // on_data(first, second) once with the whole run of those records as it
  // lies in the mapping (second is non-empty when the run wraps), and only
  // then gives the space back to the kernel. Returns the number of records.
  template <typename OnRecord, typename OnData>
  uint64_t drain(OnRecord&& on_record, OnData&& on_data);

 private:
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
  size_t done = 0;
  if (offset < first.size()) {
    done = std::min(n, first.size() - offset);
    std::memcpy(dst, first.data() + offset, done);
  }
  if (done < n)
    std::memcpy(dst + done, second.data() + (offset + done - first.size()),
                n - done);
  return true;
}

inline RingBuffer::RecordBytes RingBuffer::bytes_at(uint64_t position,
                                                    uint64_t size) const {
  const uint64_t offset = position & (data_size_ - 1);
  RecordBytes bytes;
  if (offset + size <= data_size_) {
    bytes.first = {data_ + offset, size};
  } else {
    const uint64_t first = data_size_ - offset;
    bytes.first = {data_ + offset, first};
    bytes.second = {data_, size - first};
  }
  return bytes;
}

template <typename OnRecord>
uint64_t RingBuffer::walk(uint64_t from, uint64_t to,
                          OnRecord&& on_record) const {
  if (meta_ == nullptr) return from;
  uint64_t position = from;
  while (position < to) {
    const uint64_t available = to - position;
    perf_event_header header;
    if (available < sizeof(header)) break;
    bytes_at(position, sizeof(header)).read(0, &header, sizeof(header));
    if (header.size < sizeof(header) || header.size > available) break;
    on_record(static_cast<const perf_event_header&>(header),
              bytes_at(position, header.size));
    position += header.size;
  }
  return position;
}

template <typename OnRecord, typename OnData>
uint64_t RingBuffer::drain(OnRecord&& on_record, OnData&& on_data) {
  if (meta_ == nullptr) return 0;
  const uint64_t head_now = head();
  const uint64_t start = tail();
  uint64_t count = 0;
  const uint64_t stopped =
      walk(start, head_now,
           [&](const perf_event_header& header, const RecordBytes& bytes) {
             on_record(header, bytes);
             ++count;
           });
  if (stopped > start) {
    RecordBytes run = bytes_at(start, stopped - start);
    on_data(run.first, run.second);
  }
  release(stopped, head_now);
  return count;
}

}  // namespace runner::profiler
