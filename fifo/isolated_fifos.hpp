// IsolatedFifos: lets several runners serve CodSpeed's fixed FIFO paths
// (/tmp/runner.ctl.fifo, /tmp/runner.ack.fifo) at once. Each runner makes
// its FIFOs in a private 0700 directory (mkdtemp under
// base::temp_directory(): $TMPDIR, else /tmp) and its
// benchmark gets a mount namespace of its own in which those FIFOs are
// bind-mounted over the fixed paths; clients open the fixed paths as usual.
//
// A bind mount needs an existing file at the fixed path. Whatever file is
// there is used (an old FIFO, another runner's FIFO: the mount hides it from
// our benchmark only); a symlink is removed when we may (root in a sticky
// /tmp), else refused naming its owner; when nothing is there, a placeholder
// FIFO of mode 0444 is made (clients outside any namespace cannot open it
// read-write, so none of them waits on it). Every runner holds a shared
// flock on the file it binds over while it runs, and a runner unlinks a
// fixed-path file only when it can take an exclusive flock on it: unlinking
// a mount point would detach that mount in every namespace. The last runner
// out removes the placeholder.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/base.hpp"
#include "fifo/server_options.hpp"

namespace runner::fifo {

inline constexpr mode_t kPlaceholderMode = 0444;

class IsolatedFifos {
 public:
  // `shared`: the fixed paths (ctl, ack) the benchmark must see.
  static base::Result<std::unique_ptr<IsolatedFifos>> create(
      const ServerOptions& shared);

  IsolatedFifos(const IsolatedFifos&) = delete;
  IsolatedFifos& operator=(const IsolatedFifos&) = delete;
  // Releases the fixed-path files (removing an unused placeholder) and the
  // private directory (the server must have removed its files by then).
  ~IsolatedFifos();

  // Where the server makes its FIFOs and its (uncontended) lock.
  const ServerOptions& private_options() const { return private_; }
  const std::string& directory() const { return dir_; }

  // Once the server made its FIFOs: a namespace in which they sit at the
  // fixed paths (SpawnOptions::mount_namespace_fd/user_namespace_fd).
  base::Result<base::MountNamespace> make_namespace() const;

 private:
  struct Target {
    std::string path;
    base::UniqueFd fd;  // holds the shared flock; -1 when unreadable to us
    dev_t dev = 0;
    ino_t ino = 0;
  };
  IsolatedFifos() = default;
  static base::Result<Target> acquire_target(const std::string& path);
  static void release_target(Target& target);

  std::string dir_;
  ServerOptions shared_, private_;
  std::vector<Target> targets_;
};

// A runner killed with SIGKILL leaves its private directory behind.
// create() first removes, under `parent`, every runner-fifos.XXXXXX
// directory of ours (mode 0700, not a symlink) whose runner is gone: its
// lock file (flocked by its server while it runs) can be locked, or it has
// none and is older than a minute. Only its files are unlinked, through the
// directory's fd; a directory holding anything else is left.
void remove_orphaned_directories(const std::string& parent);

// "uid 65534 (nobody)", for messages naming who owns a file.
std::string describe_owner(uid_t uid);

// Unlinks the symlink `owner` planted at `path` (unlink never follows it;
// ENOENT: gone already) and warns "removed a symlink planted at <shown_as>
// by <owner>". When it cannot be removed, the error is refuse(errno): each
// caller words its own refusal.
base::Status remove_planted_symlink(
    const std::string& path, uid_t owner, std::string_view shown_as,
    const std::function<base::Error(int err)>& refuse);

// Whether the file at `path` (a FIFO or regular file) is bind-mounted by a
// runner in namespace mode (it holds a shared flock on it), so it must not
// be unlinked. Otherwise `exclusive` receives an fd holding an exclusive
// flock on it (or stays empty when it cannot be opened), which the caller
// keeps until it has unlinked the file.
bool in_use_as_bind_target(const std::string& path, const struct stat& st,
                           base::UniqueFd& exclusive);

}  // namespace runner::fifo
