#include "base/child_process.hpp"

#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <utility>
#include <vector>

#include "config.h"

namespace runner::base {
namespace {

bool is_executable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
         ::faccessat(AT_FDCWD, path.c_str(), X_OK, AT_EACCESS) == 0;
}

// What the child reports through the status pipe when it cannot exec.
enum class ExecStage : int { kChdir = 1, kExec = 2, kNamespace = 3 };

// The first directory on `path` this process may not search, or "".
std::string first_unsearchable_dir(const std::string& path) {
  for (size_t slash = path.find('/', 1); slash != std::string::npos;
       slash = path.find('/', slash + 1)) {
    std::string dir = path.substr(0, slash);
    if (::faccessat(AT_FDCWD, dir.c_str(), X_OK, AT_EACCESS) != 0 &&
        errno == EACCES)
      return dir;
  }
  return "";
}

// The interpreter named by a "#!" first line, or "".
std::string shebang_interpreter(const std::string& path) {
  const std::vector<std::string> words = shebang_words(path);
  return words.empty() ? "" : words.front();
}

// Why an execve of `path` fails with EACCES, in words.
std::string permission_reason(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    std::string dir = first_unsearchable_dir(path);
    if (dir.empty()) return "cannot be reached";
    return "the directory " + dir + " on its path is not searchable by uid " +
           std::to_string(::geteuid());
  }
  if (S_ISDIR(st.st_mode)) return "is a directory";
  if (!S_ISREG(st.st_mode)) return "is not a regular file";
  if (::faccessat(AT_FDCWD, path.c_str(), X_OK, AT_EACCESS) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o",
                  static_cast<unsigned>(st.st_mode & 07777));
    return std::string("no execute permission (mode ") + mode + ")";
  }
  return "execution refused (a noexec mount or a security policy)";
}

ExitStatus decode_status(int status) {
  ExitStatus out;
  if (WIFSIGNALED(status)) {
    out.signaled = true;
    out.signal = WTERMSIG(status);
  } else {
    out.code = WEXITSTATUS(status);
  }
  return out;
}

// The namespace hook of child_main (see SpawnOptions): 0 or an errno.
// setns leaves the child at the namespace's root: it goes back to its
// working directory by path, or, when it may not search that path (a
// checkout under a 0700 directory of another user), through a descriptor
// of the directory opened before.
int join_namespaces(const SpawnOptions& options) {
  if (options.mount_namespace_fd < 0) return 0;
  char cwd[PATH_MAX];
  bool have_cwd = syscall(SYS_getcwd, cwd, sizeof(cwd)) > 0 && cwd[0] == '/';
  int cwd_fd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  int err = 0;
  if (options.user_namespace_fd >= 0 &&
      setns(options.user_namespace_fd, CLONE_NEWUSER) != 0)
    err = errno;
  else if (setns(options.mount_namespace_fd, CLONE_NEWNS) != 0)
    err = errno;
  else if (have_cwd && chdir(cwd) != 0 && (cwd_fd < 0 || fchdir(cwd_fd) != 0))
    err = errno;
  if (cwd_fd >= 0) close(cwd_fd);
  return err;
}

// In the forked child: asks for `signal` when the spawning thread dies, and
// exits at once if the parent already died between fork and prctl (the
// signal would never come).
void set_parent_death_signal(int signal, pid_t parent) {
  if (signal == 0) return;
  if (prctl(PR_SET_PDEATHSIG, signal, 0, 0, 0) != 0) return;
  if (getppid() != parent) _exit(127);
}

[[noreturn]] void report_exec_failure(int status_write, ExecStage stage,
                                      int err) {
  const int report[2] = {static_cast<int>(stage), err};
  ssize_t ignored = write(status_write, report, sizeof(report));
  (void)ignored;
  _exit(127);
}

// Runs in the forked child: only async-signal-safe calls until exec.
[[noreturn]] void child_main(const SpawnOptions& options, const char* path,
                             char* const* argv, char* const* envp,
                             int release_read, int release_write,
                             int status_write, pid_t parent) {
  sigset_t all;
  sigemptyset(&all);
  sigprocmask(SIG_SETMASK, &all, nullptr);
  for (int sig : {SIGINT, SIGTERM, SIGPIPE, SIGHUP, SIGQUIT, SIGCHLD}) {
    signal(sig, SIG_DFL);
  }
  set_parent_death_signal(options.parent_death_signal, parent);
  if (release_read >= 0) {
    // Our copy of the write end must go, or the read below would never see
    // EOF if the parent died before releasing us.
    close(release_write);
    // A non-dumpable parent (file capabilities, setuid) would make us
    // non-dumpable too, and perf_event_open on a non-dumpable task fails the
    // ptrace access check even with CAP_PERFMON.
    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
    char byte;
    ssize_t n;
    do {
      n = read(release_read, &byte, 1);
    } while (n < 0 && errno == EINTR);
    if (n != 1) _exit(127);  // parent gave up on us
  }
  if (options.stdin_fd >= 0) dup2(options.stdin_fd, STDIN_FILENO);
  if (options.stdout_fd >= 0) dup2(options.stdout_fd, STDOUT_FILENO);
  if (options.stderr_fd >= 0) dup2(options.stderr_fd, STDERR_FILENO);
  if (int err = join_namespaces(options); err != 0)
    report_exec_failure(status_write, ExecStage::kNamespace, err);
  if (!options.cwd.empty() && chdir(options.cwd.c_str()) != 0)
    report_exec_failure(status_write, ExecStage::kChdir, errno);
#if HAVE_CLOSE_RANGE
  close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
#else
  for (int fd = 3; fd < 1024; ++fd) {
    if (fd != status_write) fcntl(fd, F_SETFD, FD_CLOEXEC);
  }
#endif
  execve(path, argv, envp);
  report_exec_failure(status_write, ExecStage::kExec, errno);
}

}  // namespace

std::string signal_name(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  return abbrev != nullptr ? std::string("SIG") + abbrev
                           : "signal " + std::to_string(sig);
}

std::string ExitStatus::describe() const {
  if (signaled) {
    const char* name = ::sigabbrev_np(signal);
    return std::string("killed by signal ") + std::to_string(signal) +
           (name != nullptr ? std::string(" (SIG") + name + ")" : "");
  }
  return "exited with code " + std::to_string(code);
}

std::vector<std::string> shebang_words(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  struct stat st {};
  if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return {};
  char head[kShebangBytes];
  const ssize_t n = ::read(fd.get(), head, sizeof(head));
  if (n < 2 || head[0] != '#' || head[1] != '!') return {};
  std::string_view line(head + 2, static_cast<size_t>(n) - 2);
  line = line.substr(0, line.find('\n'));
  // Split as the kernel does: on spaces and tabs.
  std::vector<std::string> words;
  size_t at = 0;
  while ((at = line.find_first_not_of(" \t", at)) != std::string_view::npos) {
    const size_t end = std::min(line.find_first_of(" \t", at), line.size());
    words.emplace_back(line.substr(at, end - at));
    at = end;
  }
  return words;
}

Result<std::string> find_executable(const std::string& name,
                                    const std::string& path_env) {
  if (name.empty()) return Error("empty command name");
  if (name.find('/') != std::string::npos) {
    struct stat st {};
    if (::stat(name.c_str(), &st) != 0) return describe_exec_error(name, errno);
    if (!is_executable_file(name)) return describe_exec_error(name, EACCES);
    return name;
  }
  std::string_view rest = path_env.empty() ? "/usr/local/bin:/usr/bin:/bin"
                                           : std::string_view(path_env);
  // Like execvp: a candidate that exists but cannot be run is reported
  // only when no later PATH entry has the command.
  std::string refused;
  while (true) {
    size_t colon = rest.find(':');
    std::string dir(rest.substr(0, colon));
    if (dir.empty()) dir = ".";
    std::string candidate = dir + "/" + name;
    if (is_executable_file(candidate)) return candidate;
    struct stat st {};
    // A candidate under a directory we cannot search may not exist: like
    // a shell, the search goes on and ends in "not found".
    if (refused.empty() && ::stat(candidate.c_str(), &st) == 0)
      refused = candidate;
    if (colon == std::string_view::npos) break;
    rest = rest.substr(colon + 1);
  }
  if (!refused.empty())
    return describe_exec_error(refused, EACCES)
        .context("command " + name + " found in PATH but cannot be run");
  return Error("command not found: " + name, ENOENT);
}

Error describe_exec_error(const std::string& path, int err) {
  switch (err) {
    case ENOENT: {
      struct stat st {};
      if (::stat(path.c_str(), &st) != 0)
        return Error(path + ": not found", ENOENT);
      std::string interpreter = shebang_interpreter(path);
      return Error(path + ": its interpreter " +
                       (interpreter.empty() ? "(the ELF program interpreter)"
                                            : interpreter) +
                       " was not found",
                   ENOENT);
    }
    case EACCES:
      return Error(path + ": " + permission_reason(path), EACCES);
    case ENOEXEC:
      return Error(path +
                       ": not an executable (neither an ELF file for this "
                       "machine nor a #! script)",
                   ENOEXEC);
    default:
      return Error("cannot execute " + path, err);
  }
}

int spawn_error_exit_code(const Error& error) {
  return error.code() == EACCES || error.code() == ENOEXEC ? 126 : 127;
}

Result<ChildProcess> ChildProcess::spawn(const SpawnOptions& options) {
  if (options.argv.empty()) return Error("spawn: empty argv");

  std::string path_env;
  if (options.env) {
    for (const auto& entry : *options.env) {
      if (entry.rfind("PATH=", 0) == 0) path_env = entry.substr(5);
    }
  } else if (const char* p = std::getenv("PATH")) {
    path_env = p;
  }
  RUNNER_ASSIGN_OR_RETURN(std::string path,
                          find_executable(options.argv[0], path_env), "spawn");

  // Everything the child needs is prepared before fork.
  std::vector<char*> argv;
  for (const auto& arg : options.argv)
    argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  if (options.env) {
    for (const auto& entry : *options.env)
      envp.push_back(const_cast<char*>(entry.c_str()));
  } else {
    for (char** e = environ; *e != nullptr; ++e) envp.push_back(*e);
  }
  envp.push_back(nullptr);

  int status_pipe[2];
  if (::pipe2(status_pipe, O_CLOEXEC) != 0) return errno_error("pipe2");
  UniqueFd status_read(status_pipe[0]), status_write(status_pipe[1]);
  UniqueFd release_read, release_write;
  if (options.suspended) {
    int release_pipe[2];
    if (::pipe2(release_pipe, O_CLOEXEC) != 0) return errno_error("pipe2");
    release_read.reset(release_pipe[0]);
    release_write.reset(release_pipe[1]);
  }

  const pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) return errno_error("fork");
  if (pid == 0) {
    child_main(options, path.c_str(), argv.data(), envp.data(),
               release_read.get(), release_write.get(), status_write.get(),
               parent);
  }

  ChildProcess child;
  child.pid_ = pid;
  child.path_ = path;
  child.cwd_ = options.cwd;
#if HAVE_SYS_PIDFD_OPEN
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd >= 0) {
    ::fcntl(pidfd, F_SETFD, FD_CLOEXEC);
    child.pidfd_.reset(pidfd);
  }
#endif
  child.status_fd_ = std::move(status_read);
  child.release_fd_ = std::move(release_write);
  status_write.reset();
  release_read.reset();
  if (!options.suspended) {
    RUNNER_RETURN_IF_ERROR(child.read_exec_status(), "spawn");
  }
  return child;
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      pidfd_(std::move(other.pidfd_)),
      release_fd_(std::move(other.release_fd_)),
      status_fd_(std::move(other.status_fd_)),
      reaped_(std::exchange(other.reaped_, true)),
      path_(std::move(other.path_)),
      cwd_(std::move(other.cwd_)) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    this->~ChildProcess();
    new (this) ChildProcess(std::move(other));
  }
  return *this;
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !reaped_) {
    ::kill(pid_, SIGKILL);
    int status;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
}

Status ChildProcess::read_exec_status() {
  if (!status_fd_) return {};
  int report[2] = {0, 0};  // ExecStage, errno
  ssize_t n;
  do {
    n = ::read(status_fd_.get(), report, sizeof(report));
  } while (n < 0 && errno == EINTR);
  status_fd_.reset();
  if (n == static_cast<ssize_t>(sizeof(report))) {
    // The child exits with 127 after reporting; reap it now.
    (void)wait();
    if (report[0] == static_cast<int>(ExecStage::kChdir))
      return Error("cannot enter the working directory " + cwd_, report[1]);
    if (report[0] == static_cast<int>(ExecStage::kNamespace))
      return Error("cannot join the benchmark's mount namespace", report[1]);
    return describe_exec_error(path_, report[1]);
  }
  return {};
}

Status ChildProcess::release() {
  if (!release_fd_) return {};
  char byte = 1;
  ssize_t n;
  do {
    n = ::write(release_fd_.get(), &byte, 1);
  } while (n < 0 && errno == EINTR);
  release_fd_.reset();
  if (n != 1) return errno_error("release child");
  return read_exec_status();
}

Status ChildProcess::send_signal(int sig) {
  if (reaped_) return Error("process already reaped", ESRCH);
#if HAVE_SYS_PIDFD_OPEN && defined(SYS_pidfd_send_signal)
  if (pidfd_ &&
      ::syscall(SYS_pidfd_send_signal, pidfd_.get(), sig, nullptr, 0) == 0)
    return {};
#endif
  if (::kill(pid_, sig) != 0) return errno_error("kill");
  return {};
}

Result<ExitStatus> ChildProcess::wait() {
  if (reaped_) return Error("process already reaped", ECHILD);
  int status = 0;
  pid_t r;
  do {
    r = ::waitpid(pid_, &status, 0);
  } while (r < 0 && errno == EINTR);
  if (r < 0) return errno_error("waitpid");
  reaped_ = true;
  return decode_status(status);
}

Result<std::optional<ExitStatus>> ChildProcess::try_wait() {
  if (reaped_) return Error("process already reaped", ECHILD);
  int status = 0;
  pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r < 0) return errno_error("waitpid");
  if (r == 0) return std::optional<ExitStatus>();
  reaped_ = true;
  return std::optional<ExitStatus>(decode_status(status));
}

}  // namespace runner::base
