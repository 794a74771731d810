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
// HEADER_TRACING_DATA / AUXTRACE payloads are skipped. PERF_RECORD_COMPRESSED
// (perf record -z, runner --compress) is read transparently: the records
// decoded from it are delivered like the file's own, and a corrupt or
// truncated compressed stream, or one that decodes to more than 2048 times
// its compressed size (a decompression bomb: RecordInflater's budget), is
// an Error naming the record's offset, after every record decoded before.
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/base.hpp"
#include "format/format.hpp"

namespace runner::perfdata {

// The decoded records are format/'s perf.pipedata layouts.
using format::perf::CommRecord;
using format::perf::EventAttr;
using format::perf::LostRecord;
using format::perf::Mmap2Record;
using format::perf::SampleId;
using format::perf::SampleRecord;
using format::perf::TaskRecord;

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
  // PERF_RECORD_COMPRESSED records read (each also counts in `records`,
  // as do the records decoded from them), the bytes they decoded to, and
  // the bytes that could not be decoded (a corrupt record's payload, a
  // partial record at the end).
  uint64_t compressed_records = 0, decompressed_bytes = 0;
  uint64_t undecoded_compressed_bytes = 0;
};

class PipedataReader {
 public:
  // What open() accepts at the path (never a symlink): a regular file only
  // (a FIFO or device is refused at once, never blocked on), or also a FIFO
  // or other stream, read as it comes (open then waits for a writer).
  enum class Source { kRegularFile, kFileOrStream };
  // Opens `path` and checks the pipe header (PERFILE2, size 16). The file
  // must be in pipe mode; a perf.data file header is rejected clearly.
  static base::Result<PipedataReader> open(
      const std::string& path, Source source = Source::kRegularFile);
  // Reads a pipe stream held in memory (`name` stands for it in errors);
  // the bytes must outlive the reader.
  static base::Result<PipedataReader> open_memory(
      std::span<const uint8_t> stream, const std::string& name);
  PipedataReader(PipedataReader&&) noexcept;
  PipedataReader& operator=(PipedataReader&&) noexcept;
  ~PipedataReader();

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
  // What keeps last_stack() valid past the next call: a regular file's
  // mapped window, shared (the reader maps a new one and lets this go).
  // nullptr when the stack copy lies in a buffer the reader reuses (a FIFO
  // or other stream, a record decoded out of PERF_RECORD_COMPRESSED): copy
  // it then.
  std::shared_ptr<const void> last_stack_owner() const;

  // Where the record last delivered starts in the file (for one decoded
  // out of PERF_RECORD_COMPRESSED: where that COMPRESSED record starts).
  uint64_t record_offset() const;

  const std::vector<EventAttr>& attrs() const;
  // The attr an identifier belongs to, or nullptr.
  const EventAttr* attr_for_id(uint64_t id) const;
  const ReaderStats& stats() const;
  // Raw payloads of HEADER_FEATURE records seen so far, by feature id.
  const std::vector<std::pair<uint64_t, std::vector<uint8_t>>>& features()
      const;

 private:
  struct Impl;
  explicit PipedataReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace runner::perfdata
