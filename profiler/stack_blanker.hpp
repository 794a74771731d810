// StackBlanker: what the drain thread writes instead of the kernel's
// records, so that nothing of a benchmark's environment reaches
// perf.pipedata through the samples' stack copies, and no byte of a copy
// that is not the program's stack is written at all.
//
// With DWARF call graphs every sample carries a copy of the user stack from
// the stack pointer up (dwarf,8192: 8 KiB asked for), of which the kernel
// fills the first dyn_size bytes, up to the end of the stack's mapping. For
// a shallow stack that reaches the process's initial stack area
// (InitialStacks): argc, argv and envp, the auxiliary vector and its random
// bytes, the argv and environment strings. The frames of the program,
// _start's included, lie below that area.
//
// Each copy is written cut to the program's stack: its bytes below both
// the initial area and dyn_size, in whole words (zeros after the last
// byte), with the record's size, the copy's size word and dyn_size written
// anew. So bytes per sample follow the stack the program used, nothing of
// the area is written, and unwinding is unchanged. perf's format allows a
// copy of any size (the kernel writes a smaller one for a thread near its
// stack's top), so perf script and every reader take it. When the area of
// a sample's process cannot be learned, the copy is not written (size 0: a
// sample without a stack, which keeps its place, time and leaf).
//
// A thread other than a process's first has no initial area; glibc puts
// its control block at the top of its stack instead, above its frames and
// static TLS, holding the stack protector's canary and the pointer guard
// (from AT_RANDOM). A thread's copy ends where that block begins, found by
// its layout (its own address at +0 and +16), so neither is written, nor
// what lies past the thread's stack (the kernel's copy runs on into the
// next mapping).
//
// The ring buffer's data pages cannot be written by user space (a write
// raises SIGBUS), so records are not changed in place: a rewritten record
// is written as pieces, its bytes before the copy and after it straight
// from the mapping with the new words in between, and untouched records
// as they lie. Nothing is copied by the blanker.
#pragma once

#include <linux/perf_event.h>
#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <vector>

#include "format/format.hpp"
#include "profiler/initial_stacks.hpp"
#include "profiler/ring_buffer.hpp"

namespace runner::profiler {

// The bytes to write for a run of records: pieces of the ring buffer and of
// a shared run of zeros, in file order, merged when adjacent.
class RecordPieces {
 public:
  // The largest run of zeros one add_zeros() takes (a stack copy's size is
  // at most format::perf::kMaxStackSize).
  static constexpr size_t kMaxZeros = 64 << 10;

  // `size` bytes of a record's bytes from `offset` on.
  void add(const RingBuffer::RecordBytes& bytes, size_t offset, size_t size);
  void add_zeros(size_t size);
  // A field written anew (a u64 in the host's order, as the kernel's are).
  void add_word(uint64_t value);
  // Bytes that outlive the write (a run set aside, a round marker).
  void add(std::span<const uint8_t> piece);
  std::span<const std::span<const uint8_t>> pieces() const { return pieces_; }
  size_t size() const { return size_; }
  void clear();

 private:
  std::vector<std::span<const uint8_t>> pieces_;
  std::deque<uint64_t> words_;  // add_word()'s, at stable addresses
  size_t size_ = 0;
};

struct BlankingStats {
  uint64_t samples_blanked = 0;  // copies that reached the initial area
  uint64_t bytes_blanked = 0;    // bytes of that area left out of them
  uint64_t stacks_dropped = 0;   // copies not written: area unknown
  uint64_t samples_dropped = 0;  // samples not written: layout unreadable
  // Of the copies: the bytes the kernel filled (dyn_size), those written
  // (the program's stack in whole words) and those left out (the rest of
  // the size asked for).
  uint64_t copied_bytes = 0, kept_bytes = 0, cut_bytes = 0;
  // Copies of a thread cut at its control block (glibc's struct pthread).
  uint64_t thread_blocks = 0;
  uint64_t area_lookups = 0;  // reads of /proc/<pid>/stat
  // Adds another rewriter's counts (area_lookups are the blanker's own).
  void add(const BlankingStats& other);
};

class StackBlanker {
 public:
  // `sample_attr`: the sampling event's attr (its samples are rewritten);
  // side-band records (of either event) carry the same sample_id trailer.
  explicit StackBlanker(
      const perf_event_attr& sample_attr,
      InitialStacks::Lookup lookup = InitialStacks::read_proc);

  // Whether samples carry stack copies at all (DWARF mode). When not,
  // records are written as they are and nothing else need be called.
  bool active() const { return active_; }

  // One drain pass, in this order (see initial_stacks.hpp):
  //   begin_pass(); scan(..., true) over every buffer up to the heads to be
  //   written; learn(); scan(..., false) over what arrived since, up to
  //   heads taken after learn(); resolve(); rewrite() over the first range.
  // `ring_time` is the buffer's time of the last record scanned (kept by
  // the caller per buffer, across passes).
  void begin_pass();
  void scan(const perf_event_header& header,
            const RingBuffer::RecordBytes& bytes, bool wanting,
            uint64_t* ring_time);
  void learn();
  void resolve();
  // Side-band records may have been lost from `time` on (a sampling event
  // without the tracking event sees none outside benchmark windows).
  void barrier(uint64_t time);
  // What a rewriting thread keeps between records: its scratch and counts.
  struct RewriteState {
    BlankingStats stats;
    std::vector<uint8_t> scratch;
    // The sample rewrite() was last given, when its copy was located (the
    // sample is written); unset after any other record.
    std::optional<format::perf::UserStackLocation> located;
  };
  // Appends what to write for the record to `out`. With a state of its own
  // per thread, several threads rewrite the records of different buffers
  // at once, between resolve() and the next begin_pass().
  void rewrite(const perf_event_header& header,
               const RingBuffer::RecordBytes& bytes, RecordPieces& out,
               RewriteState& state) const;
  void rewrite(const perf_event_header& header,
               const RingBuffer::RecordBytes& bytes, RecordPieces& out) {
    rewrite(header, bytes, out, own_);
  }

  // The counts of rewrite() without a state, and the /proc reads.
  BlankingStats stats() const;

 private:
  void scan_side_band(const perf_event_header& header,
                      std::span<const uint8_t> record, uint64_t* ring_time);
  // The record's bytes in one piece: in the mapping, or copied to
  // `scratch` when it wraps the end of the buffer.
  static std::span<const uint8_t> contiguous(
      const RingBuffer::RecordBytes& bytes, size_t size,
      std::vector<uint8_t>& scratch);
  // The length of the copy's first part that is the program's stack:
  // below dyn_size, the initial area starting at `start` and, for a
  // thread, its control block; counted in `stats`.
  static uint64_t program_stack(std::span<const uint8_t> body,
                                const format::perf::UserStackLocation& stack,
                                uint64_t start, BlankingStats& stats);
  // A sample written with its copy cut to `kept` bytes, of which the first
  // `valid` are the kernel's and the rest zeros.
  static void write_cut(const perf_event_header& header,
                        const RingBuffer::RecordBytes& bytes,
                        const format::perf::UserStackLocation& stack,
                        uint64_t valid, uint64_t kept, RecordPieces& out);

  perf_event_attr attr_{};
  format::perf::UserStackLayout layout_;
  bool active_ = false;
  InitialStacks stacks_;
  RewriteState own_;
};

}  // namespace runner::profiler
