// The benchmark's lifecycle while the io_context serves the FIFO: waits for
// it to exit, forwards SIGINT/SIGTERM/SIGHUP to it and escalates to SIGKILL
// when it has not exited `kill_after` later (or at a second signal), reaps
// its orphaned descendants (the runner is their subreaper), and once it
// exited kills and reaps whatever it left running. The exit code of an
// interrupted run is 128 + the signal the runner received, whatever the
// benchmark did with it.
#pragma once

#include <chrono>
#include <optional>

// Asio: specific headers only, <utility> first (Boost 1.74 + GCC 12).
#include <utility>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include "base/base.hpp"

namespace runner::agent {

// How long the benchmark has to exit after the runner forwarded a signal to
// it, before it gets SIGKILL (`--kill-after`).
inline constexpr std::chrono::milliseconds kDefaultKillAfter{5000};
// How long the runner waits for the processes it killed at the end to be
// reaped (a task in uninterruptible sleep dies late).
inline constexpr std::chrono::milliseconds kLeftoverReapTimeout{5000};

struct BenchmarkEnd {
  std::optional<base::ExitStatus> status;  // empty: waitpid failed
  int interrupted_by = 0;                  // signal the runner received
  bool escalated = false;                  // the benchmark got SIGKILL
  size_t leftovers_killed = 0;  // descendants still running at the end
  // The runner's exit code for this end (before artifacts and results).
  int exit_code() const;
};

class ChildWatcher {
 public:
  // Catches the signals from now on: create it before the benchmark is
  // spawned, so that a signal in between is forwarded rather than killing
  // the runner (a signal caught before wait() is handled there).
  ChildWatcher(boost::asio::io_context& io,
               std::chrono::milliseconds kill_after);

  // Runs `io` until the benchmark exits, reaps it, kills and reaps what it
  // left, and prints what happened. The signals stay caught (and ignored)
  // while this watcher lives, so the runner still writes its artifacts
  // after an interruption.
  BenchmarkEnd wait(base::ChildProcess& child);

 private:
  void start();
  void stop();
  void wait_signal();
  void wait_orphans();
  void kill_benchmark(const char* why);
  void poll();

  boost::asio::io_context& io_;
  base::ChildProcess* child_ = nullptr;
  std::chrono::milliseconds kill_after_;
  boost::asio::signal_set signals_;
  boost::asio::signal_set orphans_;  // SIGCHLD
  boost::asio::steady_timer kill_timer_;
  boost::asio::steady_timer poll_timer_;
  std::optional<boost::asio::posix::stream_descriptor> pidfd_;
  bool exited_ = false;
  int interrupted_by_ = 0;
  bool escalated_ = false;
  uint64_t ignored_signals_ = 0;
};

}  // namespace runner::agent
