// Cursor over CFI bytes (report/ internal): the .eh_frame walk of cfi.cpp
// and the DWARF expressions of dwarf_expr.cpp read through it. The bytes are
// read by format::ByteReader (fixed-width little-endian, LEB128); only the
// DWARF pointer encodings live here.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <type_traits>

#include "format/format.hpp"

namespace runner::report::cfi_detail {

// Pointer encodings (LSB "DWARF Extensions", DW_EH_PE_*).
constexpr uint8_t kPeOmit = 0xff;
constexpr uint8_t kPeAbsptr = 0x00, kPeUleb128 = 0x01, kPeUdata2 = 0x02,
                  kPeUdata4 = 0x03, kPeUdata8 = 0x04, kPeSleb128 = 0x09,
                  kPeSdata2 = 0x0a, kPeSdata4 = 0x0b, kPeSdata8 = 0x0c;
constexpr uint8_t kPePcrel = 0x10, kPeDatarel = 0x30;
constexpr uint8_t kPeIndirect = 0x80;

// A format::ByteReader over [pos, end) of a section with section-relative
// addressing: `svma` is the address of byte 0, for pcrel pointers. Adds what
// is DWARF's own: the DW_EH_PE_* encoded pointers. Reads past `end` fail it.
class Cursor : public format::ByteReader {
 public:
  Cursor(std::span<const uint8_t> bytes, uint64_t svma, size_t pos = 0,
         size_t end = SIZE_MAX)
      : ByteReader(bytes.first(std::min(end, bytes.size()))),
        svma_(svma),
        end_(std::min(end, bytes.size())) {
    if (!seek(pos)) seek(end_);  // failed, and at its end
  }

  size_t end() const { return end_; }
  bool at_end() const { return remaining() == 0; }

  // Fixed-width little-endian integers of any integral type.
  template <typename T>
  T fixed() {
    static_assert(std::is_integral_v<T>);
    if constexpr (sizeof(T) == 1) {
      return static_cast<T>(u8());
    } else if constexpr (sizeof(T) == 2) {
      return static_cast<T>(u16());
    } else if constexpr (sizeof(T) == 4) {
      return static_cast<T>(u32());
    } else {
      static_assert(sizeof(T) == 8);
      return static_cast<T>(u64());
    }
  }

  // An encoded pointer; `datarel_base` is what DW_EH_PE_datarel is relative
  // to (the .eh_frame_hdr start for the hdr; unused in .eh_frame on x86_64).
  bool pointer(uint8_t enc, uint64_t datarel_base, uint64_t* out) {
    if (enc == kPeOmit) return false;
    const uint64_t field_svma = svma_ + pos();
    uint64_t v = 0;
    switch (enc & 0x0f) {
      case kPeAbsptr:
        v = fixed<uint64_t>();
        break;
      case kPeUleb128:
        v = uleb128();
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
        v = static_cast<uint64_t>(sleb128());
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
        fail();
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
        fail();
        return false;  // textrel/funcrel/aligned: unused
    }
    // Indirect pointers would need the module's memory; only personality
    // routines use them and those are skipped through the 'z' length.
    if (enc & kPeIndirect) return false;
    *out = v;
    return ok();
  }

 private:
  uint64_t svma_;
  size_t end_;
};

}  // namespace runner::report::cfi_detail
