#include "format/proc_maps.hpp"

#include <cstdio>

#include "format/numbers.hpp"
#include "format/symbol_line.hpp"

namespace runner::format {
namespace {

constexpr std::string_view kDeletedSuffix = " (deleted)";

// Splits off the next space-separated token; `rest` keeps what follows the
// separating spaces.
std::string_view next_token(std::string_view* rest) {
  size_t begin = rest->find_first_not_of(' ');
  if (begin == std::string_view::npos) {
    *rest = {};
    return {};
  }
  size_t end = rest->find(' ', begin);
  std::string_view token = rest->substr(begin, end - begin);
  *rest =
      end == std::string_view::npos ? std::string_view() : rest->substr(end);
  return token;
}

// "a-b" or "a:b", both hexadecimal.
bool parse_hex_pair(std::string_view text, char separator, uint64_t* first,
                    uint64_t* second) {
  size_t at = text.find(separator);
  if (at == std::string_view::npos) return false;
  auto a = parse_hex(text.substr(0, at));
  auto b = parse_hex(text.substr(at + 1));
  if (!a || !b) return false;
  *first = *a;
  *second = *b;
  return true;
}

enum class LineKind {
  kMapping,
  kNotExecutable,
  kAnonymous,
  kPseudo,
  kMalformed
};

LineKind classify(std::optional<MapsLine> line, ProcMapping* m) {
  if (!line) return LineKind::kMalformed;
  m->start = line->start;
  m->end = line->end;
  m->offset = line->offset;
  m->dev_major = line->dev_major;
  m->dev_minor = line->dev_minor;
  m->inode = line->inode;
  m->perms = std::move(line->perms);
  if (m->perms.find('x') == std::string::npos) return LineKind::kNotExecutable;
  std::string_view path = line->path;
  if (path.empty()) return LineKind::kAnonymous;
  if (path.front() != '/') return LineKind::kPseudo;
  if (path.size() > kDeletedSuffix.size() && path.ends_with(kDeletedSuffix)) {
    path.remove_suffix(kDeletedSuffix.size());
    m->deleted = true;
  }
  m->path = std::string(path);
  return LineKind::kMapping;
}

void count(LineKind kind, ProcMapsStats& s) {
  switch (kind) {
    case LineKind::kMapping:
      break;
    case LineKind::kNotExecutable:
      ++s.not_executable;
      break;
    case LineKind::kAnonymous:
      ++s.anonymous;
      break;
    case LineKind::kPseudo:
      ++s.pseudo;
      break;
    case LineKind::kMalformed:
      ++s.malformed;
      break;
  }
}

}  // namespace

std::optional<MapsLine> parse_maps_line(std::string_view line) {
  std::string_view rest = line;
  std::string_view range = next_token(&rest);
  std::string_view perms = next_token(&rest);
  std::string_view offset = next_token(&rest);
  std::string_view dev = next_token(&rest);
  std::string_view inode = next_token(&rest);
  MapsLine out;
  uint64_t maj = 0, min = 0;
  std::optional<uint64_t> offset_value = parse_hex(offset);
  std::optional<uint64_t> inode_value = parse_dec(inode);
  if (perms.size() != 4 || !parse_hex_pair(range, '-', &out.start, &out.end) ||
      out.end < out.start || !offset_value ||
      !parse_hex_pair(dev, ':', &maj, &min) || maj > UINT32_MAX ||
      min > UINT32_MAX || !inode_value)
    return std::nullopt;
  out.offset = *offset_value;
  out.dev_major = static_cast<uint32_t>(maj);
  out.dev_minor = static_cast<uint32_t>(min);
  out.inode = *inode_value;
  out.perms = std::string(perms);
  // The path column starts after the padding spaces; it may itself contain
  // spaces, so it is everything up to the end of the line.
  size_t begin = rest.find_first_not_of(' ');
  if (begin != std::string_view::npos)
    out.path = std::string(rest.substr(begin));
  return out;
}

std::vector<MapsLine> parse_maps(std::string_view text) {
  std::vector<MapsLine> out;
  detail::for_each_line(text, [&](std::string_view line) {
    if (auto parsed = parse_maps_line(line)) out.push_back(std::move(*parsed));
  });
  return out;
}

std::string format_maps_line(const MapsLine& line) {
  char head[128];
  int n = std::snprintf(
      head, sizeof(head), "%llx-%llx %s %08llx %02x:%02x %llu",
      static_cast<unsigned long long>(line.start),
      static_cast<unsigned long long>(line.end), line.perms.c_str(),
      static_cast<unsigned long long>(line.offset), line.dev_major,
      line.dev_minor, static_cast<unsigned long long>(line.inode));
  std::string out(head, static_cast<size_t>(n < 0 ? 0 : n));
  // The kernel pads the path column to start at column 73 (anonymous
  // memory: a single space ends the line).
  out.append(out.size() < 73 && !line.path.empty() ? 73 - out.size() : 1, ' ');
  out += line.path;
  return out;
}

std::vector<ProcMapping> parse_proc_maps(std::string_view text,
                                         ProcMapsStats* stats) {
  ProcMapsStats local;
  ProcMapsStats& s = stats != nullptr ? *stats : local;
  std::vector<ProcMapping> out;
  detail::for_each_line(text, [&](std::string_view line) {
    if (line.empty()) return;
    ++s.lines;
    ProcMapping m;
    LineKind kind = classify(parse_maps_line(line), &m);
    count(kind, s);
    if (kind == LineKind::kMapping) out.push_back(std::move(m));
  });
  return out;
}

}  // namespace runner::format
