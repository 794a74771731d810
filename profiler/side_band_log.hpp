// SideBandLog: keeps, while the drain writes perf.pipedata, what the mapping
// replay after the run reads of it (format::perf::SideBandRecords), so that
// the replay costs what the side-band records cost, not what the samples
// and their stack copies weigh.
//
// Kept: a copy of every MMAP, MMAP2, COMM, FORK and EXIT record (the kinds
// MappingTracker applies; the others, LOST and THROTTLE among them, change
// nothing there), a FINISHED_ROUND where the drain writes one, and of the
// samples only those that change what the replay does: the replay marks a
// pid as sampled, and only a FORK that gives the pid a new process unmarks
// it, so one sample of a pid per such FORK is enough. Which one: the first
// in the replay's order (by time within the rounds, as replay_file sorts),
// so that the log follows that ordering exactly. The replay flushes, at
// each FINISHED_ROUND, what is not newer than the newest record of the
// round before; the log works out the same batches and picks each pid's
// samples once a batch is complete (at the end of the round after it),
// holding meanwhile the samples of at most two rounds (24 bytes each).
//
// Memory is capped: past `max_bytes` the log frees what it holds, keeps
// nothing more and says why (SideBandRecords::incomplete); the replay then
// reads the file. Not thread-safe: one thread at a time (the drain's).
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "format/format.hpp"
#include "profiler/ring_buffer.hpp"

namespace runner::profiler {

class SideBandLog {
 public:
  static constexpr uint64_t kDefaultMaxBytes = uint64_t{64} << 20;

  // `events`: the attrs of the file with their ids, as its HEADER_ATTR
  // records have them (the first is the sampling event's).
  explicit SideBandLog(std::span<const format::perf::EventDesc> events,
                       uint64_t max_bytes = kDefaultMaxBytes);

  // One record the drain writes to the file, in the file's order. Call it
  // for every record written, and only for those.
  void add(const perf_event_header& header,
           const RingBuffer::RecordBytes& bytes);
  // The same for a sample whose copy the drain located (as add() would).
  void add_sample(const format::perf::UserStackLocation& sample);
  // The same for a run of records as written (back to back, each with its
  // header), e.g. what a drain thread set aside for the writer.
  void add_records(std::span<const uint8_t> run);
  // The drain wrote a FINISHED_ROUND.
  void end_round();
  // The records could not be those of the file (its writing failed).
  void set_incomplete(std::string why);
  // What was kept; the log is empty afterwards and keeps nothing more.
  format::perf::SideBandRecords take();

  bool overflowed() const { return !records_.incomplete.empty(); }
  uint64_t bytes() const { return records_.bytes() + pending_bytes(); }

 private:
  // A sample, or a FORK of a new process (pid != ppid), in arrival order.
  struct Event {
    uint64_t at = 0;     // offset in the stream it came before / of the FORK
    uint64_t order = 0;  // arrival
    uint64_t time = 0;
    uint32_t pid = 0, tid = 0;
    bool fork = false;
  };
  // The records the replay applies at one flush (see above).
  struct Batch {
    std::vector<Event> events;
    bool has_fork = false;
  };

  void add_sample(const perf_event_header& header,
                  const RingBuffer::RecordBytes& bytes);
  void add_side_band(const perf_event_header& header,
                     const RingBuffer::RecordBytes& bytes);
  // The time the replay orders a side-band record by, and the FORK it is
  // (pid, ppid); false when the replay would not read the record.
  bool side_band_time(const perf_event_header& header,
                      std::span<const uint8_t> record, uint64_t* time,
                      format::perf::TaskRecord* task) const;
  void note(Event event);
  void close_batch(Batch& batch);
  void close_forked_batch(Batch& batch);
  void keep(const Event& event);
  void check_cap();
  uint64_t pending_bytes() const;

  format::perf::SideBandRecords records_;
  uint64_t max_bytes_;
  perf_event_attr sample_attr_{};
  format::perf::UserStackLayout layout_;
  bool timed_ = false;
  // Newest time of every record so far, and as of the last FINISHED_ROUND:
  // the replay's flush limit for the current round.
  uint64_t newest_ = 0, newest_sample_ = 0, limit_ = 0;
  uint64_t order_ = 0;
  // Batches still open: the one the current round's FINISHED_ROUND flushes
  // and the one after it.
  Batch current_, next_;
  // Pids whose last event in the replay's order, up to the closed batches,
  // is a kept sample (the pid is marked sampled).
  std::unordered_set<uint32_t> sampled_;
  std::vector<uint64_t> kept_order_;  // arrival of records_.samples
  std::vector<uint8_t> scratch_;
};

}  // namespace runner::profiler
