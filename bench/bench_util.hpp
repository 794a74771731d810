// Timing and process helpers shared by the benchmarks under bench/ (one
// median, one clock, one way to run a command and measure it).
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace runner::bench {

inline double now_ms() {
  using Clock = std::chrono::steady_clock;
  return std::chrono::duration<double, std::milli>(
             Clock::now().time_since_epoch())
      .count();
}

// The middle value (the mean of the two middle ones for an even count).
inline double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  if (n == 0) return 0;
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

struct Run {
  int code = -1;  // exit code, 128+signal when killed, -1 when not started
  double wall_ms = 0;
  double max_rss_mib = 0;  // of the largest process of its tree
};

// Runs argv (PATH lookup) with stdin, stdout and stderr on /dev/null and
// waits for it: its exit code, wall time and peak RSS (wait4's ru_maxrss).
inline Run run_quietly(const std::vector<std::string>& argv) {
  Run run;
  std::vector<char*> args;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  for (int fd : {0, 1, 2})
    posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", O_RDWR, 0);
  const double start = now_ms();
  pid_t pid = -1;
  int err =
      ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (err != 0) {
    std::fprintf(stderr, "bench: %s: %s\n", args[0], std::strerror(err));
    return run;
  }
  int status = 0;
  rusage usage{};
  while (::wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  run.wall_ms = now_ms() - start;
  run.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  run.max_rss_mib = static_cast<double>(usage.ru_maxrss) / 1024.0;
  return run;
}

}  // namespace runner::bench
