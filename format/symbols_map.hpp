// <key>.symbols.map (docs/formats.md, "Symbols maps"): the symbols of one
// module, one "<addr hex> <size hex> <name>" line each, written by symbols/
// and read by report/. Addresses are raw ELF addresses (SVMA).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/base.hpp"

namespace runner::format {

struct Symbol {
  uint64_t addr = 0, size = 0;
  std::string name;
  // STB_* binding while extracting (not written to .symbols.map): orders
  // aliases at one address the way perf picks among them.
  uint8_t binding = 0;
};

// "<addr hex> <size hex> <name>\n" per symbol, lowercase hex without 0x
// ('\n' and '\r' in a name are written as '?').
std::string format_symbols_map(std::span<const Symbol> symbols);
// Tolerant reader of the format above: malformed lines are skipped and
// counted in *bad_lines (when given). Errors only when there are lines but
// none of them is valid.
base::Result<std::vector<Symbol>> parse_symbols_map(
    std::string_view text, std::size_t* bad_lines = nullptr);

}  // namespace runner::format
