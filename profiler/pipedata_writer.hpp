// PipedataWriter: writes perf's pipe format (what `perf record -o -` emits)
// to a file: the 16-byte pipe header, HEADER_ATTR and HEADER_FEATURE
// records, then kernel records copied verbatim, with FINISHED_ROUND markers.
// Output is buffered. The first write error (ENOSPC, EIO, ...) is kept and
// everything after it is dropped but counted, so the caller can keep
// draining the kernel buffers and still finish cleanly.
#pragma once

#include <linux/perf_event.h>
#include <sys/uio.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/base.hpp"
#include "format/format.hpp"
#include "profiler/record_compressor.hpp"

namespace runner::profiler {

// HEADER_FEATURE payloads are built with format's perf layouts.
using format::perf::FeatureBuilder;

class PipedataWriter {
 public:
  static constexpr size_t kDefaultBufferSize = 1 << 20;
  // With compression: the mmap_len HEADER_COMPRESSED advertises (each
  // COMPRESSED record decodes to at most this) and the record bytes per
  // zstd flush, half of it so that a reader's buffer is never the limit.
  static constexpr uint32_t kCompressedMmapLen = 1 << 20;
  static constexpr size_t kCompressSegment = kCompressedMmapLen / 2;
  // Blocks of a regular file are reserved (fallocate, the size unchanged)
  // ahead of the writes, in steps of what was written so far within these
  // bounds, while the filesystem has kReserveRoom steps free: ext4 then
  // skips its per-page delayed allocation, a third of a write's CPU. The
  // rest is released at close(); a refusal (no support, no space) ends it.
  static constexpr uint64_t kMinReserve = 4 << 20, kMaxReserve = 64 << 20;
  static constexpr uint64_t kReserveRoom = 8;

  PipedataWriter() = default;
  ~PipedataWriter();
  PipedataWriter(PipedataWriter&&) = default;
  PipedataWriter& operator=(PipedataWriter&&) = default;

  // Creates `path` afresh (base::create_file: a symlink or old file at the
  // name is replaced, never followed).
  static base::Result<PipedataWriter> create(
      const std::string& path, size_t buffer_size = kDefaultBufferSize);
  // Opens an existing file to add records at its end: only a regular file
  // owned by us with one link (the one create() made).
  static base::Result<PipedataWriter> append(const std::string& path);
  // Writes to an fd the caller opened; `path` names it in errors.
  static base::Result<PipedataWriter> from_fd(base::UniqueFd fd,
                                              const std::string& path,
                                              size_t buffer_size);

  void write_pipe_header();
  // From now on write_records() compresses what it copies (perf record -z):
  // writes the HEADER_COMPRESSED feature, so call it after the attrs and
  // before any record. Other writes stay uncompressed, after a flush of the
  // stream so that the file keeps their order.
  base::Status enable_compression(int level);
  // attr is written as format::perf::kAttrSize bytes with attr.size set to it.
  void write_attr(const perf_event_attr& attr, std::span<const uint64_t> ids);
  void write_feature(format::perf::FeatureId id,
                     std::span<const uint8_t> payload);
  void write_finished_round();
  // PERF_RECORD_HEADER_BUILD_ID: the GNU build-id of a user-space file (what
  // `perf buildid-list` lists).
  void write_build_id(std::span<const uint8_t> build_id,
                      const std::string& filename);
  void write_bytes(const void* data, size_t size);
  // One whole record, as format::perf encodes it.
  void write_record(const std::vector<uint8_t>& record);
  // Complete records lying in one or two pieces (a ring buffer's run of
  // records): small runs are buffered, large ones are written straight from
  // the caller's memory (after the buffer) to save a copy.
  void write_records(std::span<const uint8_t> first,
                     std::span<const uint8_t> second);
  // The same for records that lie in any number of pieces (a ring buffer's
  // run with some records rewritten), in file order.
  void write_records(std::span<const std::span<const uint8_t>> pieces);

  // Writes out the buffer (no fsync).
  void flush();
  // Flushes and closes; returns the first write error, if any.
  base::Status close();

  bool failed() const { return failed_; }
  // strerror text with the errno name context, e.g. "write: No space left".
  const std::string& error() const { return error_; }
  int error_code() const { return error_code_; }
  uint64_t bytes_written() const { return bytes_written_; }
  uint64_t bytes_dropped() const { return bytes_dropped_; }
  // Compression: 0 when off; record bytes that went into the stream and
  // bytes of COMPRESSED records that came out (headers included).
  int compression_level() const;
  uint64_t uncompressed_bytes() const;
  uint64_t compressed_bytes() const;

 private:
  void fail(int code, const std::string& what);
  // A compression error: the output stops there, like a write error.
  void fail_compression(const base::Error& error);
  // Buffers bytes as they are (write_bytes() minus the stream flush).
  void put(const void* data, size_t size);
  // Ends the compressed segment and writes its COMPRESSED records.
  void flush_compressor();
  void write_compressed(std::span<const std::span<const uint8_t>> pieces);
  // writev() of `count` pieces until done or failed.
  void write_through(::iovec* pieces, int count);
  // Reserves the file's blocks ahead of a write of `size` bytes (see
  // kMinReserve); releases what is left of them.
  void reserve_ahead(size_t size);
  void release_reserve();

  base::UniqueFd fd_;
  std::string path_;
  std::vector<uint8_t> buffer_;
  size_t used_ = 0;
  bool failed_ = false;
  int error_code_ = 0;
  std::string error_;
  uint64_t bytes_written_ = 0;
  uint64_t bytes_dropped_ = 0;
  std::unique_ptr<RecordCompressor> compressor_;
  std::vector<::iovec> iovecs_;  // write_records' pieces, reused
  // A regular file's blocks reserved up to `reserved_` (its size unchanged)
  // while `reserving_`; `start_` is its size when opened.
  bool reserving_ = false;
  uint64_t start_ = 0, reserved_ = 0;
};

}  // namespace runner::profiler
