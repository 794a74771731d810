#include "perfdata/proc_maps.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>

#include <cerrno>
#include <cstdio>

#include "base/base.hpp"

namespace runner::perfdata {
namespace {

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

}  // namespace runner::perfdata
