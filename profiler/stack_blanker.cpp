#include "profiler/stack_blanker.hpp"

#include <algorithm>
#include <array>

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
  // Offset in the copy from which it is zeroed.
  uint64_t blank_from = 0;
  const auto start =
      stacks_.start_at(static_cast<pid_t>(stack.pid), stack.time);
  if (start && stack.sp && *stack.sp < *start)
    blank_from = std::min(stack.size, *start - *stack.sp);
  const uint64_t cut = std::min(blank_from, stack.dyn_size);
  if (cut >= stack.size) {
    out.add(bytes, 0, header.size);
    return;
  }
  const bool dropped = !start || !stack.sp;
  if (dropped) {
    ++stats_.stacks_dropped;
  } else if (blank_from < stack.dyn_size) {
    ++stats_.samples_blanked;
    stats_.bytes_blanked += stack.dyn_size - blank_from;
  }
  stats_.stale_bytes += stack.size - stack.dyn_size;
  const size_t data_at = sizeof(header) + stack.offset;
  const size_t data_end = data_at + stack.size;
  out.add(bytes, 0, data_at + cut);
  out.add_zeros(stack.size - cut);
  if (dropped) {
    out.add_word(0);  // dyn_size: no valid byte
    out.add(bytes, data_end + 8, header.size - data_end - 8);
  } else {
    out.add(bytes, data_end, header.size - data_end);
  }
}

}  // namespace runner::profiler
