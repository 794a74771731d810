// Runs a check in a forked child with a time limit, so that a call that
// blocks (on a FIFO, a device) fails the test instead of hanging it.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <thread>

#include <doctest/doctest.h>

namespace runner::testing {

enum class Outcome { kOk, kFailed, kHung };

// Runs `fn` in a child process and returns whether it returned true, false
// (or threw), or had not finished after 10 s (then the child is killed).
inline Outcome run_bounded(const std::function<bool()>& fn) {
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    bool ok = false;
    try {
      ok = fn();
    } catch (...) {  // e.g. bad_alloc: never back into doctest in the child
    }
    ::_exit(ok ? 0 : 1);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return Outcome::kHung;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? Outcome::kOk
                                                       : Outcome::kFailed;
}

}  // namespace runner::testing
