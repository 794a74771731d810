// File helpers shared by every part that reads or writes files. The runner
// may run as root in places other users can write to (/tmp, a profile folder
// someone else prepared), so:
//  - files are created afresh (O_CREAT|O_EXCL|O_NOFOLLOW): a symlink or hard
//    link planted at the name is replaced, never followed or truncated;
//  - files are read only when they are regular files (O_NOFOLLOW|O_NONBLOCK
//    open, then fstat), optionally owned by a given uid, and never beyond a
//    size cap, so a FIFO, a device or a link to /etc/shadow is refused;
//  - a profile folder must be ours and writable by us only.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "base/result.hpp"
#include "base/unique_fd.hpp"

namespace runner::base {

// Default cap on what read_file() reads.
inline constexpr uint64_t kDefaultReadLimit = uint64_t{256} << 20;

struct ReadOptions {
  uint64_t max_size = kDefaultReadLimit;
  // Follow a symlink in the last path component (only for paths the user
  // named, e.g. a config file). Intermediate components are always followed.
  bool follow_symlinks = false;
  // When set, the file must be owned by this uid.
  std::optional<uid_t> owner;
};

// ReadOptions{} except that a symlink is followed: for a path the user named
// (a config file) or a /proc/<pid>/fd/<n> link.
inline ReadOptions following_symlinks() {
  ReadOptions options;
  options.follow_symlinks = true;
  return options;
}

// Opens `path` read-only after the checks of `options` (not the size cap).
// Errors name the path and the cause; a missing file keeps code ENOENT.
Result<UniqueFd> open_regular_file(const std::string& path,
                                   const ReadOptions& options = {});
// The whole content of a regular file, at most options.max_size bytes (a
// bigger file is an error, not a truncated read).
Result<std::string> read_file(const std::string& path,
                              const ReadOptions& options = {});

// Creates `path` for writing (mode before umask), removing whatever
// non-directory entry was there first: a planted symlink is never followed.
Result<UniqueFd> create_file(const std::string& path, mode_t mode = 0644);

// write() until all of `data` is written (EINTR retried).
Status write_all(int fd, std::string_view data);

// Writes `data` to `path` through a temporary file with an unpredictable
// name in the same directory (created O_EXCL|O_NOFOLLOW under a directory
// fd) and a rename, so a crash never leaves a half-written file at `path`.
Status write_file_atomic(const std::string& path, std::string_view data);
Status write_file_atomic(const std::string& path,
                         std::span<const uint8_t> data);
// "cannot write <path>: <cause>" for a failed write of `path`, naming the
// path once whatever `error` says.
std::string write_error(const std::string& path, const Error& error);

// mkdir -p (new folders 0755 before umask).
Status make_directories(const std::string& path);

// $TMPDIR when it names a directory, else /tmp: where every temporary file
// of the runner goes.
std::string temp_directory();
struct TempFile {
  UniqueFd fd;
  std::string path;
};
// A new file <temp_directory()>/<prefix>XXXXXX (mkostemp: O_EXCL, mode 0600,
// O_CLOEXEC); the caller removes it.
Result<TempFile> create_temp_file(std::string_view prefix);
// The same, already unlinked: it disappears with its last fd.
Result<UniqueFd> create_anonymous_temp_file(std::string_view prefix);

// The folder of one of the runner's caches, `part` ("store", "finalize"):
// <xdg_cache_home>/runner/<part> when xdg_cache_home is an absolute path,
// else <home>/.cache/runner/<part> when home is set and not empty, else
// <temp_directory()>/runner-<part>-cache-<euid>.
std::string cache_directory(std::string_view part,
                            const std::optional<std::string>& xdg_cache_home,
                            const std::optional<std::string>& home);
// The same from $XDG_CACHE_HOME and $HOME.
std::string cache_directory(std::string_view part);

// Creates `path` (mkdir -p) and checks it is a folder only we control: not a
// symlink, owned by our effective uid, and not writable by group or others.
// A group/world-writable folder of ours that is empty is tightened (chmod
// g-w,o-w) and accepted; anything else is refused with an error naming the
// folder, its owner or mode, and why.
Status prepare_private_directory(const std::string& path);

}  // namespace runner::base
