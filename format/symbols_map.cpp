#include "format/symbols_map.hpp"

#include "format/symbol_line.hpp"

namespace runner::format {

std::string format_symbols_map(std::span<const Symbol> symbols) {
  std::string out;
  size_t estimate = 0;
  for (const Symbol& s : symbols) estimate += s.name.size() + 20;
  out.reserve(estimate);
  for (const Symbol& s : symbols)
    detail::append_symbol_line(out, s.addr, s.size, s.name);
  return out;
}

base::Result<std::vector<Symbol>> parse_symbols_map(std::string_view text,
                                                    std::size_t* bad_lines) {
  std::vector<Symbol> out;
  size_t bad = 0, lines = 0;
  detail::for_each_line(text, [&](std::string_view line) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) return;
    ++lines;
    // The name is the rest of the line and may hold spaces (perf maps
    // written by JITs do), but not be empty.
    auto fields = detail::split_symbol_line(line, HexPrefix::kNone);
    if (!fields || fields->name.empty()) {
      ++bad;
      return;
    }
    out.push_back(
        Symbol{fields->addr, fields->size, std::string(fields->name), 0});
  });
  if (bad_lines != nullptr) *bad_lines = bad;
  if (lines > 0 && out.empty()) {
    return base::Error("symbols map: no valid line among " +
                       std::to_string(lines));
  }
  return out;
}

}  // namespace runner::format
