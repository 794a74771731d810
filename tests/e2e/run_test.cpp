// End-to-end tests of `runner run` (FIFO protocol, timestamps, exit codes,
// robustness of the FIFO paths) with the real binary and real programs.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <doctest/doctest.h>

#include "base/child_process.hpp"
#include "base/fs.hpp"
#include "base/unique_fd.hpp"
#include "tests/e2e/e2e_support.hpp"
#include "tests/support/skip.hpp"
#include "tests/support/temp_dir.hpp"

using runner::testing::binary;
using runner::testing::file_exists;
using runner::testing::read_json_file;
using runner::testing::read_msgpack_file;
using runner::testing::run_process;
using runner::testing::runner_argv;
using runner::testing::TempDir;

namespace {

std::vector<std::string> runner_run(const TempDir& dir,
                                    std::vector<std::string> extra,
                                    std::vector<std::string> command) {
  return runner_argv("run", dir.file("profile"), dir.path(), extra, command);
}

// Starts `argv` (a runner) with its output discarded and waits until it
// holds the FIFO lock in `dir`.
runner::base::ChildProcess start_runner_holding_lock(
    const TempDir& dir, std::vector<std::string> argv) {
  runner::base::SpawnOptions opts;
  opts.argv = std::move(argv);
  runner::base::UniqueFd devnull(::open("/dev/null", O_WRONLY | O_CLOEXEC));
  opts.stdout_fd = devnull.get();
  opts.stderr_fd = devnull.get();
  auto child = runner::base::ChildProcess::spawn(opts);
  REQUIRE(child);
  // A generous guard against a runner that never gets there (a slow
  // machine only makes the wait longer, never the test fail).
  for (int i = 0; i < 6000 && !file_exists(dir.file("runner.fifo.lock")); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE(file_exists(dir.file("runner.fifo.lock")));
  return std::move(*child);
}

// Whether a child of `parent` (any of its threads) runs a program named
// `comm`.
bool has_child_named(int parent, const std::string& comm) {
  std::error_code ec;
  const std::string task_dir = "/proc/" + std::to_string(parent) + "/task";
  for (const auto& task : std::filesystem::directory_iterator(task_dir, ec)) {
    std::ifstream children(task.path() / "children");
    int child = 0;
    while (children >> child) {
      std::ifstream name("/proc/" + std::to_string(child) + "/comm");
      std::string line;
      if (std::getline(name, line) && line == comm) return true;
    }
  }
  return false;
}

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE("runner --help, --version and bad options") {
    auto help = run_process({binary("RUNNER_BIN"), "--help"});
    CHECK(help.exit_code == 0);
    for (const char* cmd : {"run", "exec", "report", "doctor"})
      CHECK(help.out.find(cmd) != std::string::npos);
    auto version = run_process({binary("RUNNER_BIN"), "--version"});
    CHECK(version.exit_code == 0);
    CHECK(version.out == "runner " + binary("RUNNER_PROJECT_VERSION") + "\n");
    for (const char* cmd : {"run", "exec", "report", "doctor"}) {
      auto sub = run_process({binary("RUNNER_BIN"), cmd, "--help"});
      CHECK_MESSAGE(sub.exit_code == 0, cmd);
      CHECK(sub.out.find("Usage: runner ") != std::string::npos);
    }
    auto run_help = run_process({binary("RUNNER_BIN"), "run", "--help"});
    for (const char* opt :
         {"--profile-folder", "--freq", "--call-graph", "--mmap-size",
          "--no-tracking-event", "--no-profile", "--allow-empty", "--report"})
      CHECK_MESSAGE(run_help.out.find(opt) != std::string::npos, opt);
    auto bad =
        run_process({binary("RUNNER_BIN"), "run", "--bogus", "--", "true"});
    CHECK(bad.exit_code == 2);
    CHECK(bad.err.find("unknown option '--bogus'") != std::string::npos);
    CHECK(bad.err.find('\n') == bad.err.size() - 1);  // one line
    auto unknown = run_process({binary("RUNNER_BIN"), "frobnicate"});
    CHECK(unknown.exit_code == 2);
    auto missing = run_process({binary("RUNNER_BIN"), "run"});
    CHECK(missing.exit_code == 2);
    CHECK(missing.err.find("missing the benchmark command") !=
          std::string::npos);
  }

  TEST_CASE("runner run --call-graph bogus says what is allowed, exit 2") {
    for (const char* bad : {"bogus", "dwarf,lots"}) {
      auto r = run_process(
          {binary("RUNNER_BIN"), "run", "--call-graph", bad, "--", "true"});
      INFO(r.err);
      CHECK(r.exit_code == 2);
      CHECK(r.err.find("runner run: --call-graph: '" + std::string(bad) +
                       "'") == 0);
      CHECK(r.err.find("expected dwarf, dwarf,SIZE") != std::string::npos);
      CHECK(r.err.find("or fp") != std::string::npos);
      CHECK(r.err.find('\n') == r.err.size() - 1);  // one line
    }
    auto event = run_process(
        {binary("RUNNER_BIN"), "run", "--event", "instructions", "true"});
    CHECK(event.exit_code == 2);
    CHECK(event.err.find("expected auto, cycles, cpu-clock or task-clock") !=
          std::string::npos);
    auto format =
        run_process({binary("RUNNER_BIN"), "report", "--format", "pdf"});
    CHECK(format.exit_code == 2);
    CHECK(format.err.find("expected summary, perf-script or speedscope") !=
          std::string::npos);
  }

  TEST_CASE("runner --man is packaging/runner.1, and man renders it") {
    const std::string path = binary("RUNNER_MAN_PAGE");
    auto printed = run_process({binary("RUNNER_BIN"), "--man"});
    CHECK(printed.exit_code == 0);
    auto committed = runner::base::read_file(path);
    REQUIRE_MESSAGE(committed, committed.error().what());
    CHECK_MESSAGE(printed.out == *committed,
                  "regenerate it: make man (build/agent/runner --man > "
                  "packaging/runner.1)");
    const char* env_path = std::getenv("PATH");
    if (!runner::base::find_executable("man", env_path ? env_path : ""))
      RUNNER_SKIP_CASE("no man(1) here");
    auto shown = run_process({"man", "-l", path}, {"MANWIDTH=80", "LC_ALL=C"});
    INFO(shown.err);
    CHECK(shown.exit_code == 0);
    for (const char* text :
         {"runner run", "runner exec", "runner report", "runner doctor",
          "--call-graph", "--warmup-time", "--kill-after", "--top"})
      CHECK_MESSAGE(shown.out.find(text) != std::string::npos, text);
  }

  TEST_CASE("the man page documents every command and option --help shows") {
    auto committed = runner::base::read_file(binary("RUNNER_MAN_PAGE"));
    REQUIRE(committed);
    auto top = run_process({binary("RUNNER_BIN"), "--help"});
    REQUIRE(top.exit_code == 0);
    // "  name   description" lines under "Subcommands:".
    std::vector<std::string> commands;
    std::istringstream lines(top.out.substr(top.out.find("Subcommands:")));
    for (std::string line; std::getline(lines, line);)
      if (line.size() > 3 && line[0] == ' ' && line[1] == ' ' && line[2] != ' ')
        commands.push_back(line.substr(2, line.find(' ', 2) - 2));
    CHECK(commands.size() == 7);
    for (const std::string& command : commands) {
      const size_t section = committed->find(".SS runner " + command + "\n");
      REQUIRE_MESSAGE(section != std::string::npos, command);
      const size_t end = committed->find("\n.S", section + 4);
      const std::string text = committed->substr(section, end - section);
      auto help = run_process({binary("RUNNER_BIN"), command, "--help"});
      REQUIRE(help.exit_code == 0);
      std::istringstream options(help.out);
      size_t seen = 0;
      for (std::string line; std::getline(options, line);) {
        const size_t dashes = line.find("--");
        if (line.rfind("  ", 0) != 0 || dashes == std::string::npos ||
            dashes > 5 || line.find("--help") != std::string::npos)
          continue;
        // A flag with a value when bare shows it as "--name{value}".
        const std::string name =
            line.substr(dashes, line.find_first_of(" ,{", dashes) - dashes);
        // "\fB\-\-name\fR" (or "\fB\-F, \-\-name\fR" after a short name).
        std::string roff;
        for (const char c : name)
          roff += c == '-' ? std::string("\\-") : std::string(1, c);
        roff += "\\fR";
        CHECK_MESSAGE(text.find(roff) != std::string::npos, "runner ", command,
                      " ", name, " is not in runner.1");
        ++seen;
      }
      if (command != "doctor") CHECK(seen > 0);
    }
  }

  TEST_CASE("the example benchmark: timestamps, metadata and results") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    auto r = run_process(
        runner_run(dir, {}, {binary("EXAMPLE_BIN"), "--rounds", "2"}));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const std::string folder = dir.file("profile");
    auto ts = read_msgpack_file(folder + "/ExecutionTimestamps.msgpack");
    REQUIRE(ts.is_object());
    REQUIRE(ts["uri_by_ts"].size() == 3);
    std::vector<std::string> uris;
    for (const auto& e : ts["uri_by_ts"]) {
      REQUIRE(e.size() == 2);
      uris.push_back(e[1].get<std::string>());
    }
    CHECK(uris[0] == "integrations/examples/bench_example.cpp::fib");
    CHECK(uris[1] == "integrations/examples/bench_example.cpp::memcpy");
    CHECK(uris[2] == "integrations/examples/bench_example.cpp::sort");
    // Per benchmark: SampleStart, 2 x (RoundStart, RoundEnd), SampleEnd
    // (the client sends the round markers before StopBenchmark).
    const auto& markers = ts["markers"];
    REQUIRE(markers.size() == 3 * 6);
    for (size_t b = 0; b < 3; ++b) {
      const auto& start = markers[b * 6];
      const auto& end = markers[b * 6 + 5];
      REQUIRE(start.contains("SampleStart"));
      REQUIRE(end.contains("SampleEnd"));
      uint64_t s = start["SampleStart"], e = end["SampleEnd"];
      CHECK(s < e);
      for (size_t k = 1; k <= 4; ++k) {
        const auto& m = markers[b * 6 + k];
        const char* name = (k % 2 == 1) ? "RoundStart" : "RoundEnd";
        REQUIRE_MESSAGE(m.contains(name), m.dump());
        uint64_t t = m[name];
        CHECK(t >= s);
        CHECK(t <= e);
      }
      // The URI is announced after the window closed.
      CHECK(ts["uri_by_ts"][b][0].get<uint64_t>() >= e);
    }
    auto meta = read_json_file(folder + "/perf.metadata");
    CHECK(meta["version"] == 1);
    CHECK(meta["integration"] ==
          nlohmann::json::array({"runner-example", "0.1.0"}));
    CHECK(meta["runner"]["version"] == binary("RUNNER_PROJECT_VERSION"));
    CHECK(meta["uri_by_ts"] == ts["uri_by_ts"]);
    CHECK(meta["markers"] == ts["markers"]);
    CHECK(meta["ignored_modules"] == nlohmann::json::array());
    auto results = runner::testing::list_dir(folder + "/results");
    REQUIRE(results.size() == 1);
    auto res = read_json_file(folder + "/results/" + results[0]);
    REQUIRE(res["benchmarks"].size() == 3);
    // The raw rounds are the marked rounds, one iteration each.
    for (size_t b = 0; b < 3; ++b) {
      const auto& bench = res["benchmarks"][b];
      REQUIRE(bench["times_per_round_ns"].size() == 2);
      CHECK(bench["iters_per_round"] == nlohmann::json({1, 1}));
      for (size_t i = 0; i < 2; ++i) {
        const uint64_t round_start = markers[b * 6 + 1 + 2 * i]["RoundStart"];
        const uint64_t round_end = markers[b * 6 + 2 + 2 * i]["RoundEnd"];
        CHECK(bench["times_per_round_ns"][i] == round_end - round_start);
      }
    }
    CHECK(r.err.find("fib") != std::string::npos);  // the results table
    // FIFOs and lock removed at exit.
    CHECK_FALSE(file_exists(dir.file("runner.ctl.fifo")));
    CHECK_FALSE(file_exists(dir.file("runner.ack.fifo")));
    CHECK_FALSE(file_exists(dir.file("runner.fifo.lock")));
  }

  TEST_CASE("exit code of the benchmark is the runner's") {
    TempDir dir;
    auto r =
        run_process(runner_run(dir, {"--allow-empty"}, {"sh", "-c", "exit 3"}));
    CHECK(r.exit_code == 3);
    auto killed = run_process(
        runner_run(dir, {"--allow-empty"}, {"sh", "-c", "kill -9 $$"}));
    CHECK(killed.exit_code == 137);
    CHECK(killed.err.find("killed by signal 9") != std::string::npos);
    CHECK_FALSE(file_exists(dir.file("runner.ctl.fifo")));
    CHECK_FALSE(file_exists(dir.file("runner.fifo.lock")));
    // ExecutionTimestamps is still written.
    CHECK(file_exists(dir.file("profile/ExecutionTimestamps.msgpack")));
  }

  TEST_CASE("no results is a clear failure; --allow-empty relaxes it") {
    TempDir dir;
    auto r = run_process(runner_run(dir, {}, {"true"}));
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("spoke no benchmark protocol") != std::string::npos);
    auto ok = run_process(runner_run(dir, {"--allow-empty"}, {"true"}));
    CHECK(ok.exit_code == 0);
  }

  TEST_CASE("a missing command fails clearly and starts nothing") {
    TempDir dir;
    auto r = run_process(runner_run(dir, {}, {"no-such-command-xyz"}));
    CHECK(r.exit_code == 127);
    CHECK(r.err.find("command not found: no-such-command-xyz") !=
          std::string::npos);
    CHECK_FALSE(file_exists(dir.file("runner.ctl.fifo")));
  }

  TEST_CASE("garbage frames get no reply and the stream stays usable") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    auto r = run_process(runner_run(dir, {}, {binary("GARBAGE_CLIENT_BIN")}));
    INFO(r.out, r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("garbage replies: -1 -1 -1") != std::string::npos);
    auto meta = read_json_file(dir.file("profile/perf.metadata"));
    // Back-to-back garbage is one resynchronisation.
    CHECK(meta["runner"]["fifo"]["malformed_frames"] == 1);
    auto ts =
        read_msgpack_file(dir.file("profile/ExecutionTimestamps.msgpack"));
    REQUIRE(ts["uri_by_ts"].size() == 1);
  }

  TEST_CASE("stale FIFOs, a stale lock and a planted symlink are handled") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    // A crashed runner left a FIFO, a regular file and a lock of a dead pid.
    REQUIRE(::mkfifo(dir.file("runner.ack.fifo").c_str(), 0600) == 0);
    REQUIRE(runner::base::write_file_atomic(dir.file("runner.fifo.lock"),
                                            std::string_view("999999\n")));
    // Someone planted a symlink at the ctl path pointing at a file.
    REQUIRE(runner::base::write_file_atomic(dir.file("victim"),
                                            std::string_view("precious")));
    REQUIRE(::symlink(dir.file("victim").c_str(),
                      dir.file("runner.ctl.fifo").c_str()) == 0);
    auto r = run_process(runner_run(
        dir, {}, {binary("EXAMPLE_BIN"), "--rounds", "1", "--only", "fib"}));
    INFO(r.err);
    CHECK(r.exit_code == 0);
    auto victim = runner::base::read_file(dir.file("victim"));
    REQUIRE(victim);
    CHECK(*victim == "precious");
    struct stat st {};
    CHECK(::lstat(dir.file("runner.ctl.fifo").c_str(), &st) != 0);
  }

  TEST_CASE("a second runner on the same FIFOs refuses clearly") {
    TempDir dir;
    // The first runner's benchmark lasts until the second one was refused.
    const std::string done = dir.file("second-refused");
    auto a = start_runner_holding_lock(
        dir,
        runner_run(dir, {"--allow-empty"},
                   {"sh", "-c", "while [ ! -e \"$1\" ]; do sleep 0.05; done",
                    "sh", done}));
    TempDir other;
    std::vector<std::string> argv = {
        binary("RUNNER_BIN"), "run",        "--profile-folder",
        other.file("p"),      "--fifo-dir", dir.path(),
        "--allow-empty",      "--",         "true"};
    auto b = run_process(argv);
    CHECK(b.exit_code != 0);
    CHECK(b.err.find("another runner") != std::string::npos);
    REQUIRE(runner::base::write_file_atomic(done, std::string_view("")));
    auto status = a.wait();
    REQUIRE(status);
    CHECK(status->code == 0);
  }

  TEST_CASE("SIGTERM to the runner reaches the benchmark; artifacts are kept") {
    TempDir dir;
    auto runner = start_runner_holding_lock(
        dir, runner_run(dir, {"--allow-empty"}, {"sleep", "30"}));
    // The signal is sent once the benchmark runs (exec'd `sleep`), not
    // after a guessed delay.
    for (int i = 0; i < 6000 && !has_child_named(runner.pid(), "sleep"); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    REQUIRE(has_child_named(runner.pid(), "sleep"));
    REQUIRE(runner.send_signal(SIGTERM));
    auto status = runner.wait();
    REQUIRE(status);
    CHECK(status->code == 128 + SIGTERM);  // sleep died of the forwarded signal
    CHECK(file_exists(dir.file("profile/ExecutionTimestamps.msgpack")));
    CHECK(file_exists(dir.file("profile/runner.log")));
    CHECK_FALSE(file_exists(dir.file("runner.ctl.fifo")));
    CHECK_FALSE(file_exists(dir.file("runner.fifo.lock")));
  }

  TEST_CASE("--no-profile runs without FIFOs: integrations see no runner") {
    TempDir dir;
    auto r = run_process(
        runner_run(dir, {"--no-profile"},
                   {binary("EXAMPLE_BIN"), "--rounds", "1", "--only", "sort"}));
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.err.find("not instrumented") != std::string::npos);
    CHECK(runner::testing::list_dir(dir.file("profile/results")).size() == 1);
    CHECK_FALSE(file_exists(dir.file("profile/perf.pipedata")));
  }
}
