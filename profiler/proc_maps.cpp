#include "profiler/proc_maps.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>

#include <cerrno>
#include <charconv>
#include <cstdio>

#include "base/fs.hpp"

namespace runner::profiler {
namespace {

constexpr std::string_view kDeletedSuffix = " (deleted)";

bool parse_hex(std::string_view s, uint64_t* out) {
  if (s.empty()) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out, 16);
  return ec == std::errc() && ptr == s.data() + s.size();
}

bool parse_dec(std::string_view s, uint64_t* out) {
  if (s.empty()) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out, 10);
  return ec == std::errc() && ptr == s.data() + s.size();
}

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

enum class LineKind {
  kMapping,
  kNotExecutable,
  kAnonymous,
  kPseudo,
  kMalformed
};

// "start-end perms offset maj:min inode   path"
LineKind parse_line(std::string_view line, ProcMapping* m) {
  std::string_view rest = line;
  std::string_view range = next_token(&rest);
  std::string_view perms = next_token(&rest);
  std::string_view offset = next_token(&rest);
  std::string_view dev = next_token(&rest);
  std::string_view inode = next_token(&rest);
  size_t dash = range.find('-');
  size_t colon = dev.find(':');
  uint64_t maj = 0, min = 0;
  if (dash == std::string_view::npos || colon == std::string_view::npos ||
      perms.size() != 4 || !parse_hex(range.substr(0, dash), &m->start) ||
      !parse_hex(range.substr(dash + 1), &m->end) || m->end < m->start ||
      !parse_hex(offset, &m->offset) ||
      !parse_hex(dev.substr(0, colon), &maj) ||
      !parse_hex(dev.substr(colon + 1), &min) || maj > UINT32_MAX ||
      min > UINT32_MAX || !parse_dec(inode, &m->inode))
    return LineKind::kMalformed;
  m->dev_major = static_cast<uint32_t>(maj);
  m->dev_minor = static_cast<uint32_t>(min);
  m->perms = std::string(perms);
  if (perms.find('x') == std::string_view::npos)
    return LineKind::kNotExecutable;
  // The path column starts after the padding spaces; it may itself contain
  // spaces, so it is everything up to the end of the line.
  size_t begin = rest.find_first_not_of(' ');
  if (begin == std::string_view::npos) return LineKind::kAnonymous;
  std::string_view path = rest.substr(begin);
  if (path.front() != '/') return LineKind::kPseudo;
  if (path.size() > kDeletedSuffix.size() &&
      path.substr(path.size() - kDeletedSuffix.size()) == kDeletedSuffix) {
    path.remove_suffix(kDeletedSuffix.size());
    m->deleted = true;
  }
  m->path = std::string(path);
  return LineKind::kMapping;
}

uint64_t monotonic_now_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull +
         static_cast<uint64_t>(ts.tv_nsec);
}

// /proc/<pid>/map_files/<start>-<end>: the mapped file itself, still
// openable after its name was unlinked. The names use unpadded hex.
base::UniqueFd open_mapped_file(int32_t pid, const ProcMapping& m) {
  char name[96];
  std::snprintf(name, sizeof(name), "/proc/%d/map_files/%llx-%llx", pid,
                static_cast<unsigned long long>(m.start),
                static_cast<unsigned long long>(m.end));
  base::UniqueFd fd(::open(name, O_RDONLY | O_CLOEXEC));
  if (!fd) return fd;
  // The pid may have been reused or the range remapped since the maps were
  // read: only keep the fd when it is the inode the line named.
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || st.st_ino != m.inode) return {};
  return fd;
}

}  // namespace

std::vector<ProcMapping> parse_proc_maps(std::string_view text,
                                         ProcMapsStats* stats) {
  ProcMapsStats local;
  ProcMapsStats& s = stats != nullptr ? *stats : local;
  std::vector<ProcMapping> out;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text =
        nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (line.empty()) continue;
    ++s.lines;
    ProcMapping m;
    switch (parse_line(line, &m)) {
      case LineKind::kMapping:
        out.push_back(std::move(m));
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
  return out;
}

base::Result<ProcSnapshot> snapshot_proc_maps(int32_t pid) {
  ProcSnapshot snap;
  snap.pid = pid;
  snap.timestamp = monotonic_now_ns();
  std::string maps_path = "/proc/" + std::to_string(pid) + "/maps";
  RUNNER_ASSIGN_OR_RETURN(std::string text, base::read_file(maps_path),
                          "snapshot of pid " + std::to_string(pid));
  // A zombie or a kernel thread has an empty maps file: nothing to map.
  if (text.empty())
    return base::Error("snapshot of pid " + std::to_string(pid) +
                           ": no mappings (process exited)",
                       ESRCH);
  struct stat proc_dir {};
  if (::stat(("/proc/" + std::to_string(pid)).c_str(), &proc_dir) == 0)
    snap.uid = proc_dir.st_uid;
  std::vector<ProcMapping> all = parse_proc_maps(text, &snap.stats);
  snap.mappings.reserve(all.size());
  for (ProcMapping& m : all) {
    if (m.deleted) {
      base::UniqueFd fd = open_mapped_file(pid, m);
      if (!fd) {
        ++snap.deleted_unreadable;
        continue;
      }
      snap.pinned.push_back(PinnedFile{m.start, m.end, std::move(fd)});
    }
    snap.mappings.push_back(std::move(m));
  }
  return snap;
}

}  // namespace runner::profiler
