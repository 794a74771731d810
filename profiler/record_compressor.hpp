// RecordCompressor: what `perf record -z` writes in place of kernel
// records. Record bytes go into one zstd stream (one context for the whole
// file, never ended); at each flush the stream's output so far is cut into
// PERF_RECORD_COMPRESSED records (format::perf, < 64 KiB each). A flush
// happens whenever `segment_limit` bytes went in since the last one, so no
// COMPRESSED record decodes to more than that: readers (perf among them)
// decode each into a buffer of the HEADER_COMPRESSED mmap_len.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/base.hpp"

struct ZSTD_CCtx_s;

namespace runner::profiler {

class RecordCompressor {
 public:
  // zstd levels 1..19.
  static constexpr int kMinLevel = 1, kMaxLevel = 19;

  static base::Result<RecordCompressor> create(int level, size_t segment_limit);
  RecordCompressor(RecordCompressor&&) noexcept;
  RecordCompressor& operator=(RecordCompressor&&) noexcept;
  ~RecordCompressor();

  // Compresses `input` (whole records or pieces of them, in file order).
  base::Status add(std::span<const uint8_t> input);
  // Ends the segment: what went in so far becomes decodable, framed as
  // COMPRESSED records in ready(). Nothing happens when nothing went in.
  base::Status flush();
  // COMPRESSED records to write, in order; clear_ready() once written.
  std::span<const uint8_t> ready() const { return ready_; }
  void clear_ready() { ready_.clear(); }

  int level() const { return level_; }
  uint64_t input_bytes() const { return input_bytes_; }
  // Bytes of COMPRESSED records produced (headers included).
  uint64_t output_bytes() const { return output_bytes_; }

 private:
  struct ContextDeleter {
    void operator()(ZSTD_CCtx_s* context) const;
  };
  RecordCompressor() = default;
  // Runs the stream over `input` with ZSTD_e_continue or ZSTD_e_flush.
  base::Status compress(std::span<const uint8_t> input, bool flush);
  // Cuts stream_ into COMPRESSED records appended to ready_.
  void frame_segment();

  std::unique_ptr<ZSTD_CCtx_s, ContextDeleter> context_;
  int level_ = 0;
  size_t segment_limit_ = 0;
  size_t segment_input_ = 0;  // bytes in since the last flush
  // zstd output of the current segment: its first stream_used_ bytes.
  std::vector<uint8_t> stream_;
  size_t stream_used_ = 0;
  std::vector<uint8_t> ready_;
  uint64_t input_bytes_ = 0, output_bytes_ = 0;
};

}  // namespace runner::profiler
