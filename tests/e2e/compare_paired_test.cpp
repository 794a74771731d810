// The paired mode of `runner compare` (compare/paired.cpp) on real
// commands: the ABBA order seen in a file the commands append to, the
// errors of a failing round (its command, status and round), interruption
// (the round's process group gets the signal, then SIGKILL; nothing is left
// running, no zombie), leftovers killed after each round; and the verdicts
// on real timings: sleep 0.02 against itself is unchanged, against
// sleep 0.03 a regression of 10 ms / (20 ms + the measured overhead of a
// round), the reverse an improvement; too few pairs are inconclusive.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include <doctest/doctest.h>

#include "base/base.hpp"
#include "compare/compare.hpp"
#include "compare/paired.hpp"
#include "tests/e2e/e2e_support.hpp"
#include "tests/support/temp_dir.hpp"

using runner::compare::CompareOptions;
using runner::compare::run_paired;
using runner::format::BenchmarkComparison;
using runner::format::Verdict;
using runner::testing::binary;
using runner::testing::file_exists;
using runner::testing::list_dir;
using runner::testing::ProcessResult;
using runner::testing::read_json_file;
using runner::testing::run_process;
using runner::testing::TempDir;
using Clock = std::chrono::steady_clock;

namespace {

CompareOptions paired(const std::string& base, const std::string& head,
                      uint64_t pairs, uint64_t warmup_pairs) {
  CompareOptions options;
  options.base = {base};
  options.head = {head};
  options.pairs = pairs;
  options.warmup_pairs = warmup_pairs;
  options.settings.paired = false;  // run_paired sets it
  return options;
}

// The error message of a run that must fail.
std::string paired_error(const CompareOptions& options) {
  std::ostringstream err;
  auto report = run_paired(options, err);
  REQUIRE_FALSE(report.has_value());
  return report.error().what();
}

std::string file_text(const std::string& path) {
  auto text = runner::base::read_file(path);
  return text ? *text : "";
}

// The state letter of /proc/<pid>/stat ('R', 'S', 'Z', ...); 0 when there
// is no such process.
char process_state(pid_t pid) {
  std::string stat = file_text("/proc/" + std::to_string(pid) + "/stat");
  size_t paren = stat.rfind(')');
  return paren == std::string::npos || paren + 2 >= stat.size()
             ? 0
             : stat[paren + 2];
}

// True once `pid` is gone or a zombie, polled for at most 5 s (SIGKILL is
// delivered asynchronously).
bool dies_soon(pid_t pid) {
  const auto limit = Clock::now() + std::chrono::seconds(5);
  for (char state = process_state(pid); state != 0 && state != 'Z';
       state = process_state(pid)) {
    if (Clock::now() > limit) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

// The pid a command wrote to `path` (waits up to 10 s for it); 0 if none.
pid_t pid_written_to(const std::string& path) {
  const auto limit = Clock::now() + std::chrono::seconds(10);
  std::string text;
  while ((text = file_text(path)).find('\n') == std::string::npos) {
    if (Clock::now() > limit) return 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return static_cast<pid_t>(std::stol(text));
}

// What an interrupted run_paired does, in a forked copy of this process:
// 42 when it returned an EINTR error and left no child, 43 for another
// error or a child left, 44 when it succeeded; -1 if it did not exit
// within 15 s of the signal (then it is killed).
int interrupted_exit(const CompareOptions& options, const std::string& pid_file,
                     int sig, double* seconds) {
  pid_t copy = ::fork();
  REQUIRE(copy >= 0);
  if (copy == 0) {
    std::ostringstream err;
    auto report = run_paired(options, err);
    bool clean = runner::base::children_of(::getpid()).empty();
    if (report.has_value()) ::_exit(44);
    ::_exit(report.error().code() == EINTR && clean ? 42 : 43);
  }
  const pid_t round = pid_written_to(pid_file);
  CHECK(round > 0);
  const auto sent = Clock::now();
  ::kill(copy, sig);
  int status = 0;
  while (::waitpid(copy, &status, WNOHANG) == 0) {
    if (Clock::now() - sent > std::chrono::seconds(15)) {
      ::kill(copy, SIGKILL);
      ::waitpid(copy, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  *seconds = std::chrono::duration<double>(Clock::now() - sent).count();
  if (round > 0) CHECK(dies_soon(round));
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// The median time of a `sleep 0` round here: the spawn of the shell and of
// sleep, reaping, timer slack; every round pays it.
double round_overhead_ns() {
  std::ostringstream err;
  auto report = run_paired(paired("sleep 0", "sleep 0", 10, 1), err);
  REQUIRE(report.has_value());
  REQUIRE(report->benchmarks.size() == 1);
  REQUIRE(report->benchmarks[0].base.median_ns.has_value());
  return *report->benchmarks[0].base.median_ns;
}

// The comparison of `sleep BASE` against `sleep HEAD` over 20 pairs.
BenchmarkComparison sleeps(const std::string& base, const std::string& head,
                           uint64_t pairs = 20) {
  std::ostringstream err;
  auto report =
      run_paired(paired("sleep " + base, "sleep " + head, pairs, 1), err);
  REQUIRE(report.has_value());
  REQUIRE(report->benchmarks.size() == 1);
  return report->benchmarks[0];
}

// `runner compare --paired --pairs 8 EXTRA... BASE HEAD`, run in `cwd`.
ProcessResult runner_paired(const std::vector<std::string>& extra,
                            const std::string& base, const std::string& head,
                            const std::string& cwd) {
  std::vector<std::string> argv = {binary("RUNNER_BIN"), "compare", "--paired",
                                   "--pairs", "8"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.push_back(base);
  argv.push_back(head);
  return run_process(argv, {}, cwd, 120);
}

}  // namespace

TEST_CASE("the rounds run in ABBA order, warmup pairs first") {
  TempDir dir;
  const std::string order = dir.file("order");
  auto options = paired("printf A >> '" + order + "'",
                        "printf B >> '" + order + "'", 4, 1);
  std::ostringstream err;
  auto report = run_paired(options, err);
  REQUIRE(report.has_value());
  // Pair 0 (the warmup) A B, pair 1 B A, pair 2 A B, ...: 2 x 5 rounds.
  CHECK(file_text(order) == "ABBAABBAAB");
  CHECK(err.str() ==
        "runner compare --paired: 4 pairs (ABBA order, 1 warmup pair "
        "first)\n");
  CHECK(report->base.command == options.base[0]);
  CHECK(report->head.command == options.head[0]);
  CHECK(report->settings.paired);
  REQUIRE(report->benchmarks.size() == 1);
  CHECK(report->benchmarks[0].name == "paired: " + options.head[0]);
  CHECK(report->benchmarks[0].uri == "paired:" + options.head[0]);
  CHECK(report->benchmarks[0].base.source ==
        runner::format::SampleSource::kPaired);

  std::remove(order.c_str());
  REQUIRE(run_paired(paired(options.base[0], options.head[0], 3, 0), err));
  CHECK(file_text(order) == "ABBAAB");
}

TEST_CASE("each round gets /dev/null as stdin, stdout and stderr") {
  TempDir dir;
  const std::string fds = dir.file("fds");
  // $$ is the shell of the round; the command substitution does not change
  // its descriptors.
  auto options =
      paired("cat",
             "x=$(readlink /proc/$$/fd/0 /proc/$$/fd/1 /proc/$$/fd/2); "
             "echo \"$x\" > '" +
                 fds + "'; echo to-stdout; echo to-stderr >&2",
             1, 0);
  std::ostringstream err;
  REQUIRE(run_paired(options, err));
  CHECK(file_text(fds) == "/dev/null\n/dev/null\n/dev/null\n");
}

TEST_CASE("a failing round names its command, status and round") {
  TempDir dir;
  SUBCASE("exit 3 in the warmup") {
    std::string what = paired_error(paired("true", "exit 3", 20, 1));
    CHECK(what ==
          "paired mode: head command 'exit 3', round 2 of 42 (warmup): "
          "exited with code 3");
  }
  SUBCASE("the third run of the head command fails, in round 6") {
    // Pair 0: A B (rounds 1, 2), pair 1: B A (3, 4), pair 2: A B (5, 6).
    const std::string count = dir.file("count");
    std::string head = "n=$(cat '" + count + "' 2>/dev/null || echo 0); " +
                       "echo $((n + 1)) > '" + count + "'; [ $n -lt 2 ]";
    std::string what = paired_error(paired("true", head, 5, 0));
    CHECK(what == "paired mode: head command '" + head +
                      "', round 6 of 10: exited with code 1");
  }
  SUBCASE("the base command, killed by a signal") {
    std::string what = paired_error(paired("kill -TERM $$", "true", 3, 0));
    CHECK(what ==
          "paired mode: base command 'kill -TERM $$', round 1 of 6: killed "
          "by signal 15 (SIGTERM)");
  }
  SUBCASE("a command that does not exist") {
    std::string what =
        paired_error(paired("true", "runner-no-such-command-5e1f", 3, 1));
    CHECK(what ==
          "paired mode: head command 'runner-no-such-command-5e1f', round 2 "
          "of 8 (warmup): exited with code 127 (the shell did not find a "
          "command)");
  }
  SUBCASE("not one command a side, or an empty one") {
    auto options = paired("true", "true", 3, 0);
    options.head.push_back("false");
    CHECK(paired_error(options) ==
          "paired mode: needs exactly one base and one head command");
    CHECK(paired_error(paired("", "true", 3, 0)) ==
          "paired mode: a command is empty");
  }
  CHECK(runner::base::children_of(::getpid()).empty());
}

TEST_CASE("what a round leaves running in its process group is killed") {
  TempDir dir;
  const std::string pid_file = dir.file("pid");
  auto options =
      paired("true", "sleep 30 & echo $! > '" + pid_file + "'", 1, 0);
  std::ostringstream err;
  REQUIRE(run_paired(options, err));
  pid_t left = pid_written_to(pid_file);
  REQUIRE(left > 0);
  CHECK(dies_soon(left));
  CHECK(runner::base::children_of(::getpid()).empty());
}

TEST_CASE("an interruption reaches the round's process group") {
  TempDir dir;
  const std::string pid_file = dir.file("pid");
  double seconds = 0;
  SUBCASE("SIGINT ends the round at once") {
    auto options =
        paired("true", "sleep 30 & echo $! > '" + pid_file + "'; wait", 20, 0);
    CHECK(interrupted_exit(options, pid_file, SIGINT, &seconds) == 42);
    CHECK(seconds < 1.5);
  }
  SUBCASE("a round that ignores SIGTERM gets SIGKILL 2 s later") {
    auto options =
        paired("trap '' TERM; sleep 30 & echo $! > '" + pid_file + "'; wait",
               "true", 20, 1);
    CHECK(interrupted_exit(options, pid_file, SIGTERM, &seconds) == 42);
    CHECK(seconds >= 1.9);
    CHECK(seconds < 5);
  }
}

TEST_CASE("the same command on both sides is unchanged") {
  // Unchanged means the whole interval lies within +-5%. A round's start
  // (fork, exec, scheduling) costs a busy machine milliseconds that vary:
  // 20 pairs of sleep 0.02 gave intervals of +-10% under load, 20 pairs of
  // sleep 0.1 about +-3.5%. So 30 pairs of sleep 0.1, up to 3 attempts; no
  // attempt may raise a false alarm.
  bool unchanged = false;
  for (int attempt = 1; attempt <= 3 && !unchanged; ++attempt) {
    BenchmarkComparison same = sleeps("0.1", "0.1", 30);
    CHECK(same.test == runner::format::CompareTest::kWilcoxonSignedRank);
    CHECK(same.base.rounds == 30);
    CHECK(same.head.rounds == 30);
    REQUIRE(same.change.has_value());
    MESSAGE("attempt " << attempt << ": " << same.reason << ", change "
                       << *same.change << ", p " << same.p_value.value_or(-1));
    CHECK(same.verdict != Verdict::kRegression);
    CHECK(same.verdict != Verdict::kImprovement);
    CHECK(*same.base.median_ns >= 100e6);
    unchanged = same.verdict == Verdict::kUnchanged;
  }
  CHECK(unchanged);
}

TEST_CASE("10 ms more per round: a regression of 10 ms / (20 ms + overhead)") {
  const double overhead = round_overhead_ns();
  MESSAGE("sleep 0 round: " << overhead / 1e6 << " ms");
  SUBCASE("slower head") {
    BenchmarkComparison slower = sleeps("0.02", "0.03");
    const double expected = 10e6 / (20e6 + overhead);
    CHECK(slower.verdict == Verdict::kRegression);
    REQUIRE(slower.change.has_value());
    MESSAGE("change " << *slower.change << ", expected " << expected);
    CHECK(*slower.change == doctest::Approx(expected).epsilon(0.2));
    CHECK(*slower.ci_low > 0.05);
    CHECK(slower.base.rounds == 20);
  }
  SUBCASE("faster head") {
    BenchmarkComparison faster = sleeps("0.03", "0.02");
    const double expected = -10e6 / (30e6 + overhead);
    CHECK(faster.verdict == Verdict::kImprovement);
    REQUIRE(faster.change.has_value());
    MESSAGE("change " << *faster.change << ", expected " << expected);
    CHECK(*faster.change == doctest::Approx(expected).epsilon(0.2));
    CHECK(*faster.ci_high < -0.05);
  }
}

TEST_CASE("fewer pairs than min_rounds: inconclusive, whatever the times") {
  std::ostringstream err;
  auto options = paired("sleep 0.02", "sleep 0.04", 5, 0);
  auto report = run_paired(options, err);
  REQUIRE(report.has_value());
  const BenchmarkComparison& few = report->benchmarks.at(0);
  CHECK(few.verdict == Verdict::kInconclusive);
  CHECK(few.base.rounds == 5);
  CHECK(few.reason == "5 pairs, need 6");
  CHECK_FALSE(few.p_value.has_value());
}

TEST_CASE("runner compare --paired: exit codes, outputs, the compare folder") {
  TempDir dir;
  const std::string progress =
      "runner compare --paired: 8 pairs (ABBA order, 1 warmup pair first)\n";
  SUBCASE("the same command: exit 0, the text on stdout, nothing written") {
    ProcessResult run =
        runner_paired({}, "sleep 0.01", "sleep 0.01", dir.path());
    CHECK(run.exit_code == 0);
    CHECK(run.err == progress);
    CHECK(run.out.find("paired: sleep 0.01") != std::string::npos);
    // No false alarm: unchanged, or (8 pairs of a busy machine's sleeps
    // may give an interval wider than the threshold) inconclusive.
    INFO(run.out);
    CHECK((run.out.find("\nverdict unchanged: ") != std::string::npos ||
           run.out.find("\nverdict inconclusive: ") != std::string::npos));
    CHECK(list_dir(dir.path()).empty());
  }
  SUBCASE("regression: exit 1, compare.json and compare.md in --out") {
    const std::string out = dir.file("out");
    ProcessResult run = runner_paired({"--out", out, "--format", "json"},
                                      "sleep 0.01", "sleep 0.02", "");
    CHECK(run.exit_code == 1);
    CHECK(run.err == progress);
    REQUIRE(file_exists(out + "/compare.json"));
    CHECK(file_exists(out + "/compare.md"));
    nlohmann::json json = read_json_file(out + "/compare.json");
    CHECK(nlohmann::json::parse(run.out) == json);
    CHECK(json["base"]["command"] == "sleep 0.01");
    CHECK(json["head"]["command"] == "sleep 0.02");
    CHECK(json["settings"]["paired"] == true);
    CHECK(json["benchmarks"][0]["verdict"] == "regression");
    CHECK(json["benchmarks"][0]["test"] == "wilcoxon-signed-rank");
    CHECK(json["benchmarks"][0]["base"]["rounds"] == 8);
    CHECK(json["benchmarks"][0]["head"]["rounds"] == 8);
  }
  SUBCASE("improvement: exit 0") {
    ProcessResult run =
        runner_paired({"--warmup-pairs", "0"}, "sleep 0.02", "sleep 0.01", "");
    CHECK(run.exit_code == 0);
    CHECK(run.out.find("improvement") != std::string::npos);
  }
  SUBCASE("a failing command: exit 2, one line naming it") {
    ProcessResult run = runner_paired({}, "true", "exit 3", "");
    CHECK(run.exit_code == 2);
    CHECK(run.out.empty());
    CHECK(run.err == progress +
                         "runner compare: paired mode: head command 'exit "
                         "3', round 2 of 18 (warmup): exited with code 3\n");
  }
}

TEST_CASE("runner compare --paired: SIGINT stops the round and the runner") {
  TempDir dir;
  const std::string pid_file = dir.file("pid");
  runner::base::UniqueFd err_file(
      ::open(dir.file("err").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
  REQUIRE(err_file);
  runner::base::SpawnOptions spawn;
  spawn.argv = {binary("RUNNER_BIN"), "compare", "--paired", "true",
                "sleep 30 & echo $! > '" + pid_file + "'; wait"};
  spawn.stderr_fd = err_file.get();
  auto runner = runner::base::ChildProcess::spawn(spawn);
  REQUIRE(runner.has_value());
  const pid_t round = pid_written_to(pid_file);
  REQUIRE(round > 0);
  REQUIRE(runner->send_signal(SIGINT));
  // At most 15 s (the destructor kills a runner still there).
  std::optional<runner::base::ExitStatus> status;
  for (auto limit = Clock::now() + std::chrono::seconds(15);
       !status && Clock::now() < limit;
       std::this_thread::sleep_for(std::chrono::milliseconds(10))) {
    auto polled = runner->try_wait();
    REQUIRE(polled.has_value());
    status = *polled;
  }
  REQUIRE(status.has_value());
  CHECK(status->shell_code() == 130);
  CHECK(dies_soon(round));
  CHECK(file_text(dir.file("err")) ==
        "runner compare --paired: 20 pairs (ABBA order, 1 warmup pair "
        "first)\nrunner compare: paired mode: head command 'sleep 30 & echo "
        "$! > '" +
            pid_file +
            "'; wait', round 2 of 42 (warmup): interrupted by SIGINT: "
            "Interrupted system call\n");
}
