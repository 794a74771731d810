// FifoFiles: the lock file and the two FIFOs at their (usually fixed, /tmp)
// paths, created safely and removed only if they are still ours.
//
// The lock is an flock(LOCK_EX|LOCK_NB) on a file holding the holder's pid:
// the kernel releases it when a runner dies, so a stale file is taken over.
// Whatever squats the lock path is named with its owner (uid and user name);
// a symlink is removed when we may. The lock only guards the shared fixed
// paths; runners whose benchmark has its own mount namespace (see
// isolated_fifos.hpp) use a lock in their private directory.
// Whatever sits at a FIFO path (a planted symlink, an old FIFO) is unlinked
// (unlink never follows symlinks) unless a namespaced runner binds over it,
// a fresh FIFO is made with mode 0600 and opened O_NOFOLLOW, then checked
// with fstat.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <memory>
#include <string>

#include "base/base.hpp"
#include "fifo/server_options.hpp"

namespace runner::fifo {

class FifoFiles {
 public:
  static base::Result<std::unique_ptr<FifoFiles>> create(
      const ServerOptions& options);

  FifoFiles(const FifoFiles&) = delete;
  FifoFiles& operator=(const FifoFiles&) = delete;
  ~FifoFiles();  // remove()

  // Both opened O_RDWR|O_NONBLOCK|O_CLOEXEC: O_RDWR so open() never waits for
  // a peer and reads never see EOF when a client closes its end.
  base::UniqueFd take_ctl_fd() { return std::move(ctl_fd_); }
  base::UniqueFd take_ack_fd() { return std::move(ack_fd_); }

  // Unlinks both FIFOs and the lock file when they still are the inodes we
  // created, then releases the lock. Idempotent; only plain syscalls.
  base::Status remove();

 private:
  struct FileId {
    dev_t dev = 0;
    ino_t ino = 0;
  };
  FifoFiles() = default;
  base::Status take_lock();
  // take_lock's diagnostics: whatever squats the lock path, named with its
  // owner (a symlink is removed when we may).
  base::Status remove_squatter(int open_errno) const;
  base::Status foreign_lock(int fd, const struct stat& st) const;
  base::Result<FileId> make_fifo(const std::string& path, base::UniqueFd& fd);
  // A FIFO another runner binds over (see isolated_fifos.hpp) stays.
  static base::Status unlink_if_ours(const std::string& path, FileId id,
                                     bool fifo);

  ServerOptions options_;
  base::UniqueFd lock_fd_;
  base::UniqueFd ctl_fd_;
  base::UniqueFd ack_fd_;
  FileId lock_id_, ctl_id_, ack_id_;
  bool have_lock_ = false, have_ctl_ = false, have_ack_ = false;
};

}  // namespace runner::fifo
