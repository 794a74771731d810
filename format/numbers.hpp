// Number fields of the text formats: one parser for hexadecimal and decimal
// integers, used by every format that spells numbers (/proc/<pid>/maps,
// .symbols.map, perf-<pid>.map, perf.metadata's debug-info ranges).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace runner::format {

// Which prefix a hexadecimal field may carry.
enum class HexPrefix {
  kNone,      // "7f00" only (the /proc and .symbols.map spelling)
  kOptional,  // "0x7f00" or "7f00" (perf maps, JSON strings)
};

// The whole of `text` as a hexadecimal uint64 (at most 16 digits, either
// case), or nullopt: empty, a sign, a space, a stray character or overflow.
std::optional<uint64_t> parse_hex(std::string_view text,
                                  HexPrefix prefix = HexPrefix::kNone);

// The whole of `text` as a decimal uint64, or nullopt (same rules).
std::optional<uint64_t> parse_dec(std::string_view text);

}  // namespace runner::format
