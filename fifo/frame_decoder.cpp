#include "fifo/frame_decoder.hpp"

#include <algorithm>

namespace runner::fifo {

void FrameDecoder::feed(std::span<const uint8_t> bytes) {
  while (!bytes.empty()) {
    if (skip_remaining_ != 0) {
      size_t n = static_cast<size_t>(
          std::min<uint64_t>(skip_remaining_, bytes.size()));
      skip_remaining_ -= n;
      bytes = bytes.subspan(n);
      continue;
    }
    if (!in_payload_) {
      size_t n = std::min(bytes.size(), sizeof(header_) - header_have_);
      std::copy_n(bytes.begin(), n, header_ + header_have_);
      header_have_ += n;
      bytes = bytes.subspan(n);
      if (header_have_ < sizeof(header_)) break;
      header_have_ = 0;
      uint32_t size = static_cast<uint32_t>(header_[0]) |
                      static_cast<uint32_t>(header_[1]) << 8 |
                      static_cast<uint32_t>(header_[2]) << 16 |
                      static_cast<uint32_t>(header_[3]) << 24;
      if (size > kMaxFrameSize) {
        ++oversized_frames_;
        skip_remaining_ = size;
        ready_.emplace_back(OversizedFrame{size});
        continue;
      }
      if (size == 0) {
        ready_.emplace_back(std::vector<uint8_t>{});
        continue;
      }
      in_payload_ = true;
      payload_size_ = size;
      payload_.clear();
      payload_.reserve(size);
      continue;
    }
    size_t n = std::min<size_t>(bytes.size(), payload_size_ - payload_.size());
    payload_.insert(payload_.end(), bytes.begin(), bytes.begin() + n);
    bytes = bytes.subspan(n);
    if (payload_.size() == payload_size_) {
      in_payload_ = false;
      ready_.emplace_back(std::move(payload_));
      payload_ = {};
    }
  }
}

std::optional<Frame> FrameDecoder::next() {
  if (ready_.empty()) return std::nullopt;
  Frame frame = std::move(ready_.front());
  ready_.pop_front();
  return frame;
}

}  // namespace runner::fifo
