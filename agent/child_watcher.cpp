#include "agent/child_watcher.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "base/base.hpp"

namespace runner::agent {
namespace {

constexpr const char* kLog = "agent";

std::string seconds_text(std::chrono::milliseconds ms) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g s",
                static_cast<double>(ms.count()) / 1000.0);
  return text;
}

// Kills and reaps what the benchmark left running; returns how many.
size_t kill_leftovers() {
  base::LeftoverCleanup left = base::kill_all_children(kLeftoverReapTimeout);
  if (!left.killed.empty()) {
    std::string pids;
    for (size_t i = 0; i < left.killed.size() && i < 10; ++i)
      pids += (i == 0 ? "" : " ") + std::to_string(left.killed[i]);
    if (left.killed.size() > 10) pids += " ...";
    RUNNER_LOG(kLog, kWarning)
        << "killed " << left.killed.size()
        << " process(es) the benchmark left running (pid " << pids << ")";
  }
  if (left.unreaped > 0) {
    RUNNER_LOG(kLog, kWarning)
        << left.unreaped << " process(es) left by the benchmark were still "
        << "there " << seconds_text(kLeftoverReapTimeout) << " after SIGKILL";
  }
  return left.killed.size();
}

// Says how the benchmark ended when it did not simply succeed.
void print_end(const BenchmarkEnd& end) {
  base::set_status_line("");  // the progress line, if drawn, goes first
  const std::string what = end.status ? end.status->describe()
                                      : std::string("could not be waited for");
  if (end.interrupted_by != 0) {
    std::fprintf(stderr, "runner: interrupted by %s: the benchmark %s%s\n",
                 base::signal_name(end.interrupted_by).c_str(), what.c_str(),
                 end.escalated ? " (the runner killed it)" : "");
  } else if (!end.status || !end.status->success()) {
    std::fprintf(stderr, "runner: the benchmark %s\n", what.c_str());
  }
}

}  // namespace

int BenchmarkEnd::exit_code() const {
  if (interrupted_by != 0) return 128 + interrupted_by;
  return status ? status->shell_code() : 1;
}

ChildWatcher::ChildWatcher(boost::asio::io_context& io,
                           std::chrono::milliseconds kill_after)
    : io_(io),
      kill_after_(kill_after),
      signals_(io, SIGINT, SIGTERM, SIGHUP),
      orphans_(io, SIGCHLD),
      kill_timer_(io),
      poll_timer_(io) {}

void ChildWatcher::start() {
  wait_signal();
  wait_orphans();
  int pidfd = child_->pidfd() >= 0 ? ::dup(child_->pidfd()) : -1;
  if (pidfd >= 0) {
    pidfd_.emplace(io_, pidfd);
    pidfd_->async_wait(boost::asio::posix::stream_descriptor::wait_read,
                       [this](const boost::system::error_code&) {
                         exited_ = true;
                         io_.stop();
                       });
  } else {
    poll();
  }
}

void ChildWatcher::wait_signal() {
  signals_.async_wait([this](const boost::system::error_code& ec, int sig) {
    if (ec) return;
    if (exited_) {
      ++ignored_signals_;  // finalizing: the artifacts are written anyway
    } else if (interrupted_by_ == 0) {
      interrupted_by_ = sig;
      RUNNER_LOG(kLog, kWarning)
          << "received " << base::signal_name(sig) << ": forwarding it to the "
          << "benchmark, which gets SIGKILL if it has not exited within "
          << seconds_text(kill_after_) << "; the runner will write what it has";
      (void)child_->send_signal(sig);
      kill_timer_.expires_after(kill_after_);
      kill_timer_.async_wait([this](const boost::system::error_code& err) {
        if (err || exited_) return;
        kill_benchmark(("it did not exit within " + seconds_text(kill_after_) +
                        " of " + base::signal_name(interrupted_by_))
                           .c_str());
      });
    } else if (!escalated_) {
      kill_benchmark(
          ("the runner received " + base::signal_name(sig) + " again").c_str());
    } else {
      ++ignored_signals_;
    }
    wait_signal();
  });
}

void ChildWatcher::kill_benchmark(const char* why) {
  escalated_ = true;
  kill_timer_.cancel();
  RUNNER_LOG(kLog, kWarning) << "killing the benchmark (SIGKILL): " << why;
  (void)child_->send_signal(SIGKILL);
}

void ChildWatcher::wait_orphans() {
  // Orphaned descendants are re-parented to the runner (subreaper): reap
  // them as they exit so that they do not pile up as zombies.
  orphans_.async_wait([this](const boost::system::error_code& ec, int) {
    if (ec) return;
    (void)base::reap_children_except(child_->pid());
    wait_orphans();
  });
}

void ChildWatcher::poll() {
  poll_timer_.expires_after(std::chrono::milliseconds(20));
  poll_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;
    // A zombie still answers kill(0): peek with waitid(WNOWAIT).
    siginfo_t info{};
    if (::kill(child_->pid(), 0) != 0 ||
        (::waitid(P_PID, static_cast<id_t>(child_->pid()), &info,
                  WEXITED | WNOHANG | WNOWAIT) == 0 &&
         info.si_pid != 0)) {
      exited_ = true;
      io_.stop();
      return;
    }
    poll();
  });
}

BenchmarkEnd ChildWatcher::wait(base::ChildProcess& child) {
  child_ = &child;
  start();
  io_.run();
  stop();
  BenchmarkEnd end;
  end.interrupted_by = interrupted_by_;
  end.escalated = escalated_;
  if (auto status = child_->wait()) end.status = *status;
  end.leftovers_killed = kill_leftovers();
  print_end(end);
  return end;
}

void ChildWatcher::stop() {
  exited_ = true;
  kill_timer_.cancel();
  poll_timer_.cancel();
  orphans_.cancel();
  if (pidfd_) pidfd_->cancel();
}

}  // namespace runner::agent
