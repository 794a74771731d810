// RecordInflater: the reading side of PERF_RECORD_COMPRESSED (perf record
// -z, runner --compress). Every COMPRESSED record of a file continues one
// zstd stream; each one's output is appended to what the last one left (a
// record may be split across two) and the whole records in it are handed
// out in order. Memory is bounded: a COMPRESSED record may decode to at most
// the HEADER_COMPRESSED mmap_len (as in perf, which decodes each into a
// buffer of that size), itself at most kMaxMmapLen; more is an Error, as is
// a corrupt stream, never a crash or a hang. Time is bounded by the file's
// size: all COMPRESSED records together decode to at most kMaxRatio times
// their compressed bytes (kBudgetFloor at least); past that the stream is a
// decompression bomb (zstd can reach 10,000:1), an Error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "base/base.hpp"
#include "format/format.hpp"

struct ZSTD_DCtx_s;

namespace runner::perfdata {

class RecordInflater {
 public:
  // perf's mmap_len is its ring buffer plus a page: -m 64M at most here.
  static constexpr size_t kMaxMmapLen = (size_t{64} << 20) + 4096;
  // Real profiles decode to 14..210 times their compressed bytes with 8 KiB
  // stack copies (fp to dwarf, zstd levels 1 to 19), and up to 630 times
  // with 64 KiB stack copies of a shallow stack at level 19: 2048 leaves
  // room above those. The floor lets a short file hold one whole mmap_len.
  static constexpr uint64_t kMaxRatio = 2048;
  static constexpr uint64_t kBudgetFloor = kMaxMmapLen;

  RecordInflater();
  RecordInflater(RecordInflater&&) noexcept;
  RecordInflater& operator=(RecordInflater&&) noexcept;
  ~RecordInflater();

  // The HEADER_COMPRESSED feature; checked at the first inflate().
  void configure(const format::perf::CompressedFeature& feature);
  // Decodes the payload of one COMPRESSED record after the bytes left over.
  // The Error says why (no or unsupported HEADER_COMPRESSED, corrupt zstd
  // data, more output than mmap_len or than the budget), without the
  // record's offset; nothing of the record is then handed out.
  base::Status inflate(std::span<const uint8_t> payload);
  // The next whole record decoded (header included, valid until the next
  // inflate()); an empty span when the rest, if any, is a partial record;
  // an Error for a header whose size is impossible.
  base::Result<std::span<const uint8_t>> next_record();
  // Decoded bytes not handed out yet (a partial record).
  size_t pending() const { return end_ - begin_; }
  uint64_t decompressed_bytes() const { return decompressed_bytes_; }
  // The payload bytes of every COMPRESSED record given to inflate().
  uint64_t compressed_bytes() const { return compressed_bytes_; }

 private:
  struct ContextDeleter {
    void operator()(ZSTD_DCtx_s* context) const;
  };
  base::Status prepare();
  void compact();

  std::optional<format::perf::CompressedFeature> feature_;
  std::unique_ptr<ZSTD_DCtx_s, ContextDeleter> context_;
  std::unique_ptr<uint8_t[]> buf_;  // a partial record + mmap_len + 1
  size_t buf_size_ = 0, mmap_len_ = 0;
  size_t begin_ = 0, end_ = 0;  // decoded bytes not handed out
  uint64_t decompressed_bytes_ = 0, compressed_bytes_ = 0;
};

}  // namespace runner::perfdata
