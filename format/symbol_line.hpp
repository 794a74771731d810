// Internal to format/: the "<address> <size> <name>" line that
// .symbols.map and perf-<pid>.map share. Each reader applies its own rules on
// top (which hex prefix, whether the name may be empty).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "format/numbers.hpp"

namespace runner::format::detail {

struct SymbolLine {
  uint64_t addr = 0, size = 0;
  std::string_view name;  // the rest of the line, spaces included
};

// The two hex fields separated by single spaces and the name after the
// second space, or nullopt when a field is missing or not hexadecimal.
std::optional<SymbolLine> split_symbol_line(std::string_view line,
                                            HexPrefix prefix);

// Appends "<addr hex> <size hex> <name>\n" (lowercase hex without 0x; a
// '\n' or '\r' in the name is written as '?', so that a name can neither end
// its line early nor forge another one).
void append_symbol_line(std::string& out, uint64_t addr, uint64_t size,
                        std::string_view name);

// Calls `on_line` with each line of `text` (without its '\n').
template <typename OnLine>
void for_each_line(std::string_view text, OnLine&& on_line) {
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    on_line(line);
  }
}

}  // namespace runner::format::detail
