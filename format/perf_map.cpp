#include "format/perf_map.hpp"

#include "format/symbol_line.hpp"

namespace runner::format {

std::vector<PerfMapEntry> parse_perf_map(std::string_view text,
                                         std::size_t* bad_lines) {
  std::vector<PerfMapEntry> out;
  size_t bad = 0;
  detail::for_each_line(text, [&](std::string_view line) {
    auto fields = detail::split_symbol_line(line, HexPrefix::kOptional);
    if (!fields) {
      if (!line.empty()) ++bad;
      return;
    }
    out.push_back({fields->addr, fields->size, std::string(fields->name)});
  });
  if (bad_lines != nullptr) *bad_lines = bad;
  return out;
}

std::string format_perf_map(std::span<const PerfMapEntry> entries) {
  std::string out;
  for (const PerfMapEntry& e : entries)
    detail::append_symbol_line(out, e.start, e.size, e.name);
  return out;
}

}  // namespace runner::format
