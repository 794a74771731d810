// <key>.symbols.map: the tolerant parser on any text; what it accepts must
// format to exactly one line per symbol, which parses back to the same
// addresses and sizes and formats the same again; and the report's symbol
// table must answer lookups inside and around every symbol.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "report/profile_folder.hpp"
#include "symbols/symbols.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = runner::format::parse_symbols_map(text);
  if (!parsed) return 0;
  const std::string formatted = runner::format::format_symbols_map(*parsed);
  auto again = runner::format::parse_symbols_map(formatted);
  if (!again || again->size() != parsed->size()) std::abort();
  for (size_t i = 0; i < parsed->size(); ++i) {
    const auto& a = (*parsed)[i];
    const auto& b = (*again)[i];
    if (a.addr != b.addr || a.size != b.size) std::abort();
  }
  if (runner::format::format_symbols_map(*again) != formatted) std::abort();
  runner::report::ModuleSymbols table(std::move(*parsed));
  for (const auto& s : table.entries()) {
    const auto* found = table.find(s.addr);
    if (found == nullptr) std::abort();
    (void)table.find(s.addr + s.size / 2);
    (void)table.find(s.addr - 1);
    (void)table.find(s.addr + s.size);
  }
  return 0;
}
