#include "format/bytes.hpp"

namespace runner::format {

std::span<const uint8_t> ByteReader::bytes(uint64_t n) {
  if (!ok_ || n > remaining()) {
    ok_ = false;
    return {};
  }
  std::span<const uint8_t> out = bytes_.subspan(pos_, static_cast<size_t>(n));
  pos_ += static_cast<size_t>(n);
  return out;
}

const uint8_t* ByteReader::take(uint64_t n) {
  if (!ok_ || n > remaining()) {
    ok_ = false;
    return nullptr;
  }
  const uint8_t* p = bytes_.data() + pos_;
  pos_ += static_cast<size_t>(n);
  return p;
}

bool ByteReader::skip_array(uint64_t count, uint64_t item_size) {
  if (!fits(count, item_size)) {
    ok_ = false;
    return false;
  }
  pos_ += static_cast<size_t>(count * item_size);
  return true;
}

}  // namespace runner::format
