#include "profiler/stack_blanker.hpp"

#include <algorithm>
#include <array>
#include <cstring>

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
  if (!active_) return;
  stacks_.learn();
  stats_.area_lookups = stacks_.lookups();
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
    const RingBuffer::RecordBytes& bytes, size_t size) {
  if (bytes.second.empty()) return bytes.first;
  scratch_.resize(size);
  bytes.read(0, scratch_.data(), size);
  return scratch_;
}

namespace {

// The bytes a copy of `used` valid bytes keeps: whole words, as the kernel
// writes the copy (so that the fields after it stay aligned).
uint64_t words_for(uint64_t used) { return (used + 7) & ~uint64_t{7}; }

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
                           RecordPieces& out) {
  if (!active_ || header.type != PERF_RECORD_SAMPLE) {
    out.add(bytes, 0, header.size);
    return;
  }
  const auto body = contiguous(bytes, header.size).subspan(sizeof(header));
  format::perf::UserStackLocation stack;
  if (!layout_.locate(body, &stack)) {
    // Where its copy lies is unknown: it cannot be written safely.
    ++stats_.samples_dropped;
    return;
  }
  if (stack.size == 0) {
    out.add(bytes, 0, header.size);
    return;
  }
  const auto start =
      stacks_.start_at(static_cast<pid_t>(stack.pid), stack.time);
  const bool known = start && stack.sp;
  // Offset in the copy from which it is zeroed.
  uint64_t blank_from = 0;
  if (known && *stack.sp < *start)
    blank_from = std::min(stack.size, *start - *stack.sp);
  // The copy is written cut to the program's stack: up to dyn_size and
  // below the initial area; not at all when the area is unknown (a sample
  // without a stack).
  const uint64_t valid = known ? std::min(blank_from, stack.dyn_size) : 0;
  const uint64_t kept = std::min(stack.size, words_for(valid));
  stats_.copied_bytes += stack.dyn_size;
  stats_.kept_bytes += kept;
  stats_.cut_bytes += stack.size - kept;
  if (valid >= stack.size) {
    out.add(bytes, 0, header.size);
    return;
  }
  if (!known) {
    ++stats_.stacks_dropped;
  } else if (blank_from < stack.dyn_size) {
    ++stats_.samples_blanked;
    stats_.bytes_blanked += stack.dyn_size - blank_from;
  }
  write_cut(header, bytes, stack, valid, kept, out);
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
