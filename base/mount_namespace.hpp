// MountNamespace: a private mount namespace in which some files are
// bind-mounted over others, ready before the child that joins it exists
// (SpawnOptions::mount_namespace_fd / user_namespace_fd, applied between fork
// and exec).
//
// A short-lived helper process builds it, so the caller's own namespaces
// never change and every failure is reported (with the step that failed)
// before anything is spawned; the caller keeps the namespace alive through
// /proc/<helper>/ns/* file descriptors.
//
// Privileges: the helper first tries a mount namespace alone (CAP_SYS_ADMIN,
// e.g. root); when that is refused it unshares a user namespace too, mapping
// only the caller's uid and gid onto themselves, so the child keeps its ids
// (unprivileged user namespaces). All mounts are made recursively MS_SLAVE:
// mounts made outside later still reach the child, ours never leave it.
// Mount namespaces do not change pids: a profiler sees the same process.
#pragma once

#include <string>
#include <vector>

#include "base/result.hpp"
#include "base/unique_fd.hpp"

namespace runner::base {

struct BindMount {
  std::string source;  // an existing file or directory
  // An existing file of the same kind, opened O_NOFOLLOW: a symlink (or a
  // directory over a file) is refused, never followed.
  std::string target;
};

class MountNamespace {
 public:
  static Result<MountNamespace> create(const std::vector<BindMount>& binds);

  // Namespace file descriptors for setns(); user_fd() is -1 when no user
  // namespace was needed.
  int mount_fd() const { return mount_fd_.get(); }
  int user_fd() const { return user_fd_.get(); }
  bool uses_user_namespace() const { return static_cast<bool>(user_fd_); }

 private:
  MountNamespace() = default;
  UniqueFd mount_fd_;
  UniqueFd user_fd_;
};

}  // namespace runner::base
