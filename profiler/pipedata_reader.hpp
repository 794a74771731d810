// Streaming reader of perf.data in pipe mode (our perf.pipedata and files
// written by `perf record -o -`). Reads records one at a time through a
// bounded buffer: memory does not grow with the file. Attr records are
// collected as they arrive and samples are decoded with the layout of the
// attr their identifier (PERF_SAMPLE_IDENTIFIER / ID) belongs to.
//
// A truncated or corrupt file never crashes the reader: next() returns an
// Error describing where the stream broke, and everything before it has
// already been delivered. A record whose inner sizes are inconsistent, or a
// sample of an unknown identifier, is skipped and counted (ReaderStats).
// HEADER_TRACING_DATA / AUXTRACE payloads are skipped; PERF_RECORD_COMPRESSED
// (perf record -z) is an Error.
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/result.hpp"

namespace runner::profiler {

struct EventAttr {
  perf_event_attr attr{};  // copied, zero-extended to sizeof(perf_event_attr)
  std::vector<uint64_t> ids;
  std::string name;  // from HEADER_EVENT_DESC when present, else ""
};

// Fields present in every record when sample_id_all is set (and in samples).
struct SampleId {
  uint32_t pid = 0, tid = 0;
  uint64_t time = 0;
  uint64_t id = 0;
  uint32_t cpu = 0;
};

struct SampleRecord {
  uint64_t id = 0;  // identifier (0 when the layout has none)
  uint64_t ip = 0;
  uint32_t pid = 0, tid = 0;
  uint64_t time = 0;
  uint32_t cpu = 0;
  uint64_t period = 0;
  uint64_t addr = 0, stream_id = 0;   // PERF_SAMPLE_ADDR / STREAM_ID
  uint64_t weight = 0, data_src = 0;  // PERF_SAMPLE_WEIGHT* / DATA_SRC
  uint16_t misc = 0;                // header misc (PERF_RECORD_MISC_USER, ...)
  std::vector<uint64_t> callchain;  // incl. PERF_CONTEXT_* markers
  uint64_t regs_abi = 0;            // PERF_SAMPLE_REGS_ABI_*, 0 = none
  uint64_t regs_mask = 0;           // attr.sample_regs_user
  std::vector<uint64_t> regs;       // one value per set bit of regs_mask
  std::vector<uint8_t> stack;       // the first dyn_size bytes of the copy
  uint64_t stack_size = 0;          // requested copy size (attr)
  const EventAttr* attr = nullptr;  // layout the sample was decoded with;
                                    // owned by the reader, valid while it
                                    // lives (later attrs do not move it)
};

struct Mmap2Record {  // PERF_RECORD_MMAP2 (and PERF_RECORD_MMAP, widened)
  uint32_t pid = 0, tid = 0;
  uint64_t addr = 0, len = 0, pgoff = 0;
  uint32_t maj = 0, min = 0;
  uint64_t ino = 0, ino_generation = 0;
  uint32_t prot = 0, flags = 0;  // PROT_EXEC etc. (MMAP: prot = PROT_EXEC
                                 // unless misc has PERF_RECORD_MISC_MMAP_DATA)
  bool has_build_id = false;     // PERF_RECORD_MISC_MMAP_BUILD_ID
  std::vector<uint8_t> build_id;
  std::string filename;
  SampleId sample_id;
};

struct CommRecord {
  uint32_t pid = 0, tid = 0;
  std::string comm;
  bool exec = false;  // PERF_RECORD_MISC_COMM_EXEC
  SampleId sample_id;
};

struct TaskRecord {  // PERF_RECORD_FORK / PERF_RECORD_EXIT
  bool is_exit = false;
  uint32_t pid = 0, ppid = 0, tid = 0, ptid = 0;
  uint64_t time = 0;
  SampleId sample_id;
};

struct LostRecord {  // PERF_RECORD_LOST
  uint64_t id = 0, lost = 0;
  SampleId sample_id;
};

enum class RecordKind {
  kSample,
  kMmap2,
  kComm,
  kTask,
  kLost,
  kFinishedRound,
  kAttr,     // a HEADER_ATTR was added to attrs()
  kFeature,  // HEADER_FEATURE (payload in `raw`)
  kOther,    // anything else, raw bytes in `raw`
};

struct Record {
  RecordKind kind = RecordKind::kOther;
  uint32_t type = 0;  // raw perf_event_header.type
  uint16_t misc = 0;
  SampleRecord sample;
  Mmap2Record mmap;
  CommRecord comm;
  TaskRecord task;
  LostRecord lost;
  std::vector<uint8_t> raw;  // whole record incl. header, for kOther/kFeature
};

struct ReaderStats {
  uint64_t records = 0, samples = 0, bytes = 0;
  uint64_t unknown_id_samples = 0;  // identifier not in any attr
  uint64_t malformed_records = 0;   // skipped: inconsistent size fields
  uint64_t dropped_features = 0;    // HEADER_FEATURE payloads not kept
                                    // (more than 256 in one file)
};

class PipeDataReader {
 public:
  // What open() accepts at the path (never a symlink): a regular file only
  // (a FIFO or device is refused at once, never blocked on), or also a FIFO
  // or other stream, read as it comes (open then waits for a writer).
  enum class Source { kRegularFile, kFileOrStream };
  // Opens `path` and checks the pipe header (PERFILE2, size 16). The file
  // must be in pipe mode; a perf.data file header is rejected clearly.
  static base::Result<PipeDataReader> open(
      const std::string& path, Source source = Source::kRegularFile);
  PipeDataReader(PipeDataReader&&) noexcept;
  PipeDataReader& operator=(PipeDataReader&&) noexcept;
  ~PipeDataReader();

  // The next record, std::nullopt at a clean end of file, or an Error for a
  // truncated/corrupt stream (the reader then stays at end of file).
  base::Result<std::optional<Record>> next();
  // The same into a caller-owned Record whose vectors are reused (no
  // allocation per record once they have grown): true when a record was
  // read, false at a clean end of file. Without copy_stack, samples leave
  // SampleRecord::stack empty and last_stack() is their stack copy instead.
  base::Result<bool> next_into(Record& record, bool copy_stack = true);
  // The stack copy of the sample last read, inside the reader's buffer:
  // valid until the next call to next()/next_into(); empty when the last
  // record was not a sample with a stack.
  std::span<const uint8_t> last_stack() const;

  const std::vector<EventAttr>& attrs() const;
  // The attr an identifier belongs to, or nullptr.
  const EventAttr* attr_for_id(uint64_t id) const;
  const ReaderStats& stats() const;
  // Raw payloads of HEADER_FEATURE records seen so far, by feature id.
  const std::vector<std::pair<uint64_t, std::vector<uint8_t>>>& features()
      const;

 private:
  struct Impl;
  explicit PipeDataReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace runner::profiler
