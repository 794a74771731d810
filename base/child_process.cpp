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

#include <cstdlib>
#include <cstring>
#include <utility>

#include "config.h"

namespace runner::base {
namespace {

bool is_executable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
         ::access(path.c_str(), X_OK) == 0;
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
int join_namespaces(const SpawnOptions& options) {
  if (options.mount_namespace_fd < 0) return 0;
  char cwd[PATH_MAX];
  bool have_cwd = syscall(SYS_getcwd, cwd, sizeof(cwd)) > 0 && cwd[0] == '/';
  if (options.user_namespace_fd >= 0 &&
      setns(options.user_namespace_fd, CLONE_NEWUSER) != 0)
    return errno;
  if (setns(options.mount_namespace_fd, CLONE_NEWNS) != 0) return errno;
  if (have_cwd && chdir(cwd) != 0) return errno;
  return 0;
}

// Runs in the forked child: only async-signal-safe calls until exec.
[[noreturn]] void child_main(const SpawnOptions& options, const char* path,
                             char* const* argv, char* const* envp,
                             int release_read, int release_write,
                             int status_write) {
  sigset_t all;
  sigemptyset(&all);
  sigprocmask(SIG_SETMASK, &all, nullptr);
  for (int sig : {SIGINT, SIGTERM, SIGPIPE, SIGHUP, SIGQUIT, SIGCHLD}) {
    signal(sig, SIG_DFL);
  }
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
  int err = join_namespaces(options);
  if (err != 0) {
  } else if (!options.cwd.empty() && chdir(options.cwd.c_str()) != 0) {
    err = errno;
  } else {
#if HAVE_CLOSE_RANGE
    close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
#else
    for (int fd = 3; fd < 1024; ++fd) {
      if (fd != status_write) fcntl(fd, F_SETFD, FD_CLOEXEC);
    }
#endif
    execve(path, argv, envp);
    err = errno;
  }
  ssize_t ignored = write(status_write, &err, sizeof(err));
  (void)ignored;
  _exit(127);
}

}  // namespace

std::string ExitStatus::describe() const {
  if (signaled) {
    const char* name = ::sigabbrev_np(signal);
    return std::string("killed by signal ") + std::to_string(signal) +
           (name != nullptr ? std::string(" (SIG") + name + ")" : "");
  }
  return "exited with code " + std::to_string(code);
}

Result<std::string> find_executable(const std::string& name,
                                    const std::string& path_env) {
  if (name.empty()) return Error("empty command name");
  if (name.find('/') != std::string::npos) {
    if (::access(name.c_str(), F_OK) != 0)
      return errno_error("command not found: " + name);
    if (!is_executable_file(name))
      return Error("not an executable file: " + name, EACCES);
    return name;
  }
  std::string_view rest = path_env.empty() ? "/usr/local/bin:/usr/bin:/bin"
                                           : std::string_view(path_env);
  while (true) {
    size_t colon = rest.find(':');
    std::string dir(rest.substr(0, colon));
    if (dir.empty()) dir = ".";
    std::string candidate = dir + "/" + name;
    if (is_executable_file(candidate)) return candidate;
    if (colon == std::string_view::npos) break;
    rest = rest.substr(colon + 1);
  }
  return Error("command not found: " + name, ENOENT);
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

  pid_t pid = ::fork();
  if (pid < 0) return errno_error("fork");
  if (pid == 0) {
    child_main(options, path.c_str(), argv.data(), envp.data(),
               release_read.get(), release_write.get(), status_write.get());
  }

  ChildProcess child;
  child.pid_ = pid;
  child.path_ = path;
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
    RUNNER_RETURN_IF_ERROR(child.read_exec_status(), "spawn " + path);
  }
  return child;
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      pidfd_(std::move(other.pidfd_)),
      release_fd_(std::move(other.release_fd_)),
      status_fd_(std::move(other.status_fd_)),
      reaped_(std::exchange(other.reaped_, true)),
      path_(std::move(other.path_)) {}

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
  int err = 0;
  ssize_t n;
  do {
    n = ::read(status_fd_.get(), &err, sizeof(err));
  } while (n < 0 && errno == EINTR);
  status_fd_.reset();
  if (n == static_cast<ssize_t>(sizeof(err))) {
    // The child exits with 127 after reporting; reap it now.
    (void)wait();
    return errno_error("exec " + path_, err);
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
