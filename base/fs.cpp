#include "base/fs.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string_view>
#include <utility>

#include "base/hex.hpp"

namespace runner::base {
Status write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno_error("write");
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return {};
}

namespace {

const char* file_type_name(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISREG(mode)) return "a regular file";
  return "of an unknown type";
}

std::string octal_mode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof(text), "%04o",
                static_cast<unsigned>(mode & 07777));
  return text;
}

Error too_big(const std::string& path, uint64_t limit) {
  return Error(path + ": bigger than the " + std::to_string(limit) +
               "-byte limit for this file; not read");
}

// 16 random hex digits (getrandom; a time/pid mix only if it is missing).
std::string random_suffix() {
  uint64_t value = 0;
  if (::getrandom(&value, sizeof(value), GRND_NONBLOCK) !=
      static_cast<ssize_t>(sizeof(value))) {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    value = static_cast<uint64_t>(ts.tv_nsec) * 0x9e3779b97f4a7c15ull ^
            static_cast<uint64_t>(::getpid()) << 32 ^
            reinterpret_cast<uintptr_t>(&value);
  }
  return hex_number(value, 16);
}

// Splits "dir/name" (dir "." when there is no slash, "/" for "/name").
std::pair<std::string, std::string> split_path(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return {".", path};
  return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}

// O_DIRECTORY|O_NOFOLLOW fails with ENOTDIR or ELOOP on a symlink: which.
bool is_symlink(const std::string& path) {
  const int saved = errno;
  struct stat st {};
  bool link = ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
  errno = saved;
  return link;
}

// Opens the directory `path` without following a symlink at its last
// component. A symlink there: "<path>: is a symbolic link; <refusal>"; any
// other failure: "<what>: <errno text>".
Result<UniqueFd> open_directory_nofollow(const std::string& path,
                                         std::string_view refusal,
                                         std::string what) {
  UniqueFd fd(
      ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (fd) return fd;
  if (is_symlink(path))
    return Error(path + ": is a symbolic link; " + std::string(refusal));
  return errno_error(std::move(what));
}

Result<bool> directory_is_empty(int dir_fd, const std::string& path) {
  int copy = ::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (copy < 0) return errno_error("open " + path);
  DIR* dir = ::fdopendir(copy);
  if (dir == nullptr) {
    Error err = errno_error("open " + path);
    ::close(copy);
    return err;
  }
  bool empty = true;
  while (const dirent* entry = ::readdir(dir)) {
    std::string_view name = entry->d_name;
    if (name != "." && name != "..") {
      empty = false;
      break;
    }
  }
  ::closedir(dir);
  return empty;
}

}  // namespace

Result<UniqueFd> open_regular_file(const std::string& path,
                                   const ReadOptions& options) {
  int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK;
  if (!options.follow_symlinks) flags |= O_NOFOLLOW;
  UniqueFd fd(::open(path.c_str(), flags));
  if (!fd) {
    if (errno == ELOOP && !options.follow_symlinks)
      return Error(path + ": is a symbolic link; not followed");
    return errno_error("open " + path);
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return errno_error("stat " + path);
  if (!S_ISREG(st.st_mode))
    return Error(path + ": " + file_type_name(st.st_mode) +
                 ", not a regular file; not read");
  if (options.owner && st.st_uid != *options.owner)
    return Error(path + ": owned by uid " + std::to_string(st.st_uid) +
                 ", not by uid " + std::to_string(*options.owner) +
                 "; not read");
  return fd;
}

Result<std::string> read_file(const std::string& path,
                              const ReadOptions& options) {
  auto opened = open_regular_file(path, options);
  if (!opened) return std::move(opened.error());
  UniqueFd fd = std::move(*opened);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return errno_error("stat " + path);
  if (static_cast<uint64_t>(st.st_size) > options.max_size)
    return too_big(path, options.max_size);
  std::string out;
  out.reserve(static_cast<size_t>(st.st_size));
  char buf[65536];
  while (true) {
    ssize_t n = ::read(fd.get(), buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno_error("read " + path);
    }
    if (n == 0) break;
    // A file growing while read (or a /proc file whose size says 0).
    if (out.size() + static_cast<size_t>(n) > options.max_size)
      return too_big(path, options.max_size);
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

Result<UniqueFd> create_file(const std::string& path, mode_t mode) {
  constexpr int kFlags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
  UniqueFd fd(::open(path.c_str(), kFlags, mode));
  if (!fd && errno == EEXIST) {
    // An old run's file or a planted link goes first (unlink never follows
    // a symlink); anything else (a FIFO, a device) is left alone. Someone
    // re-creating the name in between makes the second open fail (EEXIST)
    // rather than write through it.
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) &&
        !S_ISLNK(st.st_mode))
      return Error(path + ": exists and is " + file_type_name(st.st_mode) +
                   "; not replaced");
    if (::unlink(path.c_str()) != 0 && errno != ENOENT)
      return errno_error("remove the existing " + path);
    fd.reset(::open(path.c_str(), kFlags, mode));
  }
  if (!fd) return errno_error("create " + path);
  return fd;
}

Status write_file_atomic(const std::string& path, std::string_view data) {
  auto [dir, name] = split_path(path);
  auto opened = open_directory_nofollow(dir, "not written through",
                                        "open the folder of " + path);
  if (!opened) return std::move(opened.error());
  UniqueFd dir_fd = std::move(*opened);
  std::string tmp;
  UniqueFd fd;
  for (int attempt = 0; attempt < 100 && !fd; ++attempt) {
    tmp = "." + name + ".tmp." + random_suffix();
    fd.reset(::openat(dir_fd.get(), tmp.c_str(),
                      O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                      0644));
    if (!fd && errno != EEXIST) break;
  }
  if (!fd) return errno_error("create a temporary file for " + path);
  Status st = write_all(fd.get(), data);
  if (st && ::close(fd.release()) != 0) st = errno_error("close");
  if (!st) {
    ::unlinkat(dir_fd.get(), tmp.c_str(), 0);
    return std::move(st.error()).context(path);
  }
  if (::renameat(dir_fd.get(), tmp.c_str(), dir_fd.get(), name.c_str()) != 0) {
    Error err = errno_error("rename to " + path);
    ::unlinkat(dir_fd.get(), tmp.c_str(), 0);
    return err;
  }
  return {};
}

Status write_file_atomic(const std::string& path,
                         std::span<const uint8_t> data) {
  return write_file_atomic(
      path, std::string_view(reinterpret_cast<const char*>(data.data()),
                             data.size()));
}

std::string write_error(const std::string& path, const Error& error) {
  std::string cause = error.what();
  if (cause.starts_with(path + ": ")) cause.erase(0, path.size() + 2);
  return "cannot write " + path + ": " + cause;
}

Status make_directories(const std::string& path) {
  if (path.empty()) return {};
  std::string partial;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    partial = path.substr(0, pos);
    if (partial.empty()) continue;
    if (::mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST)
      return errno_error("mkdir " + partial);
  }
  return {};
}

std::string temp_directory() {
  const char* dir = std::getenv("TMPDIR");
  struct stat st {};
  if (dir != nullptr && dir[0] != '\0' && ::stat(dir, &st) == 0 &&
      S_ISDIR(st.st_mode))
    return dir;
  return "/tmp";
}

std::string cache_directory(std::string_view part,
                            const std::optional<std::string>& xdg_cache_home,
                            const std::optional<std::string>& home) {
  if (xdg_cache_home && !xdg_cache_home->empty() && (*xdg_cache_home)[0] == '/')
    return *xdg_cache_home + "/runner/" + std::string(part);
  if (home && !home->empty())
    return *home + "/.cache/runner/" + std::string(part);
  return temp_directory() + "/runner-" + std::string(part) + "-cache-" +
         std::to_string(::geteuid());
}

std::string cache_directory(std::string_view part) {
  auto env = [](const char* name) -> std::optional<std::string> {
    const char* value = std::getenv(name);
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
  return cache_directory(part, env("XDG_CACHE_HOME"), env("HOME"));
}

Result<TempFile> create_temp_file(std::string_view prefix) {
  TempFile out;
  out.path = temp_directory() + "/" + std::string(prefix) + "XXXXXX";
  out.fd.reset(::mkostemp(out.path.data(), O_CLOEXEC));
  if (!out.fd) return errno_error("create a temporary file " + out.path);
  return out;
}

Result<UniqueFd> create_anonymous_temp_file(std::string_view prefix) {
  RUNNER_ASSIGN_OR_RETURN(TempFile file, create_temp_file(prefix),
                          "temporary file");
  ::unlink(file.path.c_str());
  return std::move(file.fd);
}

Status prepare_private_directory(const std::string& path) {
  RUNNER_RETURN_IF_ERROR(make_directories(path), path);
  auto opened =
      open_directory_nofollow(path, "give the folder itself", "open " + path);
  if (!opened) return std::move(opened.error());
  UniqueFd fd = std::move(*opened);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return errno_error("stat " + path);
  const uid_t me = ::geteuid();
  if (st.st_uid != me)
    return Error(path + ": owned by uid " + std::to_string(st.st_uid) +
                 ", not by this user (uid " + std::to_string(me) +
                 "); another user could replace what the runner writes "
                 "there: use a folder of your own");
  constexpr mode_t kOthersWrite = S_IWGRP | S_IWOTH;
  if ((st.st_mode & kOthersWrite) == 0) return {};
  // Tighten first, then look: nothing can be added once others lost write.
  if (::fchmod(fd.get(), st.st_mode & 07777 & ~kOthersWrite) != 0)
    return errno_error("chmod g-w,o-w " + path);
  auto empty = directory_is_empty(fd.get(), path);
  if (empty && *empty) return {};
  (void)::fchmod(fd.get(), st.st_mode & 07777);  // leave it as it was
  if (!empty) return std::move(empty.error());
  return Error(path + ": writable by group or others (mode " +
               octal_mode(st.st_mode) +
               ") and not empty; another user could have planted files "
               "there: use a new folder, or remove group/other write");
}

}  // namespace runner::base
