// <key>.symbols.map text format (spec §4.2).
#include <charconv>

#include "symbols/symbols.hpp"

namespace runner::symbols {
namespace {

bool parse_hex(std::string_view text, uint64_t* out) {
  if (text.empty()) return false;
  auto [ptr, ec] =
      std::from_chars(text.data(), text.data() + text.size(), *out, 16);
  return ec == std::errc() && ptr == text.data() + text.size();
}

}  // namespace

std::string format_symbols_map(std::span<const Symbol> symbols) {
  std::string out;
  size_t estimate = 0;
  for (const Symbol& s : symbols) estimate += s.name.size() + 20;
  out.reserve(estimate);
  char buf[20];
  for (const Symbol& s : symbols) {
    auto r = std::to_chars(buf, buf + sizeof(buf), s.addr, 16);
    out.append(buf, r.ptr);
    out.push_back(' ');
    r = std::to_chars(buf, buf + sizeof(buf), s.size, 16);
    out.append(buf, r.ptr);
    out.push_back(' ');
    // One line per symbol whatever the ELF file names it: a line break in a
    // name would end the line early (and could forge another symbol's).
    for (char c : s.name) out.push_back(c == '\n' || c == '\r' ? '?' : c);
    out.push_back('\n');
  }
  return out;
}

base::Result<std::vector<Symbol>> parse_symbols_map(std::string_view text,
                                                    std::size_t* bad_lines) {
  std::vector<Symbol> out;
  size_t bad = 0, lines = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    ++lines;
    // "<addr> <size> <name>"; the name is the rest of the line and may hold
    // spaces (perf maps written by JITs do).
    size_t sp1 = line.find(' ');
    size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
    Symbol s;
    if (sp2 == std::string_view::npos ||
        !parse_hex(line.substr(0, sp1), &s.addr) ||
        !parse_hex(line.substr(sp1 + 1, sp2 - sp1 - 1), &s.size) ||
        sp2 + 1 >= line.size()) {
      ++bad;
      continue;
    }
    s.name = std::string(line.substr(sp2 + 1));
    out.push_back(std::move(s));
  }
  if (bad_lines != nullptr) *bad_lines = bad;
  if (lines > 0 && out.empty()) {
    return base::Error("symbols map: no valid line among " +
                       std::to_string(lines));
  }
  return out;
}

}  // namespace runner::symbols
