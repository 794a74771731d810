// Hex digits of bytes and numbers (see hex.hpp).
#include "base/hex.hpp"

namespace runner::base {
namespace {

char hex_digit(unsigned nibble, HexCase letters) {
  static constexpr char kLower[] = "0123456789abcdef";
  static constexpr char kUpper[] = "0123456789ABCDEF";
  return (letters == HexCase::kUpper ? kUpper : kLower)[nibble & 0xf];
}

}  // namespace

void append_hex(std::string& out, uint8_t byte, HexCase letters) {
  out += hex_digit(byte >> 4, letters);
  out += hex_digit(byte, letters);
}

std::string to_hex(std::span<const uint8_t> bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const uint8_t b : bytes) append_hex(out, b);
  return out;
}

std::string hex_number(uint64_t value, size_t min_digits, HexCase letters) {
  std::string out;
  do {
    out += hex_digit(static_cast<unsigned>(value & 0xf), letters);
    value >>= 4;
  } while (value != 0);
  if (out.size() < min_digits) out.append(min_digits - out.size(), '0');
  return {out.rbegin(), out.rend()};
}

}  // namespace runner::base
