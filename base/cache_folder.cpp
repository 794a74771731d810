// The runner's cache folders (see cache_folder.hpp).
#include "base/cache_folder.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "base/fs.hpp"

namespace runner::base {

std::vector<std::string> entry_names(int dir_fd) {
  std::vector<std::string> names;
  const int fd = ::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return names;
  DIR* dir = ::fdopendir(fd);
  if (dir == nullptr) {
    ::close(fd);
    return names;
  }
  while (const dirent* e = ::readdir(dir)) {
    const std::string_view name = e->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
  }
  ::closedir(dir);
  return names;
}

namespace {

UniqueFd open_subfolder(int dir_fd, const std::string& name) {
  return UniqueFd(::openat(dir_fd, name.c_str(),
                           O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
}

// Nested folders deeper than this are not followed (a cache entry is a
// profile folder: a few levels).
constexpr int kMaxDepth = 64;

uint64_t folder_bytes(int dir_fd, int depth) {
  uint64_t total = 0;
  for (const std::string& name : entry_names(dir_fd)) {
    struct stat st {};
    if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
      continue;
    if (S_ISREG(st.st_mode)) {
      total += static_cast<uint64_t>(st.st_size);
    } else if (S_ISDIR(st.st_mode) && depth < kMaxDepth) {
      if (UniqueFd sub = open_subfolder(dir_fd, name))
        total += folder_bytes(sub.get(), depth + 1);
    }
  }
  return total;
}

Status remove_contents(int dir_fd, int depth) {
  for (const std::string& name : entry_names(dir_fd)) {
    if (::unlinkat(dir_fd, name.c_str(), 0) == 0 || errno == ENOENT) continue;
    if (errno != EISDIR && errno != EPERM) return errno_error("remove " + name);
    if (depth >= kMaxDepth) return Error(name + ": folders nested too deep");
    UniqueFd sub = open_subfolder(dir_fd, name);
    if (!sub) return errno_error("open " + name);
    if (auto s = remove_contents(sub.get(), depth + 1); !s) return s;
    if (::unlinkat(dir_fd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT)
      return errno_error("remove folder " + name);
  }
  return {};
}

bool older(const CacheEntry& a, const CacheEntry& b) {
  if (a.used.tv_sec != b.used.tv_sec) return a.used.tv_sec < b.used.tv_sec;
  return a.used.tv_nsec < b.used.tv_nsec;
}

}  // namespace

Result<UniqueFd> open_cache_folder(const std::string& dir) {
  const size_t slash = dir.rfind('/');
  if (slash != std::string::npos && slash > 0)
    RUNNER_RETURN_IF_ERROR(make_directories(dir.substr(0, slash)),
                           "cache folder");
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    return errno_error("create cache folder " + dir);
  UniqueFd fd(
      ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) {
    struct stat st {};
    if (::lstat(dir.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
      return Error("cache folder " + dir + " is a symbolic link; not used");
    return errno_error("open cache folder " + dir);
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0)
    return errno_error("stat cache folder " + dir);
  if (!S_ISDIR(st.st_mode)) return Error(dir + " is not a folder");
  if (st.st_uid != ::geteuid())
    return Error("cache folder " + dir + " is owned by uid " +
                 std::to_string(st.st_uid) + ", not by us");
  if ((st.st_mode & 077) != 0 && ::fchmod(fd.get(), 0700) != 0)
    return errno_error("chmod 0700 cache folder " + dir);
  return fd;
}

uint64_t entry_bytes(int dir_fd, const std::string& name) {
  struct stat st {};
  if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return 0;
  if (S_ISREG(st.st_mode)) return static_cast<uint64_t>(st.st_size);
  if (!S_ISDIR(st.st_mode)) return 0;
  UniqueFd sub = open_subfolder(dir_fd, name);
  return sub ? folder_bytes(sub.get(), 1) : 0;
}

void touch_cache_entry(int dir_fd, const std::string& name) {
  const struct timespec times[2] = {{0, UTIME_OMIT}, {0, UTIME_NOW}};
  ::utimensat(dir_fd, name.c_str(), times, AT_SYMLINK_NOFOLLOW);
}

Status remove_entry(int dir_fd, const std::string& name) {
  if (::unlinkat(dir_fd, name.c_str(), 0) == 0 || errno == ENOENT) return {};
  if (errno != EISDIR && errno != EPERM) return errno_error("remove " + name);
  UniqueFd sub = open_subfolder(dir_fd, name);
  if (!sub) return errno_error("open " + name);
  RUNNER_RETURN_IF_ERROR(remove_contents(sub.get(), 1), name);
  if (::unlinkat(dir_fd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT)
    return errno_error("remove folder " + name);
  return {};
}

uint64_t evict_least_recently_used(int dir_fd, std::vector<CacheEntry> entries,
                                   uint64_t max_bytes, std::string_view keep) {
  uint64_t total = 0;
  for (const CacheEntry& e : entries) total += e.bytes;
  if (total <= max_bytes) return total;
  std::sort(entries.begin(), entries.end(), older);
  for (const CacheEntry& e : entries) {
    if (total <= max_bytes) break;
    if (!keep.empty() && e.name == keep) continue;
    if (remove_entry(dir_fd, e.name)) total -= e.bytes;
  }
  return total;
}

}  // namespace runner::base
