#include "format/perf_map.hpp"

#include <cinttypes>
#include <cstdio>

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

std::vector<TimedJitEntry> parse_jit_timeline(std::string_view text,
                                              std::size_t* bad_lines) {
  std::vector<TimedJitEntry> out;
  size_t bad = 0;
  detail::for_each_line(text, [&](std::string_view line) {
    auto range = detail::split_symbol_line(line, HexPrefix::kNone);
    auto times = range
                     ? detail::split_symbol_line(range->name, HexPrefix::kNone)
                     : std::nullopt;
    if (!times || times->size < times->addr) {
      if (!line.empty()) ++bad;
      return;
    }
    out.push_back({range->addr, range->size, times->addr, times->size,
                   std::string(times->name)});
  });
  if (bad_lines != nullptr) *bad_lines = bad;
  return out;
}

std::string format_jit_timeline(std::span<const TimedJitEntry> entries) {
  std::string out;
  for (const TimedJitEntry& e : entries) {
    char head[40];
    std::snprintf(head, sizeof(head), "%" PRIx64 " %" PRIx64 " ", e.start,
                  e.size);
    out += head;
    detail::append_symbol_line(out, e.from, e.to, e.name);
  }
  return out;
}

}  // namespace runner::format
