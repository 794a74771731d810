// FrameDecoder: turns an arbitrary split byte stream (u32 LE length +
// payload frames) back into frames. Frames larger than kMaxFrameSize are
// skipped without buffering them: their declared bytes are consumed as they
// arrive, so the stream stays in sync and memory stays bounded.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <variant>
#include <vector>

namespace runner::fifo {

inline constexpr uint32_t kMaxFrameSize = 1u << 20;  // 1 MiB

// Reported once per skipped frame, as soon as its header is seen.
struct OversizedFrame {
  uint32_t declared_size = 0;
};

// Either a complete payload or an "oversized frame skipped" event.
using Frame = std::variant<std::vector<uint8_t>, OversizedFrame>;

class FrameDecoder {
 public:
  void feed(std::span<const uint8_t> bytes);
  // Next complete frame in stream order, if any.
  std::optional<Frame> next();

  uint64_t oversized_frames() const { return oversized_frames_; }
  // Bytes of an unfinished frame (header or payload) held or being skipped.
  bool mid_frame() const {
    return header_have_ != 0 || in_payload_ || skip_remaining_ != 0;
  }

 private:
  uint8_t header_[4] = {};
  size_t header_have_ = 0;
  bool in_payload_ = false;
  uint32_t payload_size_ = 0;
  std::vector<uint8_t> payload_;
  uint64_t skip_remaining_ = 0;
  uint64_t oversized_frames_ = 0;
  std::deque<Frame> ready_;
};

}  // namespace runner::fifo
