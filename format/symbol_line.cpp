#include "format/symbol_line.hpp"

#include <charconv>

namespace runner::format::detail {

std::optional<SymbolLine> split_symbol_line(std::string_view line,
                                            HexPrefix prefix) {
  size_t sp1 = line.find(' ');
  size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos) return std::nullopt;
  auto addr = parse_hex(line.substr(0, sp1), prefix);
  auto size = parse_hex(line.substr(sp1 + 1, sp2 - sp1 - 1), prefix);
  if (!addr || !size) return std::nullopt;
  return SymbolLine{*addr, *size, line.substr(sp2 + 1)};
}

void append_symbol_line(std::string& out, uint64_t addr, uint64_t size,
                        std::string_view name) {
  char buf[20];
  auto r = std::to_chars(buf, buf + sizeof(buf), addr, 16);
  out.append(buf, r.ptr);
  out.push_back(' ');
  r = std::to_chars(buf, buf + sizeof(buf), size, 16);
  out.append(buf, r.ptr);
  out.push_back(' ');
  for (char c : name) out.push_back(c == '\n' || c == '\r' ? '?' : c);
  out.push_back('\n');
}

}  // namespace runner::format::detail
