// StackBlanker and InitialStacks on records built here: which bytes of a
// sample's stack copy are written as zeros, and which initial stack area a
// sample gets when records of several CPUs arrive out of order. /proc is
// replaced by a table (the real thing is exercised by the Sampler and the
// end-to-end tests, which sample real processes).
#include "profiler/stack_blanker.hpp"

#include <linux/perf_event.h>

#include <cstring>
#include <map>
#include <optional>
#include <vector>

#include <doctest/doctest.h>

#include "format/format.hpp"

namespace runner::profiler {
namespace {

using format::ByteWriter;

// The sampler's DWARF attr (event_attrs.cpp), with a 64-byte copy.
perf_event_attr dwarf_attr() {
  perf_event_attr attr{};
  attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                     PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
                     PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER |
                     PERF_SAMPLE_STACK_USER;
  attr.sample_regs_user = format::perf::kX86_64DwarfRegsMask;
  attr.sample_stack_user = 64;
  attr.sample_id_all = 1;
  return attr;
}

constexpr uint64_t kCopySize = 64;
constexpr uint8_t kFill = 0xee;

std::vector<uint8_t> with_header(uint32_t type, uint16_t misc,
                                 const std::vector<uint8_t>& body) {
  ByteWriter w;
  w.u32(type);
  w.u16(misc);
  w.u16(static_cast<uint16_t>(8 + body.size()));
  w.bytes(body);
  return w.take();
}

// A sample of pid/tid at `time` whose copy of kCopySize bytes (all kFill,
// dyn_size of them valid) starts at `sp`.
std::vector<uint8_t> sample(uint32_t pid, uint32_t tid, uint64_t time,
                            uint64_t sp, uint64_t dyn_size = kCopySize) {
  ByteWriter w;
  w.u64(1);         // identifier
  w.u64(0x401000);  // ip
  w.u32(pid);
  w.u32(tid);
  w.u64(time);
  w.u32(0);  // cpu
  w.u32(0);
  w.u64(1000);  // period
  w.u64(0);     // callchain nr
  w.u64(PERF_SAMPLE_REGS_ABI_64);
  for (uint64_t i = 0; i < 20; ++i) w.u64(i == 7 ? sp : 0x1000 + i);
  w.u64(kCopySize);
  for (uint64_t i = 0; i < kCopySize; ++i) w.u8(kFill);
  w.u64(dyn_size);
  return with_header(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, w.take());
}

// Offset of the copy in a sample() record.
constexpr size_t kCopyAt = 8 + 8 * 6 + 8 + 8 + 20 * 8 + 8;

void trailer(ByteWriter& w, uint32_t pid, uint64_t time) {
  w.u32(pid);  // TID
  w.u32(pid);
  w.u64(time);  // TIME
  w.u32(0);     // CPU
  w.u32(0);
  w.u64(2);  // IDENTIFIER
}

std::vector<uint8_t> comm_exec(uint32_t pid, uint64_t time) {
  ByteWriter w;
  w.u32(pid);
  w.u32(pid);
  w.bytes(std::string_view("bench\0\0\0", 8));
  trailer(w, pid, time);
  return with_header(PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, w.take());
}

std::vector<uint8_t> task(uint32_t type, uint32_t pid, uint32_t ppid,
                          uint32_t tid, uint64_t time) {
  ByteWriter w;
  w.u32(pid);
  w.u32(ppid);
  w.u32(tid);
  w.u32(ppid);
  w.u64(time);
  trailer(w, pid, time);
  return with_header(type, 0, w.take());
}

RingBuffer::RecordBytes whole(const std::vector<uint8_t>& record) {
  return {std::span<const uint8_t>(record), {}};
}

perf_event_header header_of(const std::vector<uint8_t>& record) {
  perf_event_header h{};
  std::memcpy(&h, record.data(), sizeof(h));
  return h;
}

std::vector<uint8_t> joined(const RecordPieces& pieces) {
  std::vector<uint8_t> out;
  for (const auto& piece : pieces.pieces())
    out.insert(out.end(), piece.begin(), piece.end());
  return out;
}

// /proc as a table of pid -> start of the area, counting its reads.
struct FakeProc {
  std::map<pid_t, uint64_t> start;
  int reads = 0;
  InitialStacks::Lookup lookup() {
    return [this](pid_t pid, pid_t) -> std::optional<uint64_t> {
      ++reads;
      auto it = start.find(pid);
      if (it == start.end()) return std::nullopt;
      return it->second;
    };
  }
};

// One drain pass over `first` (the records to write, of every CPU) and
// `later` (what arrived during the reads): what is written of each record
// of `first`.
std::vector<std::vector<uint8_t>> pass(
    StackBlanker& blanker, const std::vector<std::vector<uint8_t>>& first,
    const std::vector<std::vector<uint8_t>>& later = {}) {
  uint64_t ring_time = 0;
  blanker.begin_pass();
  for (const auto& r : first)
    blanker.scan(header_of(r), whole(r), true, &ring_time);
  blanker.learn();
  for (const auto& r : later)
    blanker.scan(header_of(r), whole(r), false, &ring_time);
  blanker.resolve();
  std::vector<std::vector<uint8_t>> written;
  for (const auto& r : first) {
    RecordPieces pieces;
    blanker.rewrite(header_of(r), whole(r), pieces);
    written.push_back(joined(pieces));
  }
  return written;
}

// The copy size word of a sample() as written (the copy is cut to it).
uint64_t copy_size_of(const std::vector<uint8_t>& written) {
  uint64_t value = 0;
  std::memcpy(&value, written.data() + kCopyAt - 8, sizeof(value));
  return value;
}

// The copy of a sample() as written (empty when it has none).
std::vector<uint8_t> copy_of(const std::vector<uint8_t>& written) {
  const uint64_t size = copy_size_of(written);
  REQUIRE(kCopyAt + size <= written.size());
  return {written.begin() + kCopyAt, written.begin() + kCopyAt + size};
}

// The dyn_size of a sample() as written (0 without a copy).
uint64_t dyn_size_of(const std::vector<uint8_t>& written) {
  const uint64_t size = copy_size_of(written);
  if (size == 0) return 0;
  uint64_t value = 0;
  std::memcpy(&value, written.data() + kCopyAt + size, sizeof(value));
  return value;
}

// The size the record's header gives, which must be the bytes written.
size_t header_size_of(const std::vector<uint8_t>& written) {
  return header_of(written).size;
}

size_t zeros_from(const std::vector<uint8_t>& copy) {
  size_t first_zero = copy.size();
  while (first_zero > 0 && copy[first_zero - 1] == 0) --first_zero;
  for (size_t i = 0; i < first_zero; ++i)
    if (copy[i] != kFill) return SIZE_MAX;  // a hole: not a clean cut
  return first_zero;
}

// A pass in which `pid`'s area is wanted at `time`, read and resolved.
void learn_in_pass(InitialStacks& stacks, pid_t pid, uint64_t time) {
  stacks.begin_pass();
  stacks.want(pid, pid, time);
  stacks.learn();
  stacks.resolve();
}

}  // namespace

TEST_SUITE("profiler") {
  TEST_CASE("blanker: bytes at and above the initial stack area are left out") {
    FakeProc proc;
    proc.start[100] = 0x7000 + 40;
    StackBlanker blanker(dwarf_attr(), proc.lookup());
    // Copy [0x7000, 0x7040): the last 24 bytes lie in the area.
    const auto record = sample(100, 100, 10, 0x7000);
    const auto written = pass(blanker, {record})[0];
    REQUIRE(written.size() == record.size() - 24);
    CHECK(header_size_of(written) == written.size());
    CHECK(copy_of(written) == std::vector<uint8_t>(40, kFill));
    CHECK(dyn_size_of(written) == 40);
    // Everything around the copy is the record's own.
    CHECK(std::equal(record.begin() + 8, record.begin() + kCopyAt - 8,
                     written.begin() + 8));
    CHECK(std::equal(record.begin() + kCopyAt + kCopySize + 8, record.end(),
                     written.begin() + kCopyAt + 40 + 8));
    CHECK(blanker.stats().samples_blanked == 1);
    CHECK(blanker.stats().bytes_blanked == 24);
    CHECK(blanker.stats().stacks_dropped == 0);
    // A deep stack whose copy ends below the area is written as it is,
    // straight from the buffer (one piece), with no /proc read again.
    const auto deep = sample(100, 101, 11, 0x6000);
    RecordPieces pieces;
    uint64_t ring_time = 0;
    blanker.begin_pass();
    blanker.scan(header_of(deep), whole(deep), true, &ring_time);
    blanker.learn();
    blanker.resolve();
    blanker.rewrite(header_of(deep), whole(deep), pieces);
    REQUIRE(pieces.pieces().size() == 1);
    CHECK(pieces.pieces()[0].data() == deep.data());
    CHECK(proc.reads == 1);
    // A stack pointer at the area itself: no copy at all.
    CHECK(copy_of(pass(blanker, {sample(100, 100, 12, 0x7028)})[0]).empty());
  }

  TEST_CASE("blanker: an unknown process's copy is not written, counted") {
    FakeProc proc;  // nothing readable: gone, or start_stack hidden
    StackBlanker blanker(dwarf_attr(), proc.lookup());
    const auto record = sample(200, 200, 10, 0x1000);
    const auto written = pass(blanker, {record})[0];
    // Readers see a sample without a stack (size 0, no dyn_size word), as
    // the kernel writes one it took no stack for; the rest is the record's.
    CHECK(copy_size_of(written) == 0);
    CHECK(dyn_size_of(written) == 0);
    REQUIRE(written.size() == record.size() - kCopySize - 8);
    CHECK(header_size_of(written) == written.size());
    CHECK(std::equal(written.begin() + 8, written.begin() + kCopyAt - 8,
                     record.begin() + 8));
    CHECK(blanker.stats().stacks_dropped == 1);
    CHECK(blanker.stats().samples_blanked == 0);
    CHECK(blanker.stats().cut_bytes == kCopySize);
  }

  TEST_CASE("blanker: a copy is cut to the stack it used (dyn_size)") {
    FakeProc proc;
    proc.start[100] = 0x9000;  // far above the copy
    StackBlanker blanker(dwarf_attr(), proc.lookup());
    const auto record = sample(100, 100, 10, 0x7000, 16);
    const auto written = pass(blanker, {record})[0];
    REQUIRE(written.size() == record.size() - (kCopySize - 16));
    CHECK(header_size_of(written) == written.size());
    CHECK(copy_size_of(written) == 16);
    CHECK(dyn_size_of(written) == 16);
    CHECK(copy_of(written) == std::vector<uint8_t>(16, kFill));
    // Everything before the copy and after its dyn_size is the record's.
    CHECK(std::equal(written.begin() + 8, written.begin() + kCopyAt - 8,
                     record.begin() + 8));
    CHECK(std::equal(written.begin() + kCopyAt + 24, written.end(),
                     record.begin() + kCopyAt + kCopySize + 8));
    CHECK(blanker.stats().copied_bytes == 16);
    CHECK(blanker.stats().kept_bytes == 16);
    CHECK(blanker.stats().cut_bytes == kCopySize - 16);
    CHECK(blanker.stats().samples_blanked == 0);
    // A dyn_size that is not whole words keeps the word it ends in.
    const auto odd = pass(blanker, {sample(100, 100, 11, 0x7000, 20)})[0];
    CHECK(copy_size_of(odd) == 24);
    CHECK(dyn_size_of(odd) == 20);
    // (its bytes past dyn_size are the ring's leftovers: zeros)
    CHECK(zeros_from(copy_of(odd)) == 20);
    // Nothing used: an empty copy that still has its dyn_size word.
    const auto none = pass(blanker, {sample(100, 100, 12, 0x7000, 0)})[0];
    CHECK(copy_size_of(none) == 0);
    CHECK(header_size_of(none) == none.size());
  }

  TEST_CASE("blanker: a cut copy that reaches the initial area") {
    FakeProc proc;
    proc.start[100] = 0x7000 + 20;
    StackBlanker blanker(dwarf_attr(), proc.lookup());
    const auto written = pass(blanker, {sample(100, 100, 10, 0x7000, 40)})[0];
    // Cut at the area (in whole words, zeros after it), dyn_size with it.
    CHECK(copy_size_of(written) == 24);
    CHECK(zeros_from(copy_of(written)) == 20);
    CHECK(dyn_size_of(written) == 20);
    CHECK(blanker.stats().bytes_blanked == 20);
    CHECK(blanker.stats().kept_bytes == 24);
  }

  TEST_CASE("blanker: a thread's copy ends at its control block") {
    FakeProc proc;
    proc.start[100] = 0x9000;  // far above the copies
    StackBlanker blanker(dwarf_attr(), proc.lookup());
    // Copies from 0x6ff0 with a block at 0x7000 (64-byte aligned, 0x10 into
    // the copy): its own address at +0 and +16, a canary with a zero low
    // byte at +0x28.
    auto with_block = [](std::vector<uint8_t> record) {
      auto put = [&](size_t at, uint64_t value) {
        std::memcpy(record.data() + kCopyAt + at, &value, sizeof(value));
      };
      put(0x10, 0x7000);
      put(0x20, 0x7000);
      put(0x38, 0x1122334455667700);
      return record;
    };
    const auto thread = with_block(sample(100, 101, 10, 0x6ff0));
    auto written = pass(blanker, {thread})[0];
    CHECK(copy_size_of(written) == 0x10);
    CHECK(dyn_size_of(written) == 0x10);
    CHECK(header_size_of(written) == written.size());
    CHECK(blanker.stats().thread_blocks == 1);
    // The first thread's block is not on its stack: nothing is looked for.
    written = pass(blanker, {with_block(sample(100, 100, 11, 0x6ff0))})[0];
    CHECK(copy_size_of(written) == kCopySize);
    CHECK(blanker.stats().thread_blocks == 1);
    // Not a block: the canary's low byte is not zero, or `self` differs.
    auto fake = thread;
    fake[kCopyAt + 0x38] = 1;
    CHECK(copy_size_of(pass(blanker, {fake})[0]) == kCopySize);
    fake = thread;
    fake[kCopyAt + 0x20] ^= 0x40;
    CHECK(copy_size_of(pass(blanker, {fake})[0]) == kCopySize);
    // Not at a 64-byte boundary.
    const auto shifted = with_block(sample(100, 101, 12, 0x6ff8));
    CHECK(copy_size_of(pass(blanker, {shifted})[0]) == kCopySize);
    CHECK(blanker.stats().thread_blocks == 1);
  }

  TEST_CASE("blanker: a record that wraps the buffer's end") {
    FakeProc proc;
    proc.start[100] = 0x7000 + 8;
    StackBlanker blanker(dwarf_attr(), proc.lookup());
    const auto record = sample(100, 100, 10, 0x7000);
    // Split inside the copy, as the ring buffer hands it over.
    const size_t split = kCopyAt + 20;
    std::vector<uint8_t> head(record.begin(), record.begin() + split);
    std::vector<uint8_t> tail(record.begin() + split, record.end());
    RingBuffer::RecordBytes bytes{head, tail};
    uint64_t ring_time = 0;
    blanker.begin_pass();
    blanker.scan(header_of(record), bytes, true, &ring_time);
    blanker.learn();
    blanker.resolve();
    RecordPieces pieces;
    blanker.rewrite(header_of(record), bytes, pieces);
    CHECK(copy_of(joined(pieces)) == std::vector<uint8_t>(8, kFill));
    // Cut to its dyn_size across the wrap: the same bytes as unwrapped.
    const auto cut = sample(100, 100, 11, 0x7000, 32);
    const auto whole_written = pass(blanker, {cut})[0];
    for (size_t at :
         {size_t{8}, kCopyAt - 4, kCopyAt + 20, kCopyAt + 40, cut.size() - 8}) {
      std::vector<uint8_t> first(cut.begin(), cut.begin() + at);
      std::vector<uint8_t> second(cut.begin() + at, cut.end());
      RingBuffer::RecordBytes split_bytes{first, second};
      blanker.begin_pass();
      blanker.scan(header_of(cut), split_bytes, true, &ring_time);
      blanker.learn();
      blanker.resolve();
      RecordPieces split_pieces;
      blanker.rewrite(header_of(cut), split_bytes, split_pieces);
      CHECK(joined(split_pieces) == whole_written);
    }
  }

  TEST_CASE("blanker: frame-pointer samples are left alone") {
    perf_event_attr attr = dwarf_attr();
    attr.sample_type &=
        ~uint64_t{PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER};
    FakeProc proc;
    StackBlanker blanker(attr, proc.lookup());
    CHECK_FALSE(blanker.active());
    ByteWriter w;
    for (int i = 0; i < 7; ++i) w.u64(1);
    const auto record = with_header(PERF_RECORD_SAMPLE, 0, w.take());
    RecordPieces pieces;
    blanker.rewrite(header_of(record), whole(record), pieces);
    CHECK(joined(pieces) == record);
    CHECK(proc.reads == 0);
  }

  TEST_CASE("blanker: a sample read before its exec's COMM (another CPU)") {
    FakeProc proc;
    proc.start[100] = 0x8000;  // the area of the program exec'd at t=40
    StackBlanker blanker(dwarf_attr(), proc.lookup());
    // A sample of the new program (t=50) and one of the old (t=30), the
    // exec's COMM in a buffer past the heads: what /proc says belongs to
    // the new program only; the old one's area was never seen.
    auto written =
        pass(blanker,
             {sample(100, 100, 50, 0x8000 - 16), sample(100, 100, 30, 0x7000)},
             {comm_exec(100, 40)});
    CHECK(zeros_from(copy_of(written[0])) == 16);
    CHECK(zeros_from(copy_of(written[1])) == 0);
    CHECK(blanker.stats().stacks_dropped == 1);
    // An exec of a known process seen late: its new program's samples are
    // blanked whole until its area is read (the next pass).
    pass(blanker, {});  // reads what the exec asked for
    proc.start[100] = 0x9000;
    written = pass(blanker, {sample(100, 100, 70, 0x9000 - 16)},
                   {comm_exec(100, 60)});
    CHECK(zeros_from(copy_of(written[0])) == 0);
    written =
        pass(blanker, {comm_exec(100, 60), sample(100, 100, 80, 0x9000 - 16),
                       sample(100, 100, 55, 0x8000 - 24)});
    CHECK(zeros_from(copy_of(written[1])) == 16);
    CHECK(zeros_from(copy_of(written[2])) == 24);
  }

  TEST_CASE("blanker: an exec while /proc is read leaves the area unknown") {
    FakeProc proc;
    proc.start[100] = 0x7040;
    uint64_t now = 100;
    InitialStacks stacks(proc.lookup(), [&] { return now += 10; });
    stacks.begin_pass();
    stacks.want(100, 100, 50);
    stacks.learn();  // read between t=110 and t=120
    stacks.note_exec(100, 115);
    stacks.resolve();
    CHECK_FALSE(stacks.start_at(100, 50));
    CHECK_FALSE(stacks.start_at(100, 116));
  }

  TEST_CASE("blanker: a fork inherits its parent's area, an exec does not") {
    FakeProc proc;
    proc.start[100] = 0x7040;
    StackBlanker blanker(dwarf_attr(), proc.lookup());
    pass(blanker, {sample(100, 100, 10, 0x7000)});
    // Child 101 forked at t=20, gone before it could be read.
    auto written = pass(blanker, {task(PERF_RECORD_FORK, 101, 100, 101, 20),
                                  sample(101, 101, 30, 0x7000)});
    CHECK(zeros_from(copy_of(written[1])) == 0x40);
    // It exec'd at t=40 and died: its new area is unknown.
    written = pass(blanker, {comm_exec(101, 40), sample(101, 101, 50, 0x7000)});
    CHECK(zeros_from(copy_of(written[1])) == 0);
    CHECK(blanker.stats().stacks_dropped == 1);
    // A new thread (pid == ppid) is not a new process.
    written = pass(blanker, {task(PERF_RECORD_FORK, 100, 100, 102, 60),
                             sample(100, 102, 70, 0x7000)});
    CHECK(zeros_from(copy_of(written[1])) == 0x40);
    // /proc was read for 100, then for 101 after its exec (gone).
    CHECK(proc.reads == 2);
  }

  TEST_CASE("initial stacks: exited processes are forgotten, reused pids") {
    FakeProc proc;
    proc.start[100] = 0x7040;
    InitialStacks stacks(proc.lookup());
    learn_in_pass(stacks, 100, 10);
    CHECK(stacks.start_at(100, 10) == 0x7040);
    stacks.note_exit(100, 100, 20);
    stacks.begin_pass();
    CHECK(stacks.start_at(100, 15) == 0x7040);  // samples may still come
    // The pid comes back as a new process forked from 1 (area 0x9000).
    proc.start[1] = 0x9000;
    stacks.want(1, 1, 25);
    stacks.learn();
    stacks.note_fork(100, 1, 30);
    stacks.resolve();
    stacks.begin_pass();
    CHECK(stacks.processes() == 2);
    CHECK_FALSE(stacks.start_at(100, 15));  // the old one is gone
    CHECK(stacks.start_at(100, 35) == 0x9000);
  }

  TEST_CASE("initial stacks: a barrier makes every area be read again") {
    FakeProc proc;
    proc.start[100] = 0x7040;
    InitialStacks stacks(proc.lookup());
    learn_in_pass(stacks, 100, 10);
    // Side-band lost from t=20 on: an exec may have gone unseen.
    proc.start[100] = 0x8000;
    stacks.begin_pass();
    stacks.barrier(20);
    CHECK(stacks.start_at(100, 15) == 0x7040);
    CHECK_FALSE(stacks.start_at(100, 25));
    stacks.learn();
    stacks.resolve();
    CHECK(stacks.start_at(100, 25) == 0x8000);
    CHECK(proc.reads == 2);
  }

  TEST_CASE("initial stacks: no more than kMaxProcesses are followed") {
    FakeProc proc;
    InitialStacks stacks(proc.lookup());
    stacks.begin_pass();
    for (pid_t pid = 1;
         pid <= static_cast<pid_t>(InitialStacks::kMaxProcesses) + 10; ++pid)
      stacks.note_fork(pid, 0, 1);
    CHECK(stacks.processes() == InitialStacks::kMaxProcesses);
  }
}

}  // namespace runner::profiler
