#include "perfdata/record_inflater.hpp"

#include <linux/perf_event.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <string>

namespace runner::perfdata {
namespace {

namespace pf = format::perf;

constexpr size_t kHeaderSize = sizeof(perf_event_header);
// A partial record carried over is shorter than the largest record.
constexpr size_t kMaxCarry = 0xffff;

}  // namespace

void RecordInflater::ContextDeleter::operator()(ZSTD_DCtx_s* context) const {
  ZSTD_freeDCtx(context);
}

RecordInflater::RecordInflater() = default;
RecordInflater::RecordInflater(RecordInflater&&) noexcept = default;
RecordInflater& RecordInflater::operator=(RecordInflater&&) noexcept = default;
RecordInflater::~RecordInflater() = default;

void RecordInflater::configure(const pf::CompressedFeature& feature) {
  feature_ = feature;
}

// The context and buffer, at the first COMPRESSED record.
base::Status RecordInflater::prepare() {
  if (context_) return {};
  if (!feature_) return base::Error("no HEADER_COMPRESSED feature before it");
  if (feature_->type != pf::kCompressionZstd)
    return base::Error("compression type " + std::to_string(feature_->type) +
                       " is not zstd (1)");
  if (feature_->mmap_len == 0 || feature_->mmap_len > kMaxMmapLen)
    return base::Error("HEADER_COMPRESSED mmap_len " +
                       std::to_string(feature_->mmap_len) + " is not in 1.." +
                       std::to_string(kMaxMmapLen));
  context_.reset(ZSTD_createDCtx());
  if (!context_) return base::Error("zstd: cannot create a context");
  mmap_len_ = feature_->mmap_len;
  buf_size_ = kMaxCarry + mmap_len_ + 1;
  buf_.reset(new uint8_t[buf_size_]);
  return {};
}

// Moves the partial record left over to the start of the buffer.
void RecordInflater::compact() {
  if (begin_ > 0 && end_ > begin_)
    std::memmove(buf_.get(), buf_.get() + begin_, end_ - begin_);
  end_ -= begin_;
  begin_ = 0;
}

base::Status RecordInflater::inflate(std::span<const uint8_t> payload) {
  if (auto st = prepare(); !st) return st;
  compact();
  compressed_bytes_ += payload.size();
  const uint64_t budget = std::max(kMaxRatio * compressed_bytes_, kBudgetFloor);
  const uint64_t left = budget - std::min(budget, decompressed_bytes_);
  const bool bounded_by_budget = left < mmap_len_;
  const size_t limit =
      bounded_by_budget ? static_cast<size_t>(left) : mmap_len_;
  // One byte of room beyond the limit tells "exactly the limit" from "more".
  ZSTD_outBuffer out{buf_.get() + end_, limit + 1, 0};
  ZSTD_inBuffer in{payload.data(), payload.size(), 0};
  while (in.pos < in.size) {
    const size_t in_before = in.pos, out_before = out.pos;
    const size_t ret = ZSTD_decompressStream(context_.get(), &out, &in);
    if (ZSTD_isError(ret))
      return base::Error(std::string("corrupt zstd data: ") +
                         ZSTD_getErrorName(ret));
    if (out.pos > limit && bounded_by_budget)
      return base::Error("decodes past the budget of " +
                         std::to_string(budget) + " bytes (" +
                         std::to_string(kMaxRatio) + " times the " +
                         std::to_string(compressed_bytes_) +
                         " compressed bytes read so far, at least " +
                         std::to_string(kBudgetFloor) + "; " +
                         std::to_string(decompressed_bytes_) +
                         " decoded before this record): a decompression bomb?");
    if (out.pos > limit)
      return base::Error("decodes to more than the " +
                         std::to_string(mmap_len_) +
                         " bytes of HEADER_COMPRESSED mmap_len");
    if (in.pos == in_before && out.pos == out_before)
      return base::Error("zstd decoder made no progress");
  }
  end_ += out.pos;
  decompressed_bytes_ += out.pos;
  return {};
}

base::Result<std::span<const uint8_t>> RecordInflater::next_record() {
  if (end_ - begin_ < kHeaderSize) return std::span<const uint8_t>();
  perf_event_header h;
  std::memcpy(&h, buf_.get() + begin_, kHeaderSize);
  if (h.size < kHeaderSize)
    return base::Error("impossible record size " + std::to_string(h.size) +
                       " (type " + std::to_string(h.type) + ")");
  if (end_ - begin_ < h.size) return std::span<const uint8_t>();
  std::span<const uint8_t> record(buf_.get() + begin_, h.size);
  begin_ += h.size;
  return record;
}

}  // namespace runner::perfdata
