// SideBandRecords: what the profiler kept, while it wrote perf.pipedata, of
// the records the mapping replay reads, so that the replay after a run need
// not read the whole file back (whose size follows the samples and their
// stack copies). Written by profiler/'s SideBandLog, read by perfdata/'s
// MappingTracker::replay_records.
//
// `stream` is a perf pipe stream held in memory, readable by the same
// reader as the file: the pipe header, the attrs (with their ids), then the
// kernel's MMAP/MMAP2, COMM, FORK and EXIT records as they were written, and
// a FINISHED_ROUND where the file has one. Samples are not in it: `samples`
// says where a sample of a pid came, for those samples that change what the
// replay does with that pid (its first sample after a FORK that gives the
// pid a new process; the others leave the replay as it was). `rounds` gives
// the newest time of the samples written up to each FINISHED_ROUND, the left
// out ones included, because the replay's ordering depends on it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace runner::format::perf {

struct SideBandRecords {
  std::vector<uint8_t> stream;
  struct Sample {
    uint64_t at = 0;  // offset in `stream` of the record it came before
    uint32_t pid = 0, tid = 0;
    uint64_t time = 0;
  };
  std::vector<Sample> samples;  // in the order written (by `at`)
  struct Round {
    uint64_t at = 0;             // offset of the FINISHED_ROUND in `stream`
    uint64_t newest_sample = 0;  // newest sample time up to it
  };
  std::vector<Round> rounds;  // in stream order
  // Why the records are not those of the file, when they are not (the
  // memory cap was reached, the file's writing failed): the replay must
  // then read the file. Empty when they are.
  std::string incomplete;

  bool usable() const { return incomplete.empty(); }
  // Bytes held: what the memory cap counts.
  uint64_t bytes() const {
    return stream.size() + samples.size() * sizeof(Sample) +
           rounds.size() * sizeof(Round);
  }
};

}  // namespace runner::format::perf
