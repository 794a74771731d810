// Hexadecimal text: the one place that writes bytes and numbers as hex
// digits (build ids, digests, random names, escapes such as \xHH or %HH).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace runner::base {

enum class HexCase { kLower, kUpper };

// Appends the two hex digits of `byte` to `out` ("0a", or "0A" in upper
// case).
void append_hex(std::string& out, uint8_t byte,
                HexCase letters = HexCase::kLower);

// `bytes` as hex, two lowercase digits a byte, in order: {0x7f, 0x00, 0x01}
// gives "7f0001", nothing gives "".
std::string to_hex(std::span<const uint8_t> bytes);

// `value` as hex without a prefix, left-padded with zeros to `min_digits`
// digits: hex_number(255) "ff", hex_number(255, 4) "00ff", hex_number(0) "0".
std::string hex_number(uint64_t value, size_t min_digits = 1,
                       HexCase letters = HexCase::kLower);

}  // namespace runner::base
