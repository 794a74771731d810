// process_tree: the subreaper finds a daemon that escaped into its own
// session, kill_all_children kills and reaps it, reap_children_except
// leaves the kept child alone; LogLimiter caps repeated messages. Real
// processes (sh, sleep) in this test process, which becomes a subreaper.
#include "base/process_tree.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>

#include <doctest/doctest.h>

#include "base/child_process.hpp"
#include "base/fs.hpp"
#include "base/log_limiter.hpp"
#include "tests/support/temp_dir.hpp"

namespace {

bool contains(const std::vector<pid_t>& pids, pid_t pid) {
  return std::find(pids.begin(), pids.end(), pid) != pids.end();
}

// Forks a child that runs `seconds` of sleep (or exits at once for 0).
pid_t fork_sleeper(int seconds) {
  pid_t pid = ::fork();
  if (pid == 0) {
    if (seconds > 0) ::sleep(static_cast<unsigned>(seconds));
    _exit(0);
  }
  return pid;
}

}  // namespace

TEST_SUITE("base") {
  TEST_CASE("a daemon in its own session is re-parented here and killed") {
    REQUIRE(runner::base::become_child_subreaper());
    runner::testing::TempDir dir;
    const std::string pid_file = dir.file("daemon.pid");
    // The subshell starts a new session's sleep in the background and
    // exits: the sleep is an orphan, ours as subreaper.
    runner::base::SpawnOptions opts;
    opts.argv = {"/bin/sh", "-c",
                 "(setsid sleep 300 & echo $! > " + pid_file + ".tmp; mv " +
                     pid_file + ".tmp " + pid_file + ")"};
    auto sh = runner::base::ChildProcess::spawn(opts);
    REQUIRE(sh);
    REQUIRE(sh->wait());
    auto text = runner::base::read_file(pid_file);
    REQUIRE(text);
    const pid_t daemon = static_cast<pid_t>(std::atoi(text->c_str()));
    REQUIRE(daemon > 0);
    // Once the subshell exited the sleep is ours; setsid() may still be
    // on its way in it (bounded wait).
    auto escaped = [&] {
      return contains(runner::base::children_of(::getpid()), daemon) &&
             ::getsid(daemon) == daemon;
    };
    for (int i = 0; i < 500 && !escaped(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    CHECK(contains(runner::base::children_of(::getpid()), daemon));
    CHECK(::getsid(daemon) == daemon);  // its own session
    auto cleanup =
        runner::base::kill_all_children(std::chrono::milliseconds(5000));
    CHECK(contains(cleanup.killed, daemon));
    CHECK(cleanup.unreaped == 0);
    CHECK(::kill(daemon, 0) != 0);  // killed and reaped: no such process
    CHECK(runner::base::children_of(::getpid()).empty());
  }

  TEST_CASE("reap_children_except reaps exited children, never the kept one") {
    const pid_t keep = fork_sleeper(0);  // exits at once, must stay unreaped
    REQUIRE(keep > 0);
    // Let it exit first, so it is the first zombie waitid sees.
    siginfo_t info{};
    REQUIRE(::waitid(P_PID, static_cast<id_t>(keep), &info,
                     WEXITED | WNOWAIT) == 0);
    const pid_t other = fork_sleeper(0);
    REQUIRE(other > 0);
    REQUIRE(::waitid(P_PID, static_cast<id_t>(other), &info,
                     WEXITED | WNOWAIT) == 0);
    (void)runner::base::reap_children_except(keep);
    // The kept child is still there to be waited for.
    int status = 0;
    CHECK(::waitpid(keep, &status, WNOHANG) == keep);
    // The other one was reaped by the call, or is reaped now that `keep`
    // no longer hides it.
    (void)runner::base::reap_children_except(-1);
    CHECK(::waitpid(other, &status, WNOHANG) == -1);
    CHECK(errno == ECHILD);
  }

  TEST_CASE("LogLimiter lets the first N through and counts the rest") {
    runner::base::LogLimiter limiter(3);
    int logged = 0;
    std::string last_note;
    for (int i = 0; i < 60000; ++i) {
      if (limiter.admit()) {
        ++logged;
        last_note = limiter.note();
      }
    }
    CHECK(logged == 3);
    CHECK(last_note.find("counted, not logged") != std::string::npos);
    CHECK(limiter.seen() == 60000);
    CHECK(limiter.suppressed() == 59997);
  }
}
