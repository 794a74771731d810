#include "fifo/fifo_files.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "base/base.hpp"
#include "fifo/isolated_fifos.hpp"

namespace runner::fifo {
namespace {

constexpr int kLockAttempts = 5;
constexpr const char* kFifoDirHint =
    " (or give this run its own FIFO directory with --fifo-dir DIR)";

std::string read_holder_pid(int fd) {
  char buf[32] = {};
  ssize_t n = ::pread(fd, buf, sizeof(buf) - 1, 0);
  std::string text = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
  while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
    text.pop_back();
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    return "unknown";
  return text;
}

}  // namespace

base::Result<std::unique_ptr<FifoFiles>> FifoFiles::create(
    const ServerOptions& options) {
  std::unique_ptr<FifoFiles> files(new FifoFiles());
  files->options_ = options;
  RUNNER_RETURN_IF_ERROR(files->take_lock(), "lock " + options.lock_path);
  auto ctl = files->make_fifo(options.ctl_path, files->ctl_fd_);
  if (!ctl)
    return std::move(ctl).error().context("ctl FIFO " + options.ctl_path);
  files->ctl_id_ = *ctl;
  files->have_ctl_ = true;
  auto ack = files->make_fifo(options.ack_path, files->ack_fd_);
  if (!ack)
    return std::move(ack).error().context("ack FIFO " + options.ack_path);
  files->ack_id_ = *ack;
  files->have_ack_ = true;
  return files;
}

FifoFiles::~FifoFiles() {
  auto status = remove();
  if (!status) {
    RUNNER_LOG("fifo", kWarning) << "cleanup: " << status.error().what();
  }
}

base::Status FifoFiles::take_lock() {
  const std::string& path = options_.lock_path;
  for (int attempt = 0; attempt < kLockAttempts; ++attempt) {
    // O_NOFOLLOW: a symlink planted at the path fails (ELOOP, or EACCES
    // under fs.protected_symlinks in a sticky /tmp) instead of letting us
    // create/truncate its target; it is removed when we may, and we retry.
    base::UniqueFd fd(
        ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd) {
      int err = errno;
      auto removed = remove_squatter(err);
      if (!removed) return std::move(removed).error();
      continue;
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return base::errno_error("fstat");
    if (st.st_uid != ::geteuid()) return foreign_lock(fd.get(), st);
    if (!S_ISREG(st.st_mode)) {
      if (::unlink(path.c_str()) != 0 && errno != ENOENT)
        return base::errno_error("unlink non-regular lock file");
      continue;
    }
    if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
      if (errno == EWOULDBLOCK)
        return base::Error("another runner (pid " + read_holder_pid(fd.get()) +
                           ") is using " + options_.ctl_path +
                           "; wait for it to finish" + kFifoDirHint);
      return base::errno_error("flock");
    }
    // The previous holder may have unlinked the file between our open() and
    // flock(): then we locked an orphan inode and must start over.
    struct stat now {};
    if (::lstat(path.c_str(), &now) != 0 || now.st_dev != st.st_dev ||
        now.st_ino != st.st_ino)
      continue;
    std::string pid = std::to_string(::getpid()) + "\n";
    if (::ftruncate(fd.get(), 0) != 0) return base::errno_error("ftruncate");
    if (::pwrite(fd.get(), pid.data(), pid.size(), 0) !=
        static_cast<ssize_t>(pid.size()))
      return base::errno_error("write pid");
    lock_fd_ = std::move(fd);
    lock_id_ = {st.st_dev, st.st_ino};
    have_lock_ = true;
    return {};
  }
  return base::Error("lock file kept changing under us; giving up");
}

base::Status FifoFiles::remove_squatter(int open_errno) const {
  const std::string& path = options_.lock_path;
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return {};  // gone meanwhile: retry
    return base::errno_error("open", open_errno);
  }
  const std::string owner = describe_owner(st.st_uid);
  if (!S_ISLNK(st.st_mode))
    return base::Error("cannot open it (owned by " + owner +
                       "): " + std::strerror(open_errno) + kFifoDirHint);
  return remove_planted_symlink(
      path, st.st_uid, "the lock path " + path, [&owner](int err) {
        return base::Error("a symlink planted by " + owner +
                           " squats it and cannot be removed (" +
                           std::strerror(err) + ")" + kFifoDirHint);
      });
}

base::Status FifoFiles::foreign_lock(int fd, const struct stat& st) const {
  const std::string owner = describe_owner(st.st_uid);
  if (S_ISREG(st.st_mode) && ::flock(fd, LOCK_SH | LOCK_NB) != 0 &&
      errno == EWOULDBLOCK)
    return base::Error("another runner (pid " + read_holder_pid(fd) + ", " +
                       owner + ") is using " + options_.ctl_path +
                       "; wait for it to finish" + kFifoDirHint);
  return base::Error("the lock file is owned by " + owner +
                     ", not by us (uid " + std::to_string(::geteuid()) +
                     "), and no runner holds it: it squats the lock path; "
                     "remove it" +
                     kFifoDirHint);
}

base::Result<FifoFiles::FileId> FifoFiles::make_fifo(const std::string& path,
                                                     base::UniqueFd& out) {
  // Whatever is there (old FIFO, planted symlink, regular file) goes away;
  // unlink() removes a symlink itself, never its target.
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    base::UniqueFd exclusive;  // keeps namespaced runners off until unlinked
    if (in_use_as_bind_target(path, st, exclusive))
      return base::Error(
          "a runner whose benchmark has a private mount namespace binds over "
          "it (file owned by " +
          describe_owner(st.st_uid) + "); wait for it to finish" +
          kFifoDirHint);
    if (::unlink(path.c_str()) != 0 && errno != ENOENT)
      return base::errno_error("unlink old file (owned by " +
                               describe_owner(st.st_uid) + ")");
  }
  if (::mkfifo(path.c_str(), 0600) != 0) return base::errno_error("mkfifo");
  base::UniqueFd fd(
      ::open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) return base::errno_error("open");
  // mkfifo's mode went through the umask; make it exactly 0600.
  if (::fchmod(fd.get(), 0600) != 0) return base::errno_error("fchmod");
  if (::fstat(fd.get(), &st) != 0) return base::errno_error("fstat");
  if (!S_ISFIFO(st.st_mode))
    return base::Error("not a FIFO after mkfifo (replaced concurrently?)");
  if (st.st_uid != ::geteuid())
    return base::Error("FIFO is owned by uid " + std::to_string(st.st_uid));
  if ((st.st_mode & 07777) != 0600)
    return base::Error("FIFO has mode " + std::to_string(st.st_mode & 07777) +
                       ", expected 0600");
  out = std::move(fd);
  return FileId{st.st_dev, st.st_ino};
}

base::Status FifoFiles::unlink_if_ours(const std::string& path, FileId id,
                                       bool fifo) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return {};
    return base::errno_error("lstat " + path);
  }
  if (st.st_dev != id.dev || st.st_ino != id.ino) return {};  // not ours now
  base::UniqueFd exclusive;
  if (fifo && in_use_as_bind_target(path, st, exclusive)) {
    // Another runner's benchmark has it mounted over by its own FIFO: an
    // unlink would detach that mount. A stale FIFO stays (as CodSpeed's do).
    RUNNER_LOG("fifo", kDebug) << "leaving " << path << ": a bind target";
    return {};
  }
  if (::unlink(path.c_str()) != 0 && errno != ENOENT)
    return base::errno_error("unlink " + path);
  return {};
}

base::Status FifoFiles::remove() {
  base::Status first;
  auto keep = [&first](base::Status status) {
    if (!status && first) first = std::move(status);
  };
  if (have_ctl_) keep(unlink_if_ours(options_.ctl_path, ctl_id_, true));
  if (have_ack_) keep(unlink_if_ours(options_.ack_path, ack_id_, true));
  have_ctl_ = have_ack_ = false;
  ctl_fd_.reset();
  ack_fd_.reset();
  // The lock file goes last and while still locked, so a runner waiting on
  // it re-checks the path after its flock (see take_lock).
  if (have_lock_) keep(unlink_if_ours(options_.lock_path, lock_id_, false));
  have_lock_ = false;
  lock_fd_.reset();
  return first;
}

}  // namespace runner::fifo
