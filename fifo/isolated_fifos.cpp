#include "fifo/isolated_fifos.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <thread>

#include "base/base.hpp"

namespace runner::fifo {
namespace {

constexpr int kAttempts = 50;
constexpr auto kRetryDelay = std::chrono::milliseconds(10);
constexpr std::string_view kDirPrefix = "runner-fifos.";
constexpr const char* kLockName = "runner.fifo.lock";
// A private directory without its lock file is being set up, or was left by
// a runner killed during setup: only the latter is this old.
constexpr time_t kUnlockedDirAge = 60;
// A private directory holds the two FIFOs and the lock file.
constexpr int kMaxOrphanEntries = 8;

bool is_placeholder(const struct stat& st) {
  return S_ISFIFO(st.st_mode) && (st.st_mode & 07777) == kPlaceholderMode;
}

base::UniqueFd open_for_lock(const std::string& path) {
  return base::UniqueFd(
      ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC));
}

// Nothing at `path`: a placeholder FIFO (EEXIST when another runner was
// quicker: the caller looks again).
base::Status make_placeholder(const std::string& path) {
  if (::mkfifo(path.c_str(), kPlaceholderMode) != 0)
    return base::errno_error("mkfifo placeholder " + path);
  base::UniqueFd fd = open_for_lock(path);
  if (fd) (void)::fchmod(fd.get(), kPlaceholderMode);  // the umask may cut it
  return {};
}

// The runner that made the directory `dir_fd` (a 0700 directory of ours)
// is gone: its lock file is not locked by anybody, or there is none and the
// directory is old. `lock` then holds the lock until the caller is done.
bool orphaned(int dir_fd, const struct stat& dir_st, base::UniqueFd& lock) {
  lock.reset(::openat(dir_fd, kLockName,
                      O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!lock)
    return errno == ENOENT &&
           ::time(nullptr) - dir_st.st_mtime > kUnlockedDirAge;
  struct stat st {};
  return ::fstat(lock.get(), &st) == 0 && S_ISREG(st.st_mode) &&
         st.st_uid == ::geteuid() &&
         ::flock(lock.get(), LOCK_EX | LOCK_NB) == 0;
}

// Unlinks the files in an orphaned directory (never a subdirectory: then
// the directory is left), then the directory itself.
base::Status remove_orphan(int parent_fd, const std::string& name, int dir_fd) {
  DIR* dir = ::fdopendir(::dup(dir_fd));
  if (dir == nullptr) return base::errno_error("opendir");
  int count = 0;
  base::Status status;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string file = entry->d_name;
    if (file == "." || file == "..") continue;
    struct stat st {};
    if (++count > kMaxOrphanEntries ||
        ::fstatat(dir_fd, file.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
        S_ISDIR(st.st_mode) || ::unlinkat(dir_fd, file.c_str(), 0) != 0) {
      status = base::Error("cannot empty it (" + file + ")");
      break;
    }
  }
  ::closedir(dir);
  if (status && ::unlinkat(parent_fd, name.c_str(), AT_REMOVEDIR) != 0)
    return base::errno_error("rmdir");
  return status;
}

void remove_if_orphaned(int parent_fd, const std::string& parent,
                        const std::string& name) {
  base::UniqueFd dir_fd(
      ::openat(parent_fd, name.c_str(),
               O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  struct stat st {};
  if (!dir_fd || ::fstat(dir_fd.get(), &st) != 0 || st.st_uid != ::geteuid() ||
      (st.st_mode & 07777) != 0700)
    return;
  base::UniqueFd lock;
  if (!orphaned(dir_fd.get(), st, lock)) return;
  auto removed = remove_orphan(parent_fd, name, dir_fd.get());
  if (removed) {
    RUNNER_LOG("fifo", kInfo) << "removed " << parent << "/" << name
                              << ", left by a runner that was killed";
  } else {
    RUNNER_LOG("fifo", kWarning)
        << "cannot remove " << parent << "/" << name
        << ", left by a runner that was killed: " << removed.error().what();
  }
}

}  // namespace

void remove_orphaned_directories(const std::string& parent) {
  base::UniqueFd parent_fd(
      ::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!parent_fd) return;
  DIR* dir = ::fdopendir(::dup(parent_fd.get()));
  if (dir == nullptr) return;
  std::vector<std::string> names;
  while (const dirent* entry = ::readdir(dir)) {
    std::string_view name = entry->d_name;
    if (name.size() == kDirPrefix.size() + 6 && name.starts_with(kDirPrefix))
      names.emplace_back(name);
  }
  ::closedir(dir);
  for (const std::string& name : names)
    remove_if_orphaned(parent_fd.get(), parent, name);
}

std::string describe_owner(uid_t uid) {
  std::string text = "uid " + std::to_string(uid);
  struct passwd pw {};
  struct passwd* found = nullptr;
  char buf[1024];
  if (::getpwuid_r(uid, &pw, buf, sizeof(buf), &found) == 0 &&
      found != nullptr && found->pw_name != nullptr)
    text += std::string(" (") + found->pw_name + ")";
  return text;
}

base::Status remove_planted_symlink(
    const std::string& path, uid_t owner, std::string_view shown_as,
    const std::function<base::Error(int err)>& refuse) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return refuse(errno);
  RUNNER_LOG("fifo", kWarning) << "removed a symlink planted at " << shown_as
                               << " by " << describe_owner(owner);
  return {};
}

bool in_use_as_bind_target(const std::string& path, const struct stat& st,
                           base::UniqueFd& exclusive) {
  if (!S_ISFIFO(st.st_mode) && !S_ISREG(st.st_mode)) return false;
  base::UniqueFd fd = open_for_lock(path);
  if (!fd) return false;
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) return errno == EWOULDBLOCK;
  exclusive = std::move(fd);
  return false;
}

base::Result<IsolatedFifos::Target> IsolatedFifos::acquire_target(
    const std::string& path) {
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
      if (errno != ENOENT) return base::errno_error("lstat " + path);
      auto made = make_placeholder(path);
      if (!made && made.error().code() != EEXIST)
        return std::move(made).error();
      continue;
    }
    if (S_ISLNK(st.st_mode)) {
      // A symlink at a fixed path is always planted: removed when we may.
      auto removed =
          remove_planted_symlink(path, st.st_uid, path, [&](int err) {
            return base::errno_error(path + " is a symlink planted by " +
                                         describe_owner(st.st_uid) +
                                         " and cannot be removed",
                                     err);
          });
      if (!removed) return std::move(removed).error();
      continue;
    }
    if (S_ISDIR(st.st_mode))
      return base::Error(path + " is a directory owned by " +
                         describe_owner(st.st_uid) +
                         ": no FIFO can be mounted over it");
    Target target;
    target.path = path;
    target.dev = st.st_dev;
    target.ino = st.st_ino;
    if (!S_ISFIFO(st.st_mode) && !S_ISREG(st.st_mode)) return target;
    target.fd = open_for_lock(path);
    if (!target.fd) {
      // A file we may not read (another user's 0600 FIFO): we still mount
      // over it, but cannot protect it from its owner's unlink.
      RUNNER_LOG("fifo", kDebug) << "cannot lock " << path << " (owned by "
                                 << describe_owner(st.st_uid) << ")";
      return target;
    }
    if (::flock(target.fd.get(), LOCK_SH | LOCK_NB) != 0) {
      if (errno != EWOULDBLOCK) return base::errno_error("flock " + path);
      std::this_thread::sleep_for(kRetryDelay);  // being removed right now
      continue;
    }
    // Locked: is it still the file at the path (not unlinked meanwhile)?
    struct stat now {
    }, locked{};
    if (::fstat(target.fd.get(), &locked) == 0 &&
        ::lstat(path.c_str(), &now) == 0 && now.st_dev == locked.st_dev &&
        now.st_ino == locked.st_ino) {
      target.dev = locked.st_dev;
      target.ino = locked.st_ino;
      return target;
    }
  }
  struct stat st {};
  std::string owner = ::lstat(path.c_str(), &st) == 0
                          ? " (owned by " + describe_owner(st.st_uid) + ")"
                          : "";
  return base::Error(path + owner +
                     " kept changing or stayed exclusively locked");
}

void IsolatedFifos::release_target(Target& target) {
  if (!target.fd) return;
  struct stat st {};
  if (::flock(target.fd.get(), LOCK_EX | LOCK_NB) == 0 &&
      ::lstat(target.path.c_str(), &st) == 0 && st.st_dev == target.dev &&
      st.st_ino == target.ino && is_placeholder(st)) {
    // Nobody else binds over it: the last one out removes the placeholder.
    (void)::unlink(target.path.c_str());
  }
  target.fd.reset();
}

base::Result<std::unique_ptr<IsolatedFifos>> IsolatedFifos::create(
    const ServerOptions& shared) {
  std::unique_ptr<IsolatedFifos> fifos(new IsolatedFifos());
  fifos->shared_ = shared;
  remove_orphaned_directories(base::temp_directory());
  std::string tmpl =
      base::temp_directory() + "/" + std::string(kDirPrefix) + "XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr)
    return base::errno_error("mkdtemp " + tmpl);
  fifos->dir_ = tmpl;
  fifos->private_.ctl_path = tmpl + "/runner.ctl.fifo";
  fifos->private_.ack_path = tmpl + "/runner.ack.fifo";
  fifos->private_.lock_path = tmpl + "/" + kLockName;
  for (const std::string* path : {&shared.ctl_path, &shared.ack_path}) {
    RUNNER_ASSIGN_OR_RETURN(Target target, acquire_target(*path),
                            "bind target " + *path);
    fifos->targets_.push_back(std::move(target));
  }
  return fifos;
}

IsolatedFifos::~IsolatedFifos() {
  for (Target& target : targets_) release_target(target);
  if (!dir_.empty() && ::rmdir(dir_.c_str()) != 0 && errno != ENOENT) {
    RUNNER_LOG("fifo", kWarning)
        << "cannot remove " << dir_ << ": " << std::strerror(errno);
  }
}

base::Result<base::MountNamespace> IsolatedFifos::make_namespace() const {
  return base::MountNamespace::create({
      {private_.ctl_path, shared_.ctl_path},
      {private_.ack_path, shared_.ack_path},
  });
}

}  // namespace runner::fifo
