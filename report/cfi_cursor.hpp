// Cursor over CFI bytes (report/ internal): the .eh_frame walk of cfi.cpp
// and the DWARF expressions of dwarf_expr.cpp read through it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>

namespace runner::report::cfi_detail {

// Pointer encodings (LSB "DWARF Extensions", DW_EH_PE_*).
constexpr uint8_t kPeOmit = 0xff;
constexpr uint8_t kPeAbsptr = 0x00, kPeUleb128 = 0x01, kPeUdata2 = 0x02,
                  kPeUdata4 = 0x03, kPeUdata8 = 0x04, kPeSleb128 = 0x09,
                  kPeSdata2 = 0x0a, kPeSdata4 = 0x0b, kPeSdata8 = 0x0c;
constexpr uint8_t kPePcrel = 0x10, kPeDatarel = 0x30;
constexpr uint8_t kPeIndirect = 0x80;

// Cursor over a byte range with section-relative addressing: `svma` is the
// address of byte 0, for pcrel pointers. Reads past the end fail the cursor.
class Cursor {
 public:
  Cursor(std::span<const uint8_t> bytes, uint64_t svma, size_t pos = 0,
         size_t end = SIZE_MAX)
      : bytes_(bytes),
        svma_(svma),
        pos_(pos),
        end_(std::min(end, bytes.size())) {
    if (pos_ > end_) ok_ = false;
  }

  bool ok() const { return ok_; }
  size_t pos() const { return pos_; }
  size_t end() const { return end_; }
  bool at_end() const { return pos_ >= end_; }
  void seek(size_t pos) {
    if (pos > end_)
      ok_ = false;
    else
      pos_ = pos;
  }

  template <typename T>
  T fixed() {
    T v{};
    if (!ok_ || end_ - pos_ < sizeof(T)) {
      ok_ = false;
      return v;
    }
    std::memcpy(&v, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  uint8_t u8() { return fixed<uint8_t>(); }
  uint64_t uleb() {
    uint64_t result = 0;
    unsigned shift = 0;
    while (true) {
      uint8_t b = u8();
      if (!ok_) return 0;
      if (shift < 64) result |= static_cast<uint64_t>(b & 0x7f) << shift;
      shift += 7;
      if ((b & 0x80) == 0) break;
    }
    return result;
  }
  int64_t sleb() {
    uint64_t result = 0;
    unsigned shift = 0;
    uint8_t b = 0;
    do {
      b = u8();
      if (!ok_) return 0;
      if (shift < 64) result |= static_cast<uint64_t>(b & 0x7f) << shift;
      shift += 7;
    } while (b & 0x80);
    if (shift < 64 && (b & 0x40)) result |= ~uint64_t{0} << shift;
    return static_cast<int64_t>(result);
  }
  // An encoded pointer; `datarel_base` is what DW_EH_PE_datarel is relative
  // to (the .eh_frame_hdr start for the hdr; unused in .eh_frame on x86_64).
  bool pointer(uint8_t enc, uint64_t datarel_base, uint64_t* out) {
    if (enc == kPeOmit) return false;
    const uint64_t field_svma = svma_ + pos_;
    uint64_t v = 0;
    switch (enc & 0x0f) {
      case kPeAbsptr:
        v = fixed<uint64_t>();
        break;
      case kPeUleb128:
        v = uleb();
        break;
      case kPeUdata2:
        v = fixed<uint16_t>();
        break;
      case kPeUdata4:
        v = fixed<uint32_t>();
        break;
      case kPeUdata8:
        v = fixed<uint64_t>();
        break;
      case kPeSleb128:
        v = static_cast<uint64_t>(sleb());
        break;
      case kPeSdata2:
        v = static_cast<uint64_t>(int64_t{fixed<int16_t>()});
        break;
      case kPeSdata4:
        v = static_cast<uint64_t>(int64_t{fixed<int32_t>()});
        break;
      case kPeSdata8:
        v = fixed<uint64_t>();
        break;
      default:
        ok_ = false;
        return false;
    }
    switch (enc & 0x70) {
      case 0:
        break;
      case kPePcrel:
        v += field_svma;
        break;
      case kPeDatarel:
        v += datarel_base;
        break;
      default:
        ok_ = false;
        return false;  // textrel/funcrel/aligned: unused
    }
    // Indirect pointers would need the module's memory; only personality
    // routines use them and those are skipped through the 'z' length.
    if (enc & kPeIndirect) return false;
    *out = v;
    return ok_;
  }

 private:
  std::span<const uint8_t> bytes_;
  uint64_t svma_;
  size_t pos_;
  size_t end_;
  bool ok_ = true;
};

}  // namespace runner::report::cfi_detail
