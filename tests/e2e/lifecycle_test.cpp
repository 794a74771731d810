// End-to-end tests of the benchmark's lifecycle under the real runner:
// signal escalation (a benchmark that ignores SIGTERM gets SIGKILL after the
// grace period, and the exit status says the run was interrupted), cleanup
// of a daemon the benchmark leaves behind, PR_SET_PDEATHSIG (a SIGKILLed
// runner takes its benchmark with it), spawn errors that name the cause,
// and the runner's memory, which must not grow with the processes the
// benchmark forks.
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>

#include <doctest/doctest.h>

#include "base/child_process.hpp"
#include "base/fs.hpp"
#include "base/unique_fd.hpp"
#include "tests/e2e/e2e_support.hpp"
#include "tests/support/perf_events.hpp"
#include "tests/support/skip.hpp"
#include "tests/support/temp_dir.hpp"

using runner::testing::binary;
using runner::testing::run_process;
using runner::testing::runner_argv;
using runner::testing::TempDir;

namespace {

// Polls `done` every 10 ms for at most `limit` (a bound on a wait, not a
// timing assertion).
bool wait_until(const std::function<bool()>& done, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

// No such process, or a zombie (reaped here when it is our child).
bool process_gone(pid_t pid) {
  ::waitpid(pid, nullptr, WNOHANG);
  if (::kill(pid, 0) != 0) return errno == ESRCH;
  auto stat = runner::base::read_file("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return true;
  size_t close = stat->rfind(')');
  return close != std::string::npos && close + 2 < stat->size() &&
         (*stat)[close + 2] == 'Z';
}

pid_t read_pid(const std::string& path) {
  auto text = runner::base::read_file(path);
  REQUIRE_MESSAGE(text.has_value(), "cannot read ", path);
  return static_cast<pid_t>(std::atoi(text->c_str()));
}

// Kills a process a failed check left behind.
void kill_if_alive(pid_t pid) {
  if (pid > 0 && !process_gone(pid)) {
    ::kill(pid, SIGKILL);
    wait_until([&] { return process_gone(pid); }, std::chrono::seconds(5));
  }
}

// A runner in the background, stderr to `err_path`.
runner::base::ChildProcess start_runner(std::vector<std::string> argv,
                                        const std::string& err_path) {
  runner::base::UniqueFd devnull(::open("/dev/null", O_RDWR | O_CLOEXEC));
  runner::base::UniqueFd err(
      ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  REQUIRE(err);
  runner::base::SpawnOptions opts;
  opts.argv = std::move(argv);
  opts.stdin_fd = devnull.get();
  opts.stdout_fd = devnull.get();
  opts.stderr_fd = err.get();
  auto child = runner::base::ChildProcess::spawn(opts);
  REQUIRE(child);
  return std::move(*child);
}

// Waits (bounded) for the runner to exit; kills it when it does not.
std::optional<runner::base::ExitStatus> wait_runner(
    runner::base::ChildProcess& runner, std::chrono::seconds limit) {
  std::optional<runner::base::ExitStatus> status;
  wait_until(
      [&] {
        auto st = runner.try_wait();
        if (st && st->has_value()) status = **st;
        return status.has_value() || !st;
      },
      limit);
  if (!status && !runner.reaped()) {
    (void)runner.send_signal(SIGKILL);
    (void)runner.wait();
  }
  return status;
}

// `runner run EXTRA... -- COMMAND...` in the background (stderr to
// DIR/err), returned once the benchmark created `ready`.
runner::base::ChildProcess start_until_ready(
    const TempDir& dir, const std::vector<std::string>& extra,
    const std::vector<std::string>& command, const std::string& ready) {
  auto runner = start_runner(
      runner_argv("run", dir.file("profile"), dir.path(), extra, command),
      dir.file("err"));
  REQUIRE(wait_until([&] { return runner::testing::file_exists(ready); },
                     std::chrono::seconds(60)));
  return runner;
}

std::string file_text(const std::string& path) {
  return runner::base::read_file(path).value_or("");
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE("a benchmark that ignores SIGTERM gets SIGKILL after 5 s") {
    TempDir dir;
    const std::string pid_file = dir.file("bench.pid");
    auto runner =
        start_until_ready(dir, {"--allow-no-profile", "--allow-empty"},
                          {binary("IGNORE_TERM_BIN"), pid_file}, pid_file);
    const pid_t bench = read_pid(pid_file);
    REQUIRE(runner.send_signal(SIGTERM));
    auto status = wait_runner(runner, std::chrono::seconds(60));
    const std::string err = file_text(dir.file("err"));
    INFO(err);
    CHECK(process_gone(bench));
    kill_if_alive(bench);
    REQUIRE(status.has_value());
    // The runner was interrupted: 128 + SIGTERM, not the benchmark's 137.
    CHECK(status->code == 128 + SIGTERM);
    CHECK(contains(err, "forwarding it to the benchmark"));
    CHECK(contains(err,
                   "killing the benchmark (SIGKILL): it did not exit "
                   "within 5 s of SIGTERM"));
    CHECK(contains(err,
                   "interrupted by SIGTERM: the benchmark killed by "
                   "signal 9"));
    // What was collected is still written.
    CHECK(runner::testing::file_exists(dir.file("profile/runner.log")));
  }

  TEST_CASE("a second signal kills the benchmark at once") {
    TempDir dir;
    const std::string pid_file = dir.file("bench.pid");
    auto runner = start_until_ready(
        dir, {"--allow-no-profile", "--allow-empty", "--kill-after", "600"},
        {binary("IGNORE_TERM_BIN"), pid_file}, pid_file);
    const pid_t bench = read_pid(pid_file);
    REQUIRE(runner.send_signal(SIGINT));
    // The second signal only after the first was handled (two pending
    // signals of one kind are delivered once).
    REQUIRE(wait_until(
        [&] { return contains(file_text(dir.file("err")), "forwarding it"); },
        std::chrono::seconds(30)));
    REQUIRE(runner.send_signal(SIGINT));
    auto status = wait_runner(runner, std::chrono::seconds(60));
    const std::string err = file_text(dir.file("err"));
    INFO(err);
    CHECK(process_gone(bench));
    kill_if_alive(bench);
    REQUIRE(status.has_value());
    CHECK(status->code == 128 + SIGINT);
    CHECK(contains(err, "if it has not exited within 600 s"));
    CHECK(contains(err,
                   "killing the benchmark (SIGKILL): the runner "
                   "received SIGINT again"));
  }

  TEST_CASE("a benchmark that exits 0 after SIGTERM does not make a success") {
    // sh runs `sleep` and dies of the forwarded SIGTERM... unless it traps
    // it: here it exits 0, and the runner still reports the interruption.
    TempDir dir;
    const std::string ready = dir.file("ready");
    const std::string script =
        "trap 'exit 0' TERM; : > " + ready + "; while :; do sleep 0.05; done";
    auto runner =
        start_until_ready(dir, {"--allow-no-profile", "--allow-empty"},
                          {"/bin/sh", "-c", script}, ready);
    REQUIRE(runner.send_signal(SIGTERM));
    auto status = wait_runner(runner, std::chrono::seconds(60));
    const std::string err = file_text(dir.file("err"));
    INFO(err);
    REQUIRE(status.has_value());
    CHECK(status->code == 128 + SIGTERM);
    CHECK(contains(err,
                   "interrupted by SIGTERM: the benchmark exited with "
                   "code 0"));
  }

  TEST_CASE("a daemon the benchmark leaves behind is killed at the end") {
    TempDir dir;
    const std::string pid_file = dir.file("daemon.pid");
    auto r = run_process(runner_argv("run", dir.file("profile"), dir.path(),
                                     {"--allow-no-profile", "--allow-empty"},
                                     {binary("LEAVE_DAEMON_BIN"), pid_file}),
                         {}, "", 120);
    INFO(r.err);
    REQUIRE(runner::testing::file_exists(pid_file));
    const pid_t daemon = read_pid(pid_file);
    // It ran in its own session, so no process-group kill would reach it.
    CHECK(process_gone(daemon));
    kill_if_alive(daemon);
    CHECK(r.exit_code == 0);
    CHECK(contains(r.err, "killed 1 process(es) the benchmark left running"));
    CHECK(contains(r.err, "pid " + std::to_string(daemon)));
  }

  TEST_CASE("a SIGKILLed runner takes its benchmark with it (PDEATHSIG)") {
    // This test process becomes a subreaper, so the orphaned benchmark is
    // re-parented here and can be reaped and checked directly.
    REQUIRE(::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0);
    for (const char* mode : {"--no-profile", "--allow-no-profile"}) {
      CAPTURE(mode);
      TempDir dir;
      const std::string pid_file = dir.file("bench.pid");
      auto runner =
          start_until_ready(dir, {mode, "--allow-empty"},
                            {binary("IGNORE_TERM_BIN"), pid_file}, pid_file);
      const pid_t bench = read_pid(pid_file);
      REQUIRE(runner.send_signal(SIGKILL));
      auto status = runner.wait();
      REQUIRE(status);
      CHECK(status->signal == SIGKILL);
      CHECK(wait_until([&] { return process_gone(bench); },
                       std::chrono::seconds(20)));
      kill_if_alive(bench);
    }
  }

  TEST_CASE("spawn errors name the cause") {
    TempDir dir;
    REQUIRE(::mkdir(dir.file("a-dir").c_str(), 0755) == 0);
    REQUIRE(runner::base::write_file_atomic(dir.file("text"), "some text\n"));
    REQUIRE(::chmod(dir.file("text").c_str(), 0755) == 0);
    REQUIRE(
        runner::base::write_file_atomic(dir.file("no-x"), "#!/bin/sh\n:\n"));
    REQUIRE(::chmod(dir.file("no-x").c_str(), 0644) == 0);
    struct Case {
      std::string path, words;
      int code;
    };
    const Case cases[] = {
        {dir.file("a-dir"), ": is a directory: Permission denied", 126},
        {dir.file("text"), ": not an executable", 126},
        {dir.file("missing"), ": not found", 127},
        {dir.file("no-x"), ": no execute permission (mode 0644)", 126},
    };
    for (const Case& c : cases) {
      CAPTURE(c.path);
      auto r = run_process(runner_argv("run", dir.file("profile"), dir.path(),
                                       {"--allow-no-profile"}, {c.path}));
      INFO(r.err);
      CHECK(r.exit_code == c.code);
      CHECK(contains(r.err, "cannot start the benchmark"));
      CHECK(contains(r.err, c.path + c.words));
      if (c.code == 126) CHECK_FALSE(contains(r.err, "not found"));
    }
    // `runner exec` checks the command before anything runs.
    auto r = run_process(runner_argv("exec", dir.file("profile-exec"),
                                     dir.path(), {}, {dir.file("no-x")}));
    INFO(r.err);
    CHECK(r.exit_code == 126);
    CHECK(contains(r.err, dir.file("no-x") + ": no execute permission"));
  }

  TEST_CASE("runner exec memory does not grow with the processes forked") {
    // The peak RSS the runner reports in perf.metadata, for a command that
    // forks and execs 10 processes and one that does it 1500 times. Before
    // the fix the second grew by ~12 KiB per process (+22.8 MiB in one run).
    if (runner::testing::perf_events_refused() != 0)
      RUNNER_SKIP_CASE("perf_event_open is refused: no profiled run");
    // The ring buffers' pages count once the runner touched them, and a
    // longer run touches more of them: they are allowed on top.
    double rings_kib = 0;
    auto peak_kib = [&rings_kib](int forks) -> double {
      TempDir dir;
      const std::string loop = "i=0; while [ $i -lt " + std::to_string(forks) +
                               " ]; do sh -c :; i=$((i+1)); done";
      auto r = run_process(
          runner_argv("exec", dir.file("profile"), dir.path(),
                      {"--warmup-time", "0", "--max-rounds", "1"},
                      {"/bin/sh", "-c", loop}),
          {"RUNNER_EXEC_HARNESS=" + binary("EXEC_HARNESS_BIN")}, "", 300);
      INFO(r.err);
      REQUIRE(r.exit_code == 0);
      auto meta = runner::testing::read_json_file(dir.file("profile") +
                                                  "/perf.metadata");
      rings_kib = meta["runner"]["ring_buffers_bytes"].get<double>() / 1024;
      return meta["runner"]["max_rss_kib"].get<double>();
    };
    const double few = peak_kib(10);
    const double many = peak_kib(1500);
    INFO("peak RSS: ", few / 1024, " MiB at 10 forks, ", many / 1024,
         " MiB at 1500 forks, ring buffers ", rings_kib / 1024, " MiB");
    CHECK(many - few < 8 * 1024 + rings_kib);
  }
}
