#include "base/process_tree.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "base/unique_fd.hpp"

namespace runner::base {
namespace {

struct StatLine {
  pid_t ppid = 0;
  char state = '?';
};

// ppid and state from /proc/<pid>/stat: "pid (comm) S ppid ..."; comm may
// hold spaces and parentheses, so parsing starts after the last ')'.
bool read_stat(const char* pid, StatLine& out) {
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/%s/stat", pid);
  UniqueFd fd(::open(path, O_RDONLY | O_CLOEXEC));
  if (!fd) return false;
  char buf[512];
  ssize_t n = ::read(fd.get(), buf, sizeof(buf) - 1);
  if (n <= 0) return false;
  buf[n] = '\0';
  const char* close = std::strrchr(buf, ')');
  if (close == nullptr || close[1] != ' ' || close[2] == '\0') return false;
  out.state = close[2];
  out.ppid = static_cast<pid_t>(std::strtol(close + 3, nullptr, 10));
  return true;
}

bool is_pid_name(const char* name) {
  if (*name == '\0') return false;
  for (const char* c = name; *c != '\0'; ++c)
    if (*c < '0' || *c > '9') return false;
  return true;
}

}  // namespace

Status become_child_subreaper() {
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0)
    return errno_error("prctl(PR_SET_CHILD_SUBREAPER)");
  return {};
}

std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> out;
  DIR* dir = ::opendir("/proc");
  if (dir == nullptr) return out;
  while (const dirent* entry = ::readdir(dir)) {
    if (!is_pid_name(entry->d_name)) continue;
    StatLine stat;
    if (read_stat(entry->d_name, stat) && stat.ppid == parent)
      out.push_back(static_cast<pid_t>(std::atoi(entry->d_name)));
  }
  ::closedir(dir);
  return out;
}

size_t reap_children_except(pid_t keep) {
  size_t reaped = 0;
  while (true) {
    siginfo_t info{};
    if (::waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0) break;
    if (info.si_pid == 0 || info.si_pid == keep) break;
    if (::waitpid(info.si_pid, nullptr, WNOHANG) != info.si_pid) break;
    ++reaped;
  }
  return reaped;
}

LeftoverCleanup kill_all_children(std::chrono::milliseconds timeout) {
  LeftoverCleanup out;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const pid_t self = ::getpid();
  while (true) {
    // Only unreaped children of ours are signalled: their pids cannot have
    // been reused.
    for (pid_t child : children_of(self)) {
      StatLine stat;
      std::string name = std::to_string(child);
      if (!read_stat(name.c_str(), stat) || stat.state == 'Z') continue;
      if (::kill(child, SIGKILL) == 0) {
        bool seen = false;
        for (pid_t k : out.killed) seen = seen || k == child;
        if (!seen) out.killed.push_back(child);
      }
    }
    size_t reaped = 0;
    pid_t r;
    while ((r = ::waitpid(-1, nullptr, WNOHANG)) > 0) ++reaped;
    out.reaped += reaped;
    if (r < 0 && errno == ECHILD) break;
    if (reaped > 0) continue;  // their children may be ours now
    if (std::chrono::steady_clock::now() >= deadline) {
      out.unreaped = children_of(self).size();
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return out;
}

}  // namespace runner::base
