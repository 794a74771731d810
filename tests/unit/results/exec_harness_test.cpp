// The built exec-harness binary, run for real: rounds of real processes,
// results files, bad input. No runner: RUNNER_CTL_FIFO points nowhere, so
// the client is a silent no-op and only the results are written.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "base/child_process.hpp"
#include "base/fs.hpp"
#include "base/unique_fd.hpp"
#include "tests/support/temp_dir.hpp"

using runner::testing::TempDir;

namespace {

struct Run {
  int exit_code = -1;
  int pid = 0;
  std::string err;
};

std::string harness() {
  const char* bin = std::getenv("EXEC_HARNESS_BIN");
  REQUIRE_MESSAGE(bin != nullptr, "EXEC_HARNESS_BIN not set");
  return bin;
}

// Runs exec-harness with CODSPEED_PROFILE_FOLDER=<dir>/profile, stdin from
// `input` (if any), stderr captured.
Run run_harness(const TempDir& dir, std::vector<std::string> args,
                const std::string& input = "") {
  Run run;
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry = *e;
    if (entry.rfind("CODSPEED_PROFILE_FOLDER=", 0) == 0) continue;
    if (entry.rfind("RUNNER_CTL_FIFO=", 0) == 0) continue;
    if (entry.rfind("RUNNER_ACK_FIFO=", 0) == 0) continue;
    env.push_back(entry);
  }
  env.push_back("CODSPEED_PROFILE_FOLDER=" + dir.file("profile"));
  env.push_back("RUNNER_CTL_FIFO=" + dir.file("no-such.ctl.fifo"));
  env.push_back("RUNNER_ACK_FIFO=" + dir.file("no-such.ack.fifo"));
  REQUIRE(runner::base::write_file_atomic(dir.file("stdin"), input));
  runner::base::UniqueFd in(
      ::open(dir.file("stdin").c_str(), O_RDONLY | O_CLOEXEC));
  runner::base::UniqueFd err(::open(dir.file("stderr").c_str(),
                                    O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
                                    0644));
  REQUIRE(in);
  REQUIRE(err);
  runner::base::SpawnOptions options;
  options.argv = {harness()};
  options.argv.insert(options.argv.end(), args.begin(), args.end());
  options.env = env;
  options.stdin_fd = in.get();
  options.stderr_fd = err.get();
  auto child = runner::base::ChildProcess::spawn(options);
  REQUIRE_MESSAGE(child, child.error().what());
  run.pid = child->pid();
  auto status = child->wait();
  REQUIRE(status);
  run.exit_code = status->shell_code();
  run.err = runner::base::read_file(dir.file("stderr")).value_or("");
  return run;
}

std::vector<std::string> results_files(const TempDir& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto& e :
       std::filesystem::directory_iterator(dir.file("profile/results"), ec)) {
    out.push_back(e.path().filename().string());
  }
  return out;
}

nlohmann::json read_results(const TempDir& dir, int pid) {
  auto text = runner::base::read_file(
      dir.file("profile/results/" + std::to_string(pid) + ".json"));
  REQUIRE_MESSAGE(text, text.error().what());
  auto doc = nlohmann::json::parse(*text, nullptr, false);
  REQUIRE_FALSE(doc.is_discarded());
  return doc;
}

void check_schema(const nlohmann::json& doc, int pid) {
  CHECK(doc["creator"]["name"] == "exec-harness");
  CHECK(doc["creator"]["version"] == "1.3.0");
  CHECK(doc["creator"]["pid"] == pid);
  CHECK(doc["instrument"]["type"] == "walltime");
  REQUIRE(doc["benchmarks"].is_array());
  for (const auto& b : doc["benchmarks"]) {
    CHECK(b["name"].is_string());
    CHECK(b["uri"].is_string());
    CHECK(b["config"].is_object());
    for (const char* key :
         {"min_ns", "max_ns", "mean_ns", "stdev_ns", "q1_ns", "median_ns",
          "q3_ns", "total_time", "rounds", "iqr_outlier_rounds",
          "stdev_outlier_rounds", "iter_per_round", "warmup_iters"}) {
      INFO(key);
      CHECK(b["stats"][key].is_number());
    }
    // The raw rounds: one per measured round, one iteration each; with one
    // iteration the per-round times are the statistics' samples.
    const auto& times = b["times_per_round_ns"];
    REQUIRE(times.is_array());
    CHECK(times.size() == b["stats"]["rounds"]);
    CHECK(b["iters_per_round"] ==
          nlohmann::json(std::vector<int>(times.size(), 1)));
    REQUIRE_FALSE(times.empty());
    const auto [lo, hi] = std::minmax_element(times.begin(), times.end());
    CHECK(lo->get<double>() == b["stats"]["min_ns"].get<double>());
    CHECK(hi->get<double>() == b["stats"]["max_ns"].get<double>());
  }
}

}  // namespace

TEST_SUITE("results") {
  TEST_CASE("exec-harness: 5 rounds of sleep 0.01 without a runner") {
    TempDir dir;
    auto r = run_harness(dir, {"--warmup-time", "0", "--max-rounds", "5", "--",
                               "sleep", "0.01"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    auto files = results_files(dir);
    REQUIRE(files.size() == 1);
    CHECK(files[0] == std::to_string(r.pid) + ".json");
    auto doc = read_results(dir, r.pid);
    check_schema(doc, r.pid);
    REQUIRE(doc["benchmarks"].size() == 1);
    const auto& b = doc["benchmarks"][0];
    CHECK(b["name"] == "sleep 0.01");
    CHECK(b["uri"] == "exec_harness::sleep 0.01");
    CHECK(b["stats"]["rounds"] == 5);
    CHECK(b["stats"]["iter_per_round"] == 1);
    // A round is timed from before the spawn to after the wait: it covers
    // the whole 10 ms sleep, however the harness is scheduled.
    const double min_ns = b["stats"]["min_ns"].get<double>();
    const double max_ns = b["stats"]["max_ns"].get<double>();
    CHECK(min_ns >= 10e6);
    CHECK(min_ns <= max_ns);
    CHECK(b["stats"]["total_time"].get<double>() * 1e9 >= 5 * min_ns - 5);
    CHECK(r.err.find("sleep 0.01: 5 rounds") != std::string::npos);
  }

  TEST_CASE("exec-harness: --name, --opt=value form and a JSON name") {
    TempDir dir;
    auto r = run_harness(dir, {"--name=my bench", "--warmup-time=0",
                               "--max-rounds", "2", "true"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    auto doc = read_results(dir, r.pid);
    CHECK(doc["benchmarks"][0]["name"] == "my bench");
    CHECK(doc["benchmarks"][0]["uri"] == "exec_harness::my bench");
    CHECK(doc["benchmarks"][0]["stats"]["rounds"] == 2);
  }

  TEST_CASE("exec-harness -: two commands from JSON on stdin") {
    TempDir dir;
    auto r = run_harness(
        dir, {"-"},
        R"([{"command":["sleep","0.01"],"name":"nap","walltime_args":)"
        R"({"warmup_time":"0","max_time":null,"min_time":null,"max_rounds":3,"min_rounds":null}},)"
        R"({"command":["true"],"walltime_args":{"warmup_time":"0s","max_time":null,)"
        R"("min_time":null,"max_rounds":null,"min_rounds":4},"unknown":1}])");
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    auto doc = read_results(dir, r.pid);
    check_schema(doc, r.pid);
    REQUIRE(doc["benchmarks"].size() == 2);
    CHECK(doc["benchmarks"][0]["name"] == "nap");
    CHECK(doc["benchmarks"][0]["uri"] == "exec_harness::nap");
    CHECK(doc["benchmarks"][0]["stats"]["rounds"] == 3);
    CHECK(doc["benchmarks"][1]["name"] == "true");
    CHECK(doc["benchmarks"][1]["stats"]["rounds"] == 4);
  }

  TEST_CASE("exec-harness: a long name is truncated, the URI is not") {
    TempDir dir;
    std::string arg(1000, 'a');
    auto r = run_harness(
        dir, {"--warmup-time", "0", "--max-rounds", "1", "true", arg});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    auto doc = read_results(dir, r.pid);
    CHECK(doc["benchmarks"][0]["name"].get<std::string>().size() == 924);
    CHECK(doc["benchmarks"][0]["uri"] == "exec_harness::true " + arg);
  }

  TEST_CASE("exec-harness: a missing command fails before anything") {
    TempDir dir;
    auto r = run_harness(dir, {"--warmup-time", "0", "--max-rounds", "1", "--",
                               "no-such-program-xyz", "arg"});
    CHECK(r.exit_code == 127);
    CHECK(r.err.find("no-such-program-xyz") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(dir.file("profile")));

    // In JSON mode the second, missing command stops the first from running.
    TempDir dir2;
    auto j = run_harness(
        dir2, {"-"},
        R"([{"command":["true"]},{"command":["no-such-program-xyz"]}])");
    CHECK(j.exit_code == 127);
    CHECK(results_files(dir2).empty());
  }

  TEST_CASE(
      "exec-harness: a failing command aborts, its stderr shown, no results") {
    TempDir dir;
    auto r = run_harness(dir, {"--warmup-time", "0", "--max-rounds", "3", "sh",
                               "-c", "echo oops >&2; exit 3"});
    CHECK(r.exit_code != 0);
    CHECK(r.err.find("oops") != std::string::npos);
    CHECK(r.err.find("exited with code 3") != std::string::npos);
    CHECK(results_files(dir).empty());

    // A crash in the second benchmark: nothing of the first is written.
    TempDir dir2;
    auto c = run_harness(
        dir2, {"-"},
        R"([{"command":["true"],"walltime_args":{"max_rounds":2,"warmup_time":"0"}},)"
        R"({"command":["sh","-c","kill -SEGV $$"],"walltime_args":{"warmup_time":"0","max_rounds":2}}])");
    CHECK(c.exit_code != 0);
    CHECK(c.err.find("SIGSEGV") != std::string::npos);
    CHECK(results_files(dir2).empty());
  }

  TEST_CASE("exec-harness: bad options and bad JSON give clear errors") {
    TempDir dir;
    struct Case {
      std::vector<std::string> args;
      std::string input;
      const char* expect;
    };
    std::vector<Case> cases = {
        {{"--bogus", "true"}, "", "unknown option '--bogus'"},
        {{"--max-rounds"}, "", "--max-rounds: 1 required N missing"},
        {{"--max-rounds", "x", "true"}, "", "invalid round count"},
        {{"--max-rounds", "0", "true"}, "", "max_rounds must be at least 1"},
        {{"--warmup-time", "soon", "true"},
         "",
         "--warmup-time: invalid duration 'soon'"},
        {{"--min-time", "10s", "--max-time", "5s", "true"},
         "",
         "cannot be greater than max_time"},
        {{"--min-rounds", "9", "--max-rounds", "5", "true"},
         "",
         "cannot be greater than max_rounds"},
        {{"--warmup-time", "0"}, "", "missing the command"},
        {{"-"}, "not json", "invalid JSON"},
        {{"-"}, "{}", "expected a JSON array"},
        {{"-"}, "[]", "no benchmarks"},
        {{"-"}, R"([{"command":[]}])", "non-empty array"},
        {{"-"}, R"([{"command":[1]}])", "must hold strings"},
        {{"-"},
         R"([{"command":["true"],"walltime_args":{"max_rounds":-1}}])",
         "non-negative integer"},
        {{"-"},
         R"([{"command":["true"],"walltime_args":{"max_time":5}}])",
         "must be a string"},
        {{"-"}, R"([{"command":["tr)", "invalid JSON"},
    };
    for (const auto& c : cases) {
      INFO(c.expect);
      auto r = run_harness(dir, c.args, c.input);
      CHECK(r.exit_code == 2);
      CHECK_MESSAGE(r.err.find(c.expect) != std::string::npos, r.err);
    }
    CHECK(results_files(dir).empty());
  }

  TEST_CASE(
      "exec-harness: NODE_OPTIONS gets --perf-basic-prof in the children") {
    TempDir dir;
    ::unsetenv("NODE_OPTIONS");
    auto r =
        run_harness(dir, {"--warmup-time", "0", "--max-rounds", "1", "sh", "-c",
                          "test \"$NODE_OPTIONS\" = --perf-basic-prof"});
    CHECK(r.exit_code == 0);
    ::setenv("NODE_OPTIONS", "--max-old-space-size=64", 1);
    TempDir dir2;
    auto appended = run_harness(
        dir2, {"--warmup-time", "0", "--max-rounds", "1", "sh", "-c",
               "test \"$NODE_OPTIONS\" = '--max-old-space-size=64 "
               "--perf-basic-prof'"});
    CHECK(appended.exit_code == 0);
    ::setenv("NODE_OPTIONS", "--perf-basic-prof --x", 1);
    TempDir dir3;
    auto kept = run_harness(
        dir3, {"--warmup-time", "0", "--max-rounds", "1", "sh", "-c",
               "test \"$NODE_OPTIONS\" = '--perf-basic-prof --x'"});
    CHECK(kept.exit_code == 0);
    ::unsetenv("NODE_OPTIONS");
  }

  TEST_CASE("exec-harness --version") {
    TempDir dir;
    auto r = run_harness(dir, {"--version"});
    CHECK(r.exit_code == 0);
  }
}
