#include "base/mount_namespace.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>

namespace runner::base {
namespace {

// What the helper reports: the step that failed (kDone when none) and errno.
enum Step : int {
  kDone = 0,
  kUnshare,
  kSetgroups,
  kUidMap,
  kGidMap,
  kPropagation,
  kOpenSource,
  kOpenTarget,
  kTargetKind,
  kBind,
};

struct Report {
  int step = kDone;
  int err = 0;
  int bind = -1;  // index of the bind mount the step was about
  int user_namespace = 0;
};

// Everything the helper needs, built before fork (no allocation after it).
struct Plan {
  std::vector<const char*> sources, targets;
  std::string uid_map, gid_map;
};

bool write_text(const char* path, const std::string& text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  ssize_t n = write(fd, text.data(), text.size());
  int err = errno;
  close(fd);
  errno = err;
  return n == static_cast<ssize_t>(text.size());
}

// A user namespace of our own in which our uid and gid map onto themselves;
// setgroups must be denied before an unprivileged process may write gid_map.
int enter_user_namespace(const Plan& plan) {
  if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) return kUnshare;
  if (!write_text("/proc/self/setgroups", "deny")) return kSetgroups;
  if (!write_text("/proc/self/uid_map", plan.uid_map)) return kUidMap;
  if (!write_text("/proc/self/gid_map", plan.gid_map)) return kGidMap;
  return kDone;
}

void fd_path(int fd, char (&out)[32]) {
  // "/proc/self/fd/" + decimal fd, without snprintf (not async-signal-safe).
  const char prefix[] = "/proc/self/fd/";
  char digits[12];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + fd % 10);
    fd /= 10;
  } while (fd > 0);
  size_t pos = 0;
  for (; prefix[pos] != '\0'; ++pos) out[pos] = prefix[pos];
  while (n > 0) out[pos++] = digits[--n];
  out[pos] = '\0';
}

// Opens source and target (after unshare: a bind mount needs paths of the
// new namespace) and binds one over the other through their fds, so a path
// swapped in between cannot redirect the mount. Sets r.err/r.bind on error.
int bind_one(const Plan& plan, size_t i, Report& r) {
  r.bind = static_cast<int>(i);
  int src = open(plan.sources[i], O_PATH | O_CLOEXEC);
  if (src < 0) return kOpenSource;
  int tgt = open(plan.targets[i], O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (tgt < 0) return kOpenTarget;
  struct stat s {
  }, t{};
  if (fstat(src, &s) != 0 || fstat(tgt, &t) != 0) return kTargetKind;
  if (S_ISLNK(t.st_mode)) {
    errno = ELOOP;
    return kTargetKind;
  }
  if (S_ISDIR(s.st_mode) != S_ISDIR(t.st_mode)) {
    errno = S_ISDIR(t.st_mode) ? EISDIR : ENOTDIR;
    return kTargetKind;
  }
  char src_path[32], tgt_path[32];
  fd_path(src, src_path);
  fd_path(tgt, tgt_path);
  if (mount(src_path, tgt_path, nullptr, MS_BIND, nullptr) != 0) return kBind;
  close(src);
  close(tgt);
  return kDone;
}

int build(const Plan& plan, Report& r) {
  if (unshare(CLONE_NEWNS) != 0) {
    if (errno != EPERM) return kUnshare;
    r.user_namespace = 1;
    if (int step = enter_user_namespace(plan); step != kDone) return step;
  }
  if (mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0)
    return kPropagation;
  for (size_t i = 0; i < plan.sources.size(); ++i) {
    if (int step = bind_one(plan, i, r); step != kDone) return step;
  }
  return kDone;
}

// The helper: builds the namespace, reports, then stays alive until the
// parent has opened /proc/<pid>/ns/* (it closes `hold_fd`'s write end).
[[noreturn]] void helper_main(const Plan& plan, int report_fd, int hold_fd) {
  Report r;
  r.step = build(plan, r);
  r.err = r.step == kDone ? 0 : errno;
  ssize_t ignored = write(report_fd, &r, sizeof(r));
  (void)ignored;
  char byte;
  while (read(hold_fd, &byte, 1) < 0 && errno == EINTR) {
  }
  _exit(0);
}

std::string describe(const Report& r, const std::vector<BindMount>& binds) {
  std::string bind;
  if (r.bind >= 0 && static_cast<size_t>(r.bind) < binds.size())
    bind = binds[r.bind].source + " over " + binds[r.bind].target;
  switch (r.step) {
    case kUnshare:
      return r.user_namespace ? "unshare(CLONE_NEWUSER|CLONE_NEWNS)"
                              : "unshare(CLONE_NEWNS)";
    case kSetgroups:
      return "writing /proc/self/setgroups";
    case kUidMap:
      return "writing /proc/self/uid_map";
    case kGidMap:
      return "writing /proc/self/gid_map";
    case kPropagation:
      return "making the mounts private (MS_REC|MS_SLAVE)";
    case kOpenSource:
      return "opening " + binds[r.bind].source;
    case kOpenTarget:
      return "opening the bind target " + binds[r.bind].target;
    case kTargetKind:
      return "the bind target " + binds[r.bind].target +
             (r.err == ELOOP ? " is a symlink" : " is not the source's kind");
    default:
      return "bind-mounting " + bind;
  }
}

// Lets the helper exit (EOF on its hold pipe) and reaps it.
void reap(pid_t pid, UniqueFd& hold) {
  hold.reset();
  int wstatus;
  while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
}

Result<UniqueFd> open_namespace(pid_t pid, const char* name) {
  std::string path = "/proc/" + std::to_string(pid) + "/ns/" + name;
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return errno_error("open " + path);
  return fd;
}

// Starts the helper and reads its report; the helper lives on until
// `hold_write` is closed.
Result<Report> run_helper(const Plan& plan, pid_t& pid, UniqueFd& hold_write) {
  int report[2], hold[2];
  if (::pipe2(report, O_CLOEXEC) != 0) return errno_error("pipe2");
  UniqueFd report_read(report[0]), report_write(report[1]);
  if (::pipe2(hold, O_CLOEXEC) != 0) return errno_error("pipe2");
  UniqueFd hold_read(hold[0]);
  hold_write.reset(hold[1]);
  pid = ::fork();
  if (pid < 0) return errno_error("fork");
  if (pid == 0) {
    ::close(report[0]);
    ::close(hold[1]);
    helper_main(plan, report[1], hold[0]);
  }
  report_write.reset();
  hold_read.reset();
  Report r;
  ssize_t n;
  do {
    n = ::read(report_read.get(), &r, sizeof(r));
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(sizeof(r))) r.step = -1;  // died silently
  return r;
}

}  // namespace

Result<MountNamespace> MountNamespace::create(
    const std::vector<BindMount>& binds) {
  Plan plan;
  for (const auto& b : binds) {
    plan.sources.push_back(b.source.c_str());
    plan.targets.push_back(b.target.c_str());
  }
  plan.uid_map =
      std::to_string(::geteuid()) + " " + std::to_string(::geteuid()) + " 1\n";
  plan.gid_map =
      std::to_string(::getegid()) + " " + std::to_string(::getegid()) + " 1\n";
  pid_t pid = -1;
  UniqueFd hold;
  auto report = run_helper(plan, pid, hold);
  if (!report) {
    if (pid > 0) reap(pid, hold);
    return std::move(report).error();
  }
  MountNamespace ns;
  Status status;
  if (report->step < 0) {
    status = Error("the namespace helper died without a report");
  } else if (report->step != kDone) {
    status = errno_error(describe(*report, binds), report->err);
  } else {
    auto mnt = open_namespace(pid, "mnt");
    if (mnt)
      ns.mount_fd_ = std::move(*mnt);
    else
      status = std::move(mnt).error();
    if (status && report->user_namespace) {
      auto user = open_namespace(pid, "user");
      if (user)
        ns.user_fd_ = std::move(*user);
      else
        status = std::move(user).error();
    }
  }
  reap(pid, hold);
  if (!status) return std::move(status).error();
  return ns;
}

}  // namespace runner::base
