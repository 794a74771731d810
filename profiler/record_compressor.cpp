#include "profiler/record_compressor.hpp"

#include <zstd.h>

#include <algorithm>
#include <cstring>

#include "format/format.hpp"

namespace runner::profiler {
namespace {

namespace pf = format::perf;

base::Error zstd_error(const char* what, size_t code) {
  return base::Error(std::string(what) + ": " + ZSTD_getErrorName(code));
}

}  // namespace

void RecordCompressor::ContextDeleter::operator()(ZSTD_CCtx_s* context) const {
  ZSTD_freeCCtx(context);
}

RecordCompressor::RecordCompressor(RecordCompressor&&) noexcept = default;
RecordCompressor& RecordCompressor::operator=(RecordCompressor&&) noexcept =
    default;
RecordCompressor::~RecordCompressor() = default;

base::Result<RecordCompressor> RecordCompressor::create(int level,
                                                        size_t segment_limit) {
  if (level < kMinLevel || level > kMaxLevel)
    return base::Error("zstd level " + std::to_string(level) +
                       " is out of range 1..19");
  if (segment_limit == 0) return base::Error("zstd: empty segment limit");
  RecordCompressor out;
  out.context_.reset(ZSTD_createCCtx());
  if (!out.context_) return base::Error("zstd: cannot create a context");
  const size_t set = ZSTD_CCtx_setParameter(out.context_.get(),
                                            ZSTD_c_compressionLevel, level);
  if (ZSTD_isError(set)) return zstd_error("zstd level", set);
  out.level_ = level;
  out.segment_limit_ = segment_limit;
  out.stream_.resize(ZSTD_compressBound(segment_limit) + ZSTD_CStreamOutSize());
  return out;
}

base::Status RecordCompressor::add(std::span<const uint8_t> input) {
  while (!input.empty()) {
    const size_t step = std::min(input.size(), segment_limit_ - segment_input_);
    RUNNER_RETURN_IF_ERROR(compress(input.first(step), false), "compressing");
    segment_input_ += step;
    input_bytes_ += step;
    input = input.subspan(step);
    if (segment_input_ == segment_limit_)
      RUNNER_RETURN_IF_ERROR(flush(), "compressing");
  }
  return {};
}

base::Status RecordCompressor::flush() {
  if (segment_input_ == 0) return {};
  RUNNER_RETURN_IF_ERROR(compress({}, true), "flushing");
  frame_segment();
  segment_input_ = 0;
  return {};
}

base::Status RecordCompressor::compress(std::span<const uint8_t> input,
                                        bool flush) {
  ZSTD_inBuffer in{input.data(), input.size(), 0};
  const ZSTD_EndDirective mode = flush ? ZSTD_e_flush : ZSTD_e_continue;
  while (true) {
    // Room for at least one more block of output (the buffer is sized for a
    // whole segment at creation, so this rarely grows it).
    if (stream_.size() - stream_used_ < ZSTD_CStreamOutSize())
      stream_.resize(stream_used_ + 2 * ZSTD_CStreamOutSize());
    ZSTD_outBuffer out{stream_.data(), stream_.size(), stream_used_};
    const size_t left = ZSTD_compressStream2(context_.get(), &out, &in, mode);
    stream_used_ = out.pos;
    if (ZSTD_isError(left)) return zstd_error("zstd", left);
    // continue: done once the input is taken; flush: once nothing is left.
    if (flush ? left == 0 : in.pos == in.size) return {};
  }
}

void RecordCompressor::frame_segment() {
  std::span<const uint8_t> rest(stream_.data(), stream_used_);
  while (!rest.empty()) {
    const size_t n = std::min(rest.size(), pf::kMaxCompressedPayload);
    const perf_event_header h = pf::compressed_record_header(n);
    const auto* hb = reinterpret_cast<const uint8_t*>(&h);
    ready_.insert(ready_.end(), hb, hb + sizeof(h));
    ready_.insert(ready_.end(), rest.begin(), rest.begin() + n);
    output_bytes_ += sizeof(h) + n;
    rest = rest.subspan(n);
  }
  stream_used_ = 0;
}

}  // namespace runner::profiler
