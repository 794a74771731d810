#include "profiler/stack_blanker.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>

#include "format/format.hpp"

namespace runner::profiler {
namespace {

const std::array<uint8_t, RecordPieces::kMaxZeros> kZeros{};

// Side-band records are small (COMM: a 16-byte name); a larger one is not
// one the kernel writes and is left alone.
constexpr size_t kMaxSideBand = 512;

}  // namespace

void RecordPieces::add(std::span<const uint8_t> piece) {
  if (piece.empty()) return;
  size_ += piece.size();
  if (!pieces_.empty()) {
    std::span<const uint8_t>& last = pieces_.back();
    if (last.data() + last.size() == piece.data()) {
      last = {last.data(), last.size() + piece.size()};
      return;
    }
  }
  pieces_.push_back(piece);
}

void RecordPieces::add(const RingBuffer::RecordBytes& bytes, size_t offset,
                       size_t size) {
  if (offset < bytes.first.size()) {
    const size_t take = std::min(size, bytes.first.size() - offset);
    add(bytes.first.subspan(offset, take));
    offset += take;
    size -= take;
  }
  if (size > 0) add(bytes.second.subspan(offset - bytes.first.size(), size));
}

void RecordPieces::add_zeros(size_t size) {
  while (size > 0) {
    const size_t take = std::min(size, kZeros.size());
    add(std::span<const uint8_t>(kZeros.data(), take));
    size -= take;
  }
}

void RecordPieces::add_word(uint64_t value) {
  words_.push_back(value);
  add(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(&words_.back()),
                               sizeof(value)));
}

void RecordPieces::clear() {
  pieces_.clear();
  words_.clear();
  size_ = 0;
}

StackBlanker::StackBlanker(const perf_event_attr& sample_attr,
                           InitialStacks::Lookup lookup)
    : attr_(sample_attr),
      layout_(sample_attr),
      active_(layout_.has_stack()),
      stacks_(std::move(lookup)) {}

void StackBlanker::begin_pass() {
  if (active_) stacks_.begin_pass();
}

void StackBlanker::learn() {
  if (active_) stacks_.learn();
}

BlankingStats StackBlanker::stats() const {
  BlankingStats out = own_.stats;
  out.area_lookups = stacks_.lookups();
  return out;
}

void BlankingStats::add(const BlankingStats& other) {
  samples_blanked += other.samples_blanked;
  bytes_blanked += other.bytes_blanked;
  stacks_dropped += other.stacks_dropped;
  samples_dropped += other.samples_dropped;
  copied_bytes += other.copied_bytes;
  kept_bytes += other.kept_bytes;
  cut_bytes += other.cut_bytes;
  thread_blocks += other.thread_blocks;
}

void StackBlanker::resolve() {
  if (active_) stacks_.resolve();
}

void StackBlanker::barrier(uint64_t time) {
  if (active_) stacks_.barrier(time);
}

void StackBlanker::scan(const perf_event_header& header,
                        const RingBuffer::RecordBytes& bytes, bool wanting,
                        uint64_t* ring_time) {
  if (!active_) return;
  if (header.type == PERF_RECORD_SAMPLE) {
    std::array<uint8_t, format::perf::kSampleHeadMax> head;
    const size_t n = layout_.head_size();
    uint32_t pid = 0, tid = 0;
    uint64_t time = 0;
    if (n > head.size() || !bytes.read(sizeof(header), head.data(), n) ||
        !layout_.head({head.data(), n}, &pid, &tid, &time))
      return;
    *ring_time = std::max(*ring_time, time);
    if (wanting)
      stacks_.want(static_cast<pid_t>(pid), static_cast<pid_t>(tid), time);
    return;
  }
  if (header.type != PERF_RECORD_COMM && header.type != PERF_RECORD_FORK &&
      header.type != PERF_RECORD_EXIT && header.type != PERF_RECORD_LOST)
    return;
  std::array<uint8_t, kMaxSideBand> record;
  if (header.size > record.size() || !bytes.read(0, record.data(), header.size))
    return;
  scan_side_band(header, {record.data(), header.size}, ring_time);
}

void StackBlanker::scan_side_band(const perf_event_header& header,
                                  std::span<const uint8_t> record,
                                  uint64_t* ring_time) {
  namespace perf = format::perf;
  const size_t trailer = perf::sample_id_size(attr_.sample_type);
  if (record.size() < sizeof(header) + trailer) return;
  const auto body =
      record.subspan(sizeof(header), record.size() - sizeof(header) - trailer);
  perf::SampleId id;
  if (!perf::decode_sample_id(record.last(trailer), attr_.sample_type, &id))
    return;
  if (header.type == PERF_RECORD_LOST) {
    // What was lost came after the last record of this buffer.
    stacks_.barrier(*ring_time);
    return;
  }
  *ring_time = std::max(*ring_time, id.time);
  if (header.type == PERF_RECORD_COMM) {
    perf::CommRecord comm;
    if (perf::decode_comm(header.misc, body, &comm) && comm.exec)
      stacks_.note_exec(static_cast<pid_t>(comm.pid), id.time);
    return;
  }
  perf::TaskRecord task;
  if (!perf::decode_task(header.type, body, &task)) return;
  if (task.is_exit)
    stacks_.note_exit(static_cast<pid_t>(task.pid),
                      static_cast<pid_t>(task.tid), task.time);
  else
    stacks_.note_fork(static_cast<pid_t>(task.pid),
                      static_cast<pid_t>(task.ppid), task.time);
}

std::span<const uint8_t> StackBlanker::contiguous(
    const RingBuffer::RecordBytes& bytes, size_t size,
    std::vector<uint8_t>& scratch) {
  if (bytes.second.empty()) return bytes.first;
  scratch.resize(size);
  bytes.read(0, scratch.data(), size);
  return scratch;
}

namespace {

// The bytes a copy of `used` valid bytes keeps: whole words, as the kernel
// writes the copy (so that the fields after it stay aligned).
uint64_t words_for(uint64_t used) { return (used + 7) & ~uint64_t{7}; }

// x86-64 glibc puts a thread's control block (struct pthread) at the top
// of the stack it allocates for the thread, above the thread's static TLS
// and frames. The block holds the stack protector's canary and the pointer
// guard (both taken from the process's AT_RANDOM bytes) and pointers into
// the process. It begins with tcbhead_t: `tcb` and `self` (at +0 and +16)
// both hold the block's own address, which is 64-byte aligned, and the
// canary (at +0x28) has a zero low byte. Returns the block's offset in
// `copy` (which starts at `sp`), if the copy reaches one.
constexpr uint64_t kTcbAlign = 64, kTcbSelfAt = 16, kTcbCanaryAt = 0x28;

std::optional<uint64_t> thread_block_at(std::span<const uint8_t> copy,
                                        uint64_t sp) {
  auto word = [&](uint64_t at) {
    uint64_t value = 0;
    std::memcpy(&value, copy.data() + at, sizeof(value));
    return value;
  };
  uint64_t at = (kTcbAlign - sp % kTcbAlign) % kTcbAlign;
  for (; at + kTcbCanaryAt + 8 <= copy.size(); at += kTcbAlign) {
    const uint64_t address = sp + at;
    if (word(at) == address && word(at + kTcbSelfAt) == address &&
        (word(at + kTcbCanaryAt) & 0xff) == 0)
      return at;
  }
  return std::nullopt;
}

// The record's header word with a new size.
uint64_t header_word(perf_event_header header, uint64_t size) {
  header.size = static_cast<uint16_t>(size);
  uint64_t word = 0;
  std::memcpy(&word, &header, sizeof(word));
  return word;
}

}  // namespace

void StackBlanker::rewrite(const perf_event_header& header,
                           const RingBuffer::RecordBytes& bytes,
                           RecordPieces& out, RewriteState& state) const {
  state.located.reset();
  if (!active_ || header.type != PERF_RECORD_SAMPLE) {
    out.add(bytes, 0, header.size);
    return;
  }
  const auto body =
      contiguous(bytes, header.size, state.scratch).subspan(sizeof(header));
  BlankingStats& stats = state.stats;
  format::perf::UserStackLocation stack;
  if (!layout_.locate(body, &stack)) {
    // Where its copy lies is unknown: it cannot be written safely.
    ++stats.samples_dropped;
    return;
  }
  state.located = stack;
  if (stack.size == 0) {
    out.add(bytes, 0, header.size);
    return;
  }
  const auto start =
      stacks_.start_at(static_cast<pid_t>(stack.pid), stack.time);
  // The copy is written cut to the program's stack; not at all when the
  // area is unknown (a sample without a stack).
  const bool known = start && stack.sp;
  const uint64_t valid = known ? program_stack(body, stack, *start, stats) : 0;
  const uint64_t kept = std::min(stack.size, words_for(valid));
  stats.copied_bytes += stack.dyn_size;
  stats.kept_bytes += kept;
  stats.cut_bytes += stack.size - kept;
  if (valid >= stack.size) {
    out.add(bytes, 0, header.size);
    return;
  }
  if (!known) ++stats.stacks_dropped;
  write_cut(header, bytes, stack, valid, kept, out);
}

uint64_t StackBlanker::program_stack(
    std::span<const uint8_t> body, const format::perf::UserStackLocation& stack,
    uint64_t start, BlankingStats& stats) {
  const uint64_t sp = *stack.sp;
  uint64_t end = sp < start ? std::min(stack.dyn_size, start - sp) : 0;
  if (end < stack.dyn_size) {
    ++stats.samples_blanked;
    stats.bytes_blanked += stack.dyn_size - end;
  }
  // A thread's copy ends at its control block (a process's first thread
  // has its block elsewhere).
  if (stack.tid != stack.pid) {
    if (const auto block =
            thread_block_at(body.subspan(stack.offset, end), sp)) {
      end = *block;
      ++stats.thread_blocks;
    }
  }
  return end;
}

void StackBlanker::write_cut(const perf_event_header& header,
                             const RingBuffer::RecordBytes& bytes,
                             const format::perf::UserStackLocation& stack,
                             uint64_t valid, uint64_t kept, RecordPieces& out) {
  const size_t size_at = sizeof(header) + stack.offset - sizeof(uint64_t);
  const size_t data_end = sizeof(header) + stack.offset + stack.size;
  // Without a copy there is no dyn_size word either (as the kernel writes a
  // sample it took no stack for).
  const uint64_t left_out = stack.size - kept + (kept == 0 ? 8 : 0);
  out.add_word(header_word(header, header.size - left_out));
  out.add(bytes, sizeof(header), size_at - sizeof(header));
  out.add_word(kept);
  if (kept > 0) {
    out.add(bytes, size_at + sizeof(uint64_t), valid);
    out.add_zeros(kept - valid);
    out.add_word(valid);  // dyn_size: the bytes of the program's stack
  }
  out.add(bytes, data_end + 8, header.size - data_end - 8);
}

}  // namespace runner::profiler
