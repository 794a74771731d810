// SpawnOptions::parent_death_signal: a child spawned with it dies when the
// process that spawned it dies, even when that process never gets to kill
// it (here it just _exits; the runner's case is a SIGKILL). This test
// process is a subreaper, so the orphan is re-parented here and its end can
// be waited for directly.
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <doctest/doctest.h>

#include "base/child_process.hpp"

namespace {

// Forks a process that spawns `sleep 300` with `death_signal` and exits at
// once; returns the sleep's pid (read from a pipe).
pid_t orphan_sleep(int death_signal) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  pid_t middle = ::fork();
  REQUIRE(middle >= 0);
  if (middle == 0) {
    ::close(fds[0]);
    runner::base::SpawnOptions opts;
    opts.argv = {"sleep", "300"};
    opts.parent_death_signal = death_signal;
    auto child = runner::base::ChildProcess::spawn(opts);
    pid_t pid = child ? child->pid() : -1;
    (void)!::write(fds[1], &pid, sizeof(pid));
    _exit(0);  // no destructor: the child is not killed by us
  }
  ::close(fds[1]);
  pid_t pid = -1;
  REQUIRE(::read(fds[0], &pid, sizeof(pid)) == sizeof(pid));
  ::close(fds[0]);
  REQUIRE(::waitpid(middle, nullptr, 0) == middle);
  REQUIRE(pid > 0);
  return pid;
}

// Waits (at most 10 s) for our child `pid` to end; its wait status, or -1.
int wait_bounded(pid_t pid) {
  for (int i = 0; i < 1000; ++i) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  return -1;
}

}  // namespace

TEST_SUITE("base") {
  TEST_CASE("a child spawned with parent_death_signal dies with its parent") {
    REQUIRE(::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0);
    const pid_t sleeper = orphan_sleep(SIGKILL);
    const int status = wait_bounded(sleeper);
    REQUIRE(status != -1);
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGKILL);
  }

  TEST_CASE("without parent_death_signal the orphan lives on") {
    REQUIRE(::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0);
    const pid_t sleeper = orphan_sleep(0);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    int status = 0;
    CHECK(::waitpid(sleeper, &status, WNOHANG) == 0);  // still running
    ::kill(sleeper, SIGKILL);
    ::waitpid(sleeper, nullptr, 0);
  }
}
