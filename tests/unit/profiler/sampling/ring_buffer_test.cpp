// RingBuffer on a memfd laid out like a perf mmap (metadata page + data), so
// wrap-around and malformed headers can be produced at will.
#include "profiler/ring_buffer.hpp"

#include <linux/perf_event.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include <doctest/doctest.h>

#include "base/mapped_region.hpp"
#include "base/unique_fd.hpp"

namespace runner::profiler {
namespace {

struct FakeKernel {
  uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  uint64_t data_size = 0;
  base::UniqueFd fd;
  base::MappedRegion region;
  uint64_t head = 0;

  explicit FakeKernel(uint64_t size) : data_size(size) {
    fd.reset(::memfd_create("ring", MFD_CLOEXEC));
    REQUIRE(fd.valid());
    REQUIRE(::ftruncate(fd.get(), static_cast<off_t>(page + data_size)) == 0);
    auto mapped = base::MappedRegion::map(fd.get(), page + data_size,
                                          PROT_READ | PROT_WRITE, MAP_SHARED);
    REQUIRE(mapped);
    region = std::move(*mapped);
  }
  perf_event_mmap_page* meta() {
    return static_cast<perf_event_mmap_page*>(region.data());
  }
  uint8_t* data() { return static_cast<uint8_t*>(region.data()) + page; }
  // Writes a record of `size` bytes (type, filler byte) at head, wrapping.
  void push(uint32_t type, uint16_t size, uint8_t fill) {
    std::vector<uint8_t> bytes(std::max<size_t>(size, 8), fill);
    perf_event_header header{type, 0, size};
    std::memcpy(bytes.data(), &header, sizeof(header));
    // At least the 8 header bytes land in the buffer; head advances by
    // max(size, 8) so that an undersized header is fully published.
    for (size_t i = 0; i < bytes.size(); ++i)
      data()[(head + i) & (data_size - 1)] = bytes[i];
    head += bytes.size();
    __atomic_store_n(&meta()->data_head, head, __ATOMIC_RELEASE);
  }
};

}  // namespace

TEST_SUITE("profiler") {
  TEST_CASE("RingBuffer hands records and their run over, also when wrapped") {
    FakeKernel kernel(2 * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE)));
    auto ring = RingBuffer::map(kernel.fd.get(), kernel.data_size);
    REQUIRE(ring);
    const uint64_t size = kernel.data_size;
    uint64_t seen_total = 0;
    // Fill and drain repeatedly with odd sizes so records straddle the end
    // of the buffer, and headers themselves get split.
    for (int round = 0; round < 50; ++round) {
      std::vector<uint16_t> sizes;
      uint64_t used = 0;
      for (uint16_t s = 24 + static_cast<uint16_t>(round * 8);
           used + s <= size / 2; s = static_cast<uint16_t>(s + 40)) {
        kernel.push(PERF_RECORD_SAMPLE, s, static_cast<uint8_t>(s & 0xff));
        sizes.push_back(s);
        used += s;
      }
      size_t index = 0;
      std::vector<uint8_t> from_records, from_run;
      int runs = 0;
      uint64_t drained = ring->drain(
          [&](const perf_event_header& header,
              const RingBuffer::RecordBytes& bytes) {
            REQUIRE(index < sizes.size());
            CHECK(header.size == sizes[index]);
            CHECK(bytes.size() == sizes[index]);
            CHECK(header.type == PERF_RECORD_SAMPLE);
            std::vector<uint8_t> record(bytes.size());
            REQUIRE(bytes.read(0, record.data(), record.size()));
            CHECK_FALSE(bytes.read(1, record.data(), record.size()));
            bool filled = true;
            for (size_t i = sizeof(header); i < record.size(); ++i)
              filled = filled && record[i] == (sizes[index] & 0xff);
            CHECK(filled);
            from_records.insert(from_records.end(), record.begin(),
                                record.end());
            ++index;
          },
          [&](std::span<const uint8_t> first, std::span<const uint8_t> second) {
            ++runs;
            from_run.insert(from_run.end(), first.begin(), first.end());
            from_run.insert(from_run.end(), second.begin(), second.end());
          });
      CHECK(runs == 1);
      // The run handed to the writer is exactly the records, in order.
      CHECK(from_run == from_records);
      CHECK(drained == sizes.size());
      seen_total += drained;
      CHECK(kernel.meta()->data_tail == kernel.head);
    }
    CHECK(seen_total > 100);
    CHECK(kernel.head > 10 * size);  // wrapped many times
    CHECK(ring->bad_records() == 0);
  }

  TEST_CASE("RingBuffer skips an impossible header instead of stalling") {
    FakeKernel kernel(static_cast<uint64_t>(::sysconf(_SC_PAGESIZE)));
    auto ring = RingBuffer::map(kernel.fd.get(), kernel.data_size);
    REQUIRE(ring);
    kernel.push(PERF_RECORD_SAMPLE, 32, 1);
    kernel.push(PERF_RECORD_SAMPLE, 4, 2);  // size < header: impossible
    kernel.push(PERF_RECORD_SAMPLE, 32, 3);
    auto ignore_record = [](const perf_event_header&,
                            const RingBuffer::RecordBytes&) {};
    uint64_t run_bytes = 0;
    auto count_run = [&](std::span<const uint8_t> first,
                         std::span<const uint8_t> second) {
      run_bytes += first.size() + second.size();
    };
    uint64_t drained = ring->drain(ignore_record, count_run);
    CHECK(drained == 1);
    CHECK(run_bytes == 32);  // only the good record reaches the writer
    CHECK(ring->bad_records() == 1);
    CHECK(kernel.meta()->data_tail == kernel.head);
    // A header claiming more bytes than published.
    kernel.push(PERF_RECORD_SAMPLE, 16, 4);
    uint64_t head = kernel.head;
    perf_event_header big{PERF_RECORD_SAMPLE, 0, 64};
    std::memcpy(kernel.data() + (head & (kernel.data_size - 1)), &big,
                sizeof(big));
    kernel.head += 8;
    __atomic_store_n(&kernel.meta()->data_head, kernel.head, __ATOMIC_RELEASE);
    run_bytes = 0;
    drained = ring->drain(ignore_record, count_run);
    CHECK(drained == 1);
    CHECK(run_bytes == 16);
    CHECK(ring->bad_records() == 2);
    // Afterwards the buffer works again.
    kernel.push(PERF_RECORD_MMAP2, 40, 5);
    run_bytes = 0;
    drained = ring->drain(
        [](const perf_event_header& header, const RingBuffer::RecordBytes&) {
          CHECK(header.size == 40);
        },
        count_run);
    CHECK(drained == 1);
    CHECK(run_bytes == 40);
  }

  TEST_CASE("RingBuffer::map rejects sizes that are not power-of-two pages") {
    FakeKernel kernel(static_cast<uint64_t>(::sysconf(_SC_PAGESIZE)));
    CHECK_FALSE(RingBuffer::map(kernel.fd.get(), 3 * kernel.page));
    CHECK_FALSE(RingBuffer::map(kernel.fd.get(), 100));
    CHECK_FALSE(RingBuffer::map(kernel.fd.get(), 0));
  }

}  // TEST_SUITE
}  // namespace runner::profiler
