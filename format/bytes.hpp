// The one byte reader and byte writer of the binary formats (the FIFO wire
// protocol, bincode .unwind_data, perf.pipedata records, and under report/'s
// DWARF layer .eh_frame and DWARF expressions): fixed-width little-endian
// integers whatever the host and LEB128, every read bounds-checked.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

namespace runner::format {

// The `width` (<= 8) bytes at `at` as a little-endian integer, without a
// reader: for peeking at fields of a buffer that may still be incomplete.
// 0 when they are not all inside `bytes`. Inline, as every fixed-width read
// goes through it (the CFI walk of report/ reads byte by byte).
inline uint64_t load_le(std::span<const uint8_t> bytes, size_t at,
                        size_t width) {
  if (at > bytes.size() || bytes.size() - at < width || width > 8) return 0;
  uint64_t v = 0;
  if constexpr (std::endian::native == std::endian::little) {
    if (width == 8) {  // one load where the host agrees
      std::memcpy(&v, bytes.data() + at, sizeof(v));
      return v;
    }
  }
  for (size_t i = 0; i < width; ++i)
    v |= static_cast<uint64_t>(bytes[at + i]) << (8 * i);
  return v;
}

// Reads fixed-width little-endian fields from a byte range it does not own.
// A read past the end fails the reader for good and yields zeros (or an
// empty span), so a decoder may read a whole layout and check ok() once;
// counts read from the input are checked with fits() before allocating.
class ByteReader {
 public:
  explicit ByteReader(std::span<const uint8_t> bytes) : bytes_(bytes) {}
  ByteReader(const uint8_t* data, size_t size) : bytes_(data, size) {}

  uint8_t u8() { return static_cast<uint8_t>(le(1)); }
  uint16_t u16() { return static_cast<uint16_t>(le(2)); }
  uint32_t u32() { return static_cast<uint32_t>(le(4)); }
  uint64_t u64() { return le(8); }
  int32_t i32() { return static_cast<int32_t>(u32()); }

  // The next `n` bytes (empty and failed when fewer remain).
  std::span<const uint8_t> bytes(uint64_t n);
  // The same as a pointer, nullptr when they do not fit.
  const uint8_t* take(uint64_t n);
  bool skip(uint64_t n) { return take(n) != nullptr || (n == 0 && ok_); }
  // Whether `count` items of `item_size` bytes fit in what is left.
  bool fits(uint64_t count, uint64_t item_size) const {
    return ok_ && (item_size == 0 || count <= remaining() / item_size);
  }
  // Skips `count` items of `item_size` bytes (fails when they do not fit).
  bool skip_array(uint64_t count, uint64_t item_size);

  // LEB128 (DWARF: 7 bits a byte, low group first, bit 7 set on all but the
  // last byte; sleb128 sign-extends from bit 6 of the last byte). Groups past
  // bit 63 are dropped, so an overlong or too large value reads as its low
  // 64 bits; input ending before the last byte fails the reader and reads 0.
  // (Inline, like the fixed-width reads: the CFI walk is made of them. The
  // shift stops growing past 63 so that no input length can wrap it.)
  uint64_t uleb128() {
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
  int64_t sleb128() {
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

  // Moves to offset `pos` of the range (fails when it is past the end). A
  // failed reader stays failed wherever it is moved.
  bool seek(size_t pos) {
    if (pos > bytes_.size()) {
      ok_ = false;
      return false;
    }
    pos_ = pos;
    return ok_;
  }

  size_t remaining() const { return bytes_.size() - pos_; }
  size_t pos() const { return pos_; }
  bool ok() const { return ok_; }
  void fail() { ok_ = false; }

 private:
  uint64_t le(size_t width) {
    if (!ok_ || remaining() < width) {
      ok_ = false;
      return 0;
    }
    const uint64_t v = load_le(bytes_, pos_, width);
    pos_ += width;
    return v;
  }

  std::span<const uint8_t> bytes_;
  size_t pos_ = 0;
  bool ok_ = true;
};

// Appends fixed-width little-endian fields to a growing buffer it owns.
class ByteWriter {
 public:
  void u8(uint8_t v) { out_.push_back(v); }
  void u16(uint16_t v) { le(v, 2); }
  void u32(uint32_t v) { le(v, 4); }
  void u64(uint64_t v) { le(v, 8); }
  void i32(int32_t v) { le(static_cast<uint32_t>(v), 4); }
  void bytes(std::span<const uint8_t> data) {
    out_.insert(out_.end(), data.begin(), data.end());
  }
  void bytes(std::string_view text) {
    out_.insert(out_.end(), text.begin(), text.end());
  }
  void zeros(size_t n) { out_.resize(out_.size() + n, 0); }
  // Zero bytes up to the next multiple of `alignment`.
  void align(size_t alignment) {
    zeros((alignment - out_.size() % alignment) % alignment);
  }
  void reserve(size_t n) { out_.reserve(n); }

  size_t size() const { return out_.size(); }
  const std::vector<uint8_t>& view() const { return out_; }
  std::vector<uint8_t> take() { return std::move(out_); }

 private:
  void le(uint64_t v, int width) {
    for (int i = 0; i < width; ++i)
      out_.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  std::vector<uint8_t> out_;
};

}  // namespace runner::format
