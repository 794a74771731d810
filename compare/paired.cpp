// The paired local mode (paired.hpp). Each round runs one command through
// /bin/sh -c, stdin from /dev/null, stdout and stderr discarded, in a
// process group of its own; its time is CLOCK_MONOTONIC from just before
// the spawn to just after the reap. Pair p (warmup pairs counted first) runs
// base then head when p is even, head then base when odd: A B B A A B ...
//
// While the rounds run, SIGINT, SIGTERM, SIGHUP and SIGCHLD are blocked in
// the calling thread and waited for with sigtimedwait: an interruption is
// forwarded to the round's process group, which gets SIGKILL when it has not
// exited kKillAfter later; the round is reaped and run_paired returns an
// Error (code EINTR). After every round, whatever the command left running
// in its process group is killed, so that no round runs beside the next.
#include "compare/paired.hpp"

#include <fcntl.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/base.hpp"
#include "compare/verdict.hpp"

namespace runner::compare {
namespace {

using std::chrono::milliseconds;

// How long an interrupted round has to exit before its group gets SIGKILL.
constexpr milliseconds kKillAfter{2000};
// Longest wait for a signal before the round is polled anyway.
constexpr milliseconds kPollEvery{500};

// Blocks the signals that interrupt the rounds (and SIGCHLD, which says a
// round ended) in the calling thread while it lives; wait() takes one.
class SignalBlock {
 public:
  SignalBlock() {
    ::sigemptyset(&set_);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) ::sigaddset(&set_, sig);
    ::pthread_sigmask(SIG_BLOCK, &set_, &old_);
  }
  ~SignalBlock() { ::pthread_sigmask(SIG_SETMASK, &old_, nullptr); }
  SignalBlock(const SignalBlock&) = delete;
  SignalBlock& operator=(const SignalBlock&) = delete;

  // The next of these signals, or 0 when none came within `timeout`.
  int wait(milliseconds timeout) const {
    timespec ts{static_cast<time_t>(timeout.count() / 1000),
                static_cast<long>(timeout.count() % 1000) * 1'000'000};
    int sig = ::sigtimedwait(&set_, nullptr, &ts);
    return sig > 0 ? sig : 0;
  }

 private:
  sigset_t set_{}, old_{};
};

// One round's process: the shell and its process group.
struct Round {
  base::ChildProcess child;
  pid_t group = 0;  // 0: setpgid failed, only the shell is signalled

  void signal_all(int sig) const {
    if (group > 0)
      ::kill(-group, sig);
    else
      ::kill(child.pid(), sig);
  }
};

base::Result<Round> start_round(const std::string& command, int dev_null) {
  base::SpawnOptions spawn;
  spawn.argv = {"/bin/sh", "-c", command};
  spawn.stdin_fd = spawn.stdout_fd = spawn.stderr_fd = dev_null;
  // Suspended until it is in its own process group (setpgid from here
  // fails once it has exec'd).
  spawn.suspended = true;
  RUNNER_ASSIGN_OR_RETURN(base::ChildProcess child,
                          base::ChildProcess::spawn(spawn), "/bin/sh");
  pid_t pid = child.pid();
  Round round{std::move(child), ::setpgid(pid, pid) == 0 ? pid : 0};
  RUNNER_RETURN_IF_ERROR(round.child.release(), "/bin/sh");
  return round;
}

// Waits up to `timeout` for the round's shell to exit; nullopt if it runs.
base::Result<std::optional<base::ExitStatus>> wait_exit(
    Round& round, const SignalBlock& signals, milliseconds timeout) {
  const uint64_t deadline =
      base::monotonic_ns() + static_cast<uint64_t>(timeout.count()) * 1'000'000;
  while (true) {
    RUNNER_ASSIGN_OR_RETURN(auto status, round.child.try_wait(), "waitpid");
    const uint64_t now = base::monotonic_ns();
    if (status || now >= deadline) return status;
    const auto left_ms = static_cast<int64_t>((deadline - now) / 1'000'000 + 1);
    signals.wait(milliseconds(std::min<int64_t>(left_ms, 50)));
  }
}

// Forwards `sig` to the round, SIGKILLs it after kKillAfter, reaps it.
base::Error interrupt(Round& round, const SignalBlock& signals, int sig) {
  round.signal_all(sig);
  auto status = wait_exit(round, signals, kKillAfter);
  round.signal_all(SIGKILL);
  if (status.has_value() && !*status) (void)round.child.wait();
  return base::Error("interrupted by " + base::signal_name(sig), EINTR);
}

// Runs `command` once; its wall time in nanoseconds, spawn to reap.
base::Result<double> time_round(const std::string& command, int dev_null,
                                const SignalBlock& signals) {
  const uint64_t start = base::monotonic_ns();
  RUNNER_ASSIGN_OR_RETURN(Round round, start_round(command, dev_null),
                          "cannot start it");
  std::optional<base::ExitStatus> status;
  while (!status) {
    int sig = signals.wait(kPollEvery);
    if (sig != 0 && sig != SIGCHLD) return interrupt(round, signals, sig);
    RUNNER_ASSIGN_OR_RETURN(status, round.child.try_wait(), "waitpid");
  }
  const uint64_t end = base::monotonic_ns();
  round.signal_all(SIGKILL);  // what it left running in its group
  if (!status->success()) {
    std::string hint;
    if (!status->signaled && status->code == 127)
      hint = " (the shell did not find a command)";
    if (!status->signaled && status->code == 126)
      hint = " (the shell found a command it cannot execute)";
    return base::Error(status->describe() + hint);
  }
  return static_cast<double>(end - start);
}

struct PairedTimes {
  std::vector<double> base, head;
};

// The warmup pairs, then the measured ones, in ABBA order.
base::Result<PairedTimes> run_rounds(const CompareOptions& options) {
  base::UniqueFd dev_null(::open("/dev/null", O_RDWR | O_CLOEXEC));
  if (!dev_null) return base::errno_error("open /dev/null");
  const SignalBlock signals;
  const uint64_t pairs = options.warmup_pairs + options.pairs;
  PairedTimes times;
  for (uint64_t pair = 0; pair < pairs; ++pair) {
    const bool measured = pair >= options.warmup_pairs;
    for (int slot = 0; slot < 2; ++slot) {
      const bool head = (slot == 1) == (pair % 2 == 0);
      const std::string& command = head ? options.head[0] : options.base[0];
      auto time = time_round(command, dev_null.get(), signals);
      if (!time.has_value()) {
        const uint64_t round = 2 * pair + static_cast<uint64_t>(slot) + 1;
        return std::move(time).error().context(
            std::string(head ? "head" : "base") + " command '" + command +
            "', round " + std::to_string(round) + " of " +
            std::to_string(2 * pairs) + (measured ? "" : " (warmup)"));
      }
      if (measured) (head ? times.head : times.base).push_back(*time);
    }
  }
  return times;
}

}  // namespace

base::Result<format::CompareReport> run_paired(const CompareOptions& options,
                                               std::ostream& err) {
  if (options.base.size() != 1 || options.head.size() != 1)
    return base::Error(
        "paired mode: needs exactly one base and one head "
        "command");
  if (options.base[0].empty() || options.head[0].empty())
    return base::Error("paired mode: a command is empty");
  err << "runner compare --paired: " << options.pairs << " pairs (ABBA order, "
      << options.warmup_pairs << " warmup pair"
      << (options.warmup_pairs == 1 ? "" : "s") << " first)\n"
      << std::flush;
  RUNNER_ASSIGN_OR_RETURN(PairedTimes times, run_rounds(options),
                          "paired mode");

  format::CompareReport report;
  report.base.command = options.base[0];
  report.head.command = options.head[0];
  report.base.benchmarks = report.head.benchmarks = 1;
  report.settings = options.settings;
  report.settings.paired = true;
  format::BenchmarkComparison comparison =
      compare_paired(times.base, times.head, report.settings);
  comparison.uri = "paired:" + options.head[0];
  comparison.name = "paired: " + options.head[0];
  report.benchmarks.push_back(std::move(comparison));
  apply_verdicts(report.benchmarks, report.settings);
  return report;
}

}  // namespace runner::compare
