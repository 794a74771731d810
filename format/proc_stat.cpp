#include "format/proc_stat.hpp"

#include <algorithm>
#include <array>
#include <charconv>

namespace runner::format {
namespace {

// proc(5) numbers the fields from 1; field 3 (state) is the first after the
// command name.
constexpr size_t kFirstAfterComm = 3;
constexpr size_t kStartStack = 28;
constexpr size_t kArgStart = 48;
constexpr size_t kEnvEnd = 51;

bool parse_u64(std::string_view text, uint64_t* out) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  return ec == std::errc() && ptr == end;
}

}  // namespace

std::optional<ProcStackFields> parse_proc_stat_stack(std::string_view line) {
  const size_t paren = line.rfind(')');
  if (paren == std::string_view::npos) return std::nullopt;
  std::array<uint64_t, kEnvEnd + 1> fields{};
  size_t field = kFirstAfterComm;
  size_t pos = paren + 1;
  while (field <= kEnvEnd) {
    while (pos < line.size() && (line[pos] == ' ' || line[pos] == '\n')) ++pos;
    if (pos >= line.size()) break;
    size_t end = line.find_first_of(" \n", pos);
    if (end == std::string_view::npos) end = line.size();
    // Field 3 is the state letter; only the numbers we use are checked.
    if (field == kStartStack || field >= kArgStart) {
      if (!parse_u64(line.substr(pos, end - pos), &fields[field]))
        return std::nullopt;
    }
    ++field;
    pos = end;
  }
  if (field <= kStartStack) return std::nullopt;
  ProcStackFields out;
  out.start_stack = fields[kStartStack];
  out.arg_start = fields[kArgStart];
  out.arg_end = fields[kArgStart + 1];
  out.env_start = fields[kArgStart + 2];
  out.env_end = fields[kArgStart + 3];
  return out;
}

uint64_t initial_stack_floor(const ProcStackFields& fields) {
  if (fields.start_stack == 0) return 0;
  uint64_t floor = fields.start_stack;
  for (uint64_t start : {fields.arg_start, fields.env_start})
    if (start != 0) floor = std::min(floor, start);
  return floor;
}

}  // namespace runner::format
