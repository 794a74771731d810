// ChildProcess: spawns argv (no shell) with a given environment and working
// directory, optionally suspended until release(), and owns the child until
// it is reaped. Inherited fds above 2 are closed at exec.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "base/unique_fd.hpp"

namespace runner::base {

struct SpawnOptions {
  std::vector<std::string> argv;
  // "KEY=VALUE" entries; std::nullopt inherits the caller's environment.
  std::optional<std::vector<std::string>> env;
  // Working directory; empty keeps the caller's.
  std::string cwd;
  // The child stops before exec until release() is called, so that it can be
  // prepared (perf events opened on its pid) without missing anything.
  bool suspended = false;
  // Redirect the child's stdin/stdout/stderr (-1 keeps the caller's).
  int stdin_fd = -1;
  int stdout_fd = -1;
  int stderr_fd = -1;
  // Namespaces the child joins with setns() just before exec, e.g. those of
  // a base::MountNamespace (user first: it grants the right to join the
  // mount namespace); -1 keeps the caller's. The child stays in the same
  // working directory (path), which setns() into a mount namespace resets.
  int user_namespace_fd = -1;
  int mount_namespace_fd = -1;
  // PR_SET_PDEATHSIG in the child (0: none): the child gets this signal
  // when the thread that spawned it dies, even by SIGKILL. Spawn from a
  // thread that lives as long as the child (the main thread).
  int parent_death_signal = 0;
};

struct ExitStatus {
  bool signaled = false;
  int code = 0;    // exit code when !signaled
  int signal = 0;  // terminating signal when signaled
  // Shell convention: the exit code, or 128 + signal.
  int shell_code() const { return signaled ? 128 + signal : code; }
  bool success() const { return !signaled && code == 0; }
  std::string describe() const;
};

// "SIGTERM", or "signal 64" for a number without a name.
std::string signal_name(int sig);

// The words of a regular file's "#!" first line, its interpreter first,
// split on spaces and tabs as the kernel splits them; empty when the file
// is not a regular file or has no such line. Reads kShebangBytes at most
// (a FIFO or device is never read).
inline constexpr size_t kShebangBytes = 256;
std::vector<std::string> shebang_words(const std::string& path);

// Resolves argv[0] against PATH like execvp (a name with '/' is taken as is).
// Errors name the cause: "not found", "is a directory", "no execute
// permission (mode 0644)", "not searchable" for a directory on the path;
// the Error's code is the errno (ENOENT, EACCES).
Result<std::string> find_executable(const std::string& name,
                                    const std::string& path_env);

// The error for an execve of `path` that failed with `err`, in words:
// ENOENT "not found" (or its interpreter is missing), EACCES with the
// reason, ENOEXEC "not an executable". Code: err.
Error describe_exec_error(const std::string& path, int err);

// Shell convention for a command that could not be started: 126 when it
// was found but cannot be executed (EACCES, ENOEXEC), else 127.
int spawn_error_exit_code(const Error& error);

class ChildProcess {
 public:
  static Result<ChildProcess> spawn(const SpawnOptions& options);

  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  // Kills (SIGKILL) and reaps a child that was never waited for.
  ~ChildProcess();

  pid_t pid() const { return pid_; }
  // pidfd of the child when the kernel supports it, else -1.
  int pidfd() const { return pidfd_.get(); }

  // Lets a suspended child exec; reports an exec failure (e.g. ENOENT).
  Status release();
  Status send_signal(int signal);
  Result<ExitStatus> wait();
  // std::nullopt while the child still runs.
  Result<std::optional<ExitStatus>> try_wait();
  bool reaped() const { return reaped_; }

 private:
  ChildProcess() = default;
  Status read_exec_status();

  pid_t pid_ = -1;
  UniqueFd pidfd_;
  UniqueFd release_fd_;  // write end: closing it releases a suspended child
  UniqueFd status_fd_;   // read end: EOF on exec, or the exec errno
  bool reaped_ = false;
  std::string path_;
  std::string cwd_;
};

}  // namespace runner::base
