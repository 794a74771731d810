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

// The shift stops growing past 63 so that no input length can wrap it.
uint64_t ByteReader::uleb128() {
  uint64_t result = 0;
  unsigned shift = 0;
  while (true) {
    const uint8_t b = u8();
    if (!ok_) return 0;
    if (shift < 64) {
      result |= static_cast<uint64_t>(b & 0x7f) << shift;
      shift += 7;
    }
    if ((b & 0x80) == 0) return result;
  }
}

int64_t ByteReader::sleb128() {
  uint64_t result = 0;
  unsigned shift = 0;
  uint8_t b = 0;
  do {
    b = u8();
    if (!ok_) return 0;
    if (shift < 64) {
      result |= static_cast<uint64_t>(b & 0x7f) << shift;
      shift += 7;
    }
  } while ((b & 0x80) != 0);
  if (shift < 64 && (b & 0x40) != 0) result |= ~uint64_t{0} << shift;
  return static_cast<int64_t>(result);
}

uint64_t ByteReader::le(size_t width) {
  if (!ok_ || remaining() < width) {
    ok_ = false;
    return 0;
  }
  uint64_t v = load_le(bytes_, pos_, width);
  pos_ += width;
  return v;
}

uint64_t load_le(std::span<const uint8_t> bytes, size_t at, size_t width) {
  if (at > bytes.size() || bytes.size() - at < width || width > 8) return 0;
  uint64_t v = 0;
  for (size_t i = 0; i < width; ++i)
    v |= static_cast<uint64_t>(bytes[at + i]) << (8 * i);
  return v;
}

}  // namespace runner::format
