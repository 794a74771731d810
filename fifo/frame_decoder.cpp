#include "fifo/frame_decoder.hpp"

#include <algorithm>

#include "fifo/codec.hpp"
#include "format/format.hpp"

namespace runner::fifo {
namespace {

enum class Candidate { kImplausible, kIncomplete, kComplete };

uint64_t le(std::span<const uint8_t> b, size_t at, size_t n) {
  return format::load_le(b, at, n);
}

// Payload lengths a command can have: unit commands 4, the mode response 8,
// SetVersion 12, AddMarker 20, CurrentBenchmark >= 16, SetIntegration >= 20.
bool possible_length(uint64_t len) {
  return len == 4 || len == 8 || len == 12 ||
         (len >= 16 && len <= kMaxFrameSize);
}

// Checks the fields that fix the frame's shape, as far as `b` reaches.
bool consistent(std::span<const uint8_t> b, uint64_t len, uint64_t tag) {
  switch (tag) {
    case 1:  // StartBenchmark
    case 2:  // StopBenchmark
    case 3:  // Ack
    case 4:  // PingPerf
    case 6:  // Err
    case 9:  // GetIntegrationMode
      return len == 4;
    case 10:  // IntegrationModeResponse(mode)
      return len == 8 && (b.size() < 12 || le(b, 8, 4) <= 2);
    case 8:  // SetVersion(u64)
      return len == 12;
    case 7:  // AddMarker{pid, marker type, timestamp}
      return len == 20 && (b.size() < 16 || le(b, 12, 4) <= 3);
    case 0:  // CurrentBenchmark{pid, uri}
      return len >= 16 && (b.size() < 20 || le(b, 12, 8) == len - 16);
    case 5: {  // SetIntegration{name, version}
      if (len < 20) return false;
      if (b.size() < 16) return true;
      uint64_t name = le(b, 8, 8);
      if (name > len - 20) return false;
      size_t version_at = 16 + static_cast<size_t>(name);
      return b.size() < version_at + 8 ||
             le(b, version_at, 8) == len - 20 - name;
    }
    default:
      return false;
  }
}

// Judges the bytes at a candidate frame start. `frame_size` (length prefix
// included) is set when the frame is complete.
Candidate check(std::span<const uint8_t> b, size_t& frame_size) {
  if (b.size() < 4) return Candidate::kIncomplete;
  uint64_t len = le(b, 0, 4);
  if (!possible_length(len)) return Candidate::kImplausible;
  if (b.size() < 8) return Candidate::kIncomplete;
  if (!consistent(b, len, le(b, 4, 4))) return Candidate::kImplausible;
  size_t size = 4 + static_cast<size_t>(len);
  if (b.size() < size) return Candidate::kIncomplete;
  // A small frame is one atomic write of one client: if it does not decode,
  // it is not a frame, and a real one may start inside it.
  if (size <= kAtomicFrameSize && !decode_payload(b.subspan(4, size - 4)))
    return Candidate::kImplausible;
  frame_size = size;
  return Candidate::kComplete;
}

// Whether bytes that follow an emptied FIFO begin a new frame rather than
// continue the held one. The continuation of a frame whose length was
// written alone is its whole payload, whose u32 tag read as a length is
// never plausible except 4 (PingPerf): a lone `04 00 00 00` continues.
bool starts_new_frame(std::span<const uint8_t> bytes) {
  if (bytes.size() < 4) return false;
  if (bytes.size() < 8 && le(bytes, 0, 4) == 4) return false;
  size_t ignored = 0;
  return check(bytes, ignored) != Candidate::kImplausible;
}

}  // namespace

void FrameDecoder::feed(std::span<const uint8_t> bytes) {
  if (bytes.empty()) return;
  if (stranded_ && mid_frame() && starts_new_frame(bytes)) {
    // After an emptied FIFO, new writes start at the start of these bytes:
    // a plausible frame there is a new client, not the rest of ours.
    if (!scanning_) ++truncated_frames_;
    discard(buffer_.size() - pos_);
    scanning_ = false;
  }
  stranded_ = false;
  buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
  parse();
}

void FrameDecoder::pipe_drained() {
  if (!mid_frame()) return;
  find_complete_frame_ahead();
  stranded_ = mid_frame();
}

std::optional<Frame> FrameDecoder::next() {
  if (ready_.empty()) return std::nullopt;
  Frame frame = std::move(ready_.front());
  ready_.pop_front();
  return frame;
}

void FrameDecoder::parse() {
  while (pos_ < buffer_.size()) {
    std::span<const uint8_t> rest(buffer_.data() + pos_, buffer_.size() - pos_);
    size_t size = 0;
    Candidate c = check(rest, size);
    if (c == Candidate::kIncomplete) break;
    if (c == Candidate::kComplete) {
      ready_.emplace_back(
          std::vector<uint8_t>(rest.begin() + 4, rest.begin() + size));
      pos_ += size;
      scanning_ = false;
      continue;
    }
    if (!scanning_) {
      scanning_ = true;
      ++resyncs_;
      if (le(rest, 0, 4) > kMaxFrameSize) ++oversized_frames_;
    }
    discard(1);
  }
  compact();
}

// The held frame cannot be completed by an atomic write: if a complete frame
// already follows inside the held bytes, the held part was cut short (its
// writer died) and the frame after it belongs to someone else.
bool FrameDecoder::find_complete_frame_ahead() {
  size_t k = std::max(pos_ + 1, lookahead_from_);
  size_t first_incomplete = 0;
  for (; k + 8 <= buffer_.size(); ++k) {
    size_t size = 0;
    Candidate c = check(
        std::span<const uint8_t>(buffer_.data() + k, buffer_.size() - k), size);
    if (c == Candidate::kComplete) {
      if (!scanning_) ++truncated_frames_;
      discard(k - pos_);
      scanning_ = false;
      lookahead_from_ = 0;
      parse();
      return true;
    }
    if (c == Candidate::kIncomplete && first_incomplete == 0)
      first_incomplete = k;
  }
  // Implausible candidates stay implausible: resume after them next time.
  lookahead_from_ = first_incomplete != 0 ? first_incomplete : k;
  return false;
}

void FrameDecoder::discard(size_t n) {
  pos_ += n;
  discarded_bytes_ += n;
}

void FrameDecoder::compact() {
  if (pos_ == buffer_.size()) {
    buffer_.clear();
    pos_ = 0;
    lookahead_from_ = 0;
    return;
  }
  if (pos_ >= 4096 && pos_ * 2 >= buffer_.size()) {
    buffer_.erase(buffer_.begin(),
                  buffer_.begin() + static_cast<std::ptrdiff_t>(pos_));
    lookahead_from_ = lookahead_from_ > pos_ ? lookahead_from_ - pos_ : 0;
    pos_ = 0;
  }
}

}  // namespace runner::fifo
