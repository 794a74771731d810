// End-to-end tests of sampling (perf_event_open over the process tree, only
// inside benchmark windows, perf.pipedata read by `perf script`).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <set>

#include <doctest/doctest.h>

#include "base/fs.hpp"
#include "tests/e2e/e2e_support.hpp"
#include "tests/support/perf_events.hpp"
#include "tests/support/shared_dir.hpp"
#include "tests/support/skip.hpp"
#include "tests/support/temp_dir.hpp"

using namespace runner::testing;

namespace {

std::vector<std::string> runner_run(const TempDir& dir,
                                    std::vector<std::string> extra,
                                    std::vector<std::string> command) {
  return runner_argv("run", dir.file("profile"), dir.path(), extra, command);
}

struct Window {
  uint64_t start = 0, end = 0;
};

std::vector<Window> sample_windows(const nlohmann::json& ts) {
  std::vector<Window> windows;
  for (const auto& m : ts["markers"]) {
    if (m.contains("SampleStart")) windows.push_back({m["SampleStart"], 0});
    if (m.contains("SampleEnd") && !windows.empty())
      windows.back().end = m["SampleEnd"];
  }
  return windows;
}

bool no_warnings(const std::string& err) {
  std::string lower = err;
  std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
  return lower.find("warning") == std::string::npos &&
         lower.find("error") == std::string::npos;
}

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE(
      "dwarf samples of the example: perf reads them, hot function leads") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    auto r = run_process(runner_run(
        dir, {}, {binary("EXAMPLE_BIN"), "--rounds", "3", "--only", "fib"}));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    // The event used (cycles with a PMU, else cpu-clock) is recorded in
    // perf.metadata and said on stderr.
    auto meta = read_json_file(dir.file("profile/perf.metadata"));
    const std::string event = meta["runner"]["event"].get<std::string>();
    CHECK((event == "cycles" || event == "cpu-clock"));
    CHECK(r.err.find(event) != std::string::npos);
    const std::string pipedata = dir.file("profile/perf.pipedata");
    auto script = perf_script(pipedata);
    CHECK_MESSAGE(no_warnings(script.err), script.err);
    auto samples = parse_perf_script(script.out);
    REQUIRE(samples.size() >= 20);
    size_t fib_leaf = 0, with_main = 0;
    for (const auto& s : samples) {
      REQUIRE_FALSE(s.frames.empty());
      if (s.frames[0].sym.find("fib") != std::string::npos) ++fib_leaf;
      for (const auto& f : s.frames)
        if (f.sym == "main") {
          ++with_main;
          break;
        }
    }
    CHECK(fib_leaf * 10 >= samples.size() * 8);
    // DWARF unwinding by perf reaches main for most samples.
    CHECK(with_main * 10 >= samples.size() * 8);
    auto report = run_process({"perf", "report", "-i", pipedata, "--stdio"});
    CHECK(report.exit_code == 0);
    CHECK_MESSAGE(no_warnings(report.err), report.err);
    CHECK(report.out.find("fib") != std::string::npos);
    // perf reads the same event from the file's attributes.
    auto events = run_process(
        {"perf", "script", "-f", "-i", pipedata, "-F", "event", "--ns"});
    CHECK(events.exit_code == 0);
    CHECK(events.out.find(event) != std::string::npos);
    // Counters land in perf.metadata.
    CHECK(meta["runner"]["samples"].get<uint64_t>() == samples.size());
    CHECK(meta["runner"]["lost_samples"] == 0);
    // The mappings came from the side-band records the sampler kept, not
    // from reading perf.pipedata back.
    const std::string log =
        runner::base::read_file(dir.file("profile/runner.log")).value_or("");
    CHECK_MESSAGE(log.find("replaying the sampler's side-band records") !=
                      std::string::npos,
                  log);
    // HEADER_BUILD_ID records at the end: perf knows the example's build-id,
    // the same readelf reads from the file.
    auto notes = run_process({"readelf", "-n", binary("EXAMPLE_BIN")});
    REQUIRE(notes.exit_code == 0);
    const size_t at = notes.out.find("Build ID: ");
    REQUIRE(at != std::string::npos);
    const std::string build_id =
        notes.out.substr(at + 10, notes.out.find('\n', at) - at - 10);
    auto ids = run_process({"perf", "buildid-list", "-i", pipedata});
    CHECK(ids.exit_code == 0);
    CHECK_MESSAGE(ids.out.find(build_id + " " + binary("EXAMPLE_BIN")) !=
                      std::string::npos,
                  ids.out);
  }

  TEST_CASE("no sample lies outside the SampleStart/SampleEnd windows") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    auto r = run_process(runner_run(
        dir, {}, {binary("MP_BENCH_BIN"), binary("CHILD_PROG_BIN"), "200"}));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    auto ts =
        read_msgpack_file(dir.file("profile/ExecutionTimestamps.msgpack"));
    auto windows = sample_windows(ts);
    REQUIRE(windows.size() == 2);
    auto script =
        perf_script(dir.file("profile/perf.pipedata"), {"--show-mmap-events"});
    auto samples = parse_perf_script(script.out);
    REQUIRE(samples.size() > 50);
    std::set<int> window1_pids, window2_comms_pids;
    std::set<std::string> window2_comms;
    for (const auto& s : samples) {
      bool inside = false;
      for (size_t w = 0; w < windows.size(); ++w) {
        if (s.time_ns >= windows[w].start && s.time_ns <= windows[w].end) {
          inside = true;
          if (w == 0) window1_pids.insert(s.pid);
          if (w == 1) window2_comms.insert(s.comm);
        }
      }
      CHECK_MESSAGE(inside, "sample at ", s.time_ns, " outside all windows");
    }
    // Window 1: the parent and its two forked workers were all sampled.
    CHECK(window1_pids.size() >= 3);
    // Window 2: the program exec'd while sampling was off was sampled and
    // its MMAP2 record is there (always-on tracking event).
    CHECK(window2_comms.count("child_prog") == 1);
    std::string child_path = binary("CHILD_PROG_BIN");
    CHECK(script.out.find("PERF_RECORD_MMAP2") != std::string::npos);
    CHECK(script.out.find(child_path) != std::string::npos);
    size_t child_hot = 0, child_samples = 0;
    for (const auto& s : samples) {
      if (s.comm != "child_prog") continue;
      ++child_samples;
      if (!s.frames.empty() &&
          s.frames[0].sym.find("child_hot") != std::string::npos)
        ++child_hot;
    }
    CHECK(child_hot * 10 >= child_samples * 8);
  }

  TEST_CASE("frame-pointer mode") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    auto r = run_process(
        runner_run(dir, {"--call-graph", "fp"},
                   {binary("EXAMPLE_BIN"), "--rounds", "2", "--only", "fib"}));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    auto script = perf_script(dir.file("profile/perf.pipedata"));
    CHECK_MESSAGE(no_warnings(script.err), script.err);
    auto samples = parse_perf_script(script.out);
    REQUIRE(samples.size() >= 10);
    size_t deep = 0;
    for (const auto& s : samples) {
      bool has_main = false;
      for (const auto& f : s.frames) has_main |= f.sym == "main";
      if (s.frames.size() >= 3 && has_main) ++deep;
    }
    CHECK(deep * 10 >= samples.size() * 8);
    auto meta = read_json_file(dir.file("profile/perf.metadata"));
    CHECK(meta["runner"]["call_graph"] == "fp");
  }

  TEST_CASE("--drain-threads: per-CPU counts, cut copies, one stream") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    auto r = run_process(
        runner_run(dir, {"--drain-threads", "2", "-F", "4000"},
                   {binary("EXAMPLE_BIN"), "--rounds", "2", "--only", "fib"}));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
    const long threads = std::min(2L, cpus);
    CHECK(r.err.find(std::to_string(threads) +
                     (threads == 1 ? " drain thread " : " drain threads ")) !=
          std::string::npos);
    auto meta = read_json_file(dir.file("profile/perf.metadata"));
    const auto& runner = meta["runner"];
    CHECK(runner["drain_threads"] == threads);
    REQUIRE(runner["per_cpu"].is_array());
    CHECK(runner["per_cpu"].size() == static_cast<size_t>(cpus));
    uint64_t per_cpu = 0;
    for (const auto& cpu : runner["per_cpu"])
      per_cpu += cpu["samples"].get<uint64_t>();
    const uint64_t samples = runner["samples"].get<uint64_t>();
    CHECK(per_cpu == samples);
    // Copies are written cut to the program's stack.
    CHECK(runner["stack_bytes_written"].get<uint64_t>() <
          runner["stack_bytes_copied"].get<uint64_t>());
    CHECK(runner["stack_bytes_written"].get<uint64_t>() +
              runner["stack_bytes_copied"].get<uint64_t>() >
          0);
    auto script = perf_script(dir.file("profile/perf.pipedata"));
    CHECK_MESSAGE(no_warnings(script.err), script.err);
    CHECK(parse_perf_script(script.out).size() == samples);
    // Out of range: a usage error before anything runs.
    for (const char* bad : {"0", "65", "x"}) {
      auto refused = run_process(
          runner_run(dir, {"--drain-threads", bad}, {binary("EXAMPLE_BIN")}));
      CHECK(refused.exit_code == 2);
      CHECK(refused.err.find("--drain-threads") != std::string::npos);
    }
  }

  TEST_CASE("a benchmark that exits while sampling is enabled") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    auto r = run_process(
        runner_run(dir, {"--allow-empty"}, {binary("EXIT_IN_WINDOW_BIN")}));
    INFO(r.err);
    CHECK(r.exit_code == 0);
    auto script = perf_script(dir.file("profile/perf.pipedata"));
    auto samples = parse_perf_script(script.out);
    CHECK(samples.size() >= 50);
    auto ts =
        read_msgpack_file(dir.file("profile/ExecutionTimestamps.msgpack"));
    REQUIRE(ts["markers"].size() == 1);  // SampleStart, never ended
    CHECK(ts["markers"][0].contains("SampleStart"));
  }

  TEST_CASE("unprivileged run as nobody") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    if (::getuid() != 0) RUNNER_SKIP_CASE("needs root to switch to nobody");
    // nobody cannot reach the build directory (nor $TMPDIR) when they sit
    // under a private parent: the runner and the benchmark are copied to a
    // directory it can reach, and it writes in a directory of its own.
    SharedDir shared;
    if (shared.path().empty()) RUNNER_SKIP_CASE(shared.why());
    const std::string runner = shared.add_executable(binary("RUNNER_BIN"));
    const std::string example = shared.add_executable(binary("EXAMPLE_BIN"));
    REQUIRE_FALSE(runner.empty());
    REQUIRE_FALSE(example.empty());
    const std::string out = shared.add_directory_owned_by("out", 65534, 65534);
    REQUIRE_FALSE(out.empty());
    std::vector<std::string> argv = {"setpriv",       "--reuid=65534",
                                     "--regid=65534", "--clear-groups",
                                     "env",           "TMPDIR=" + out};
    auto inner = runner_argv("run", out + "/profile", out, {},
                             {example, "--rounds", "2", "--only", "fib"});
    inner[0] = runner;
    argv.insert(argv.end(), inner.begin(), inner.end());
    auto r = run_process(argv);
    INFO(r.err);
    int paranoid = 2;
    if (auto text =
            runner::base::read_file("/proc/sys/kernel/perf_event_paranoid"))
      paranoid = std::atoi(text->c_str());
    if (paranoid <= 2) {
      REQUIRE(r.exit_code == 0);
      auto script = perf_script(out + "/profile/perf.pipedata");
      CHECK(parse_perf_script(script.out).size() >= 10);
    } else {
      CHECK(r.exit_code != 0);
      CHECK(r.err.find("perf_event_paranoid") != std::string::npos);
    }
  }

  TEST_CASE(
      "refused sampling without --allow-no-profile does not start the "
      "benchmark") {
    TempDir dir;
    // The runner under a seccomp filter that refuses perf_event_open with
    // EACCES (as a container's default profile does): refused on every
    // machine, with or without a PMU, whatever the privileges.
    auto refused = [&](std::vector<std::string> extra) {
      auto argv = runner_run(dir, std::move(extra), {"touch", dir.file("ran")});
      argv.insert(argv.begin(), binary("NO_PERF_EVENTS_BIN"));
      return run_process(argv);
    };
    auto r = refused({});
    INFO(r.err);
    CHECK(r.exit_code != 0);
    CHECK(r.err.find("cannot start sampling") != std::string::npos);
    CHECK(r.err.find("--allow-no-profile") != std::string::npos);
    CHECK_FALSE(file_exists(dir.file("ran")));
    auto allowed = refused({"--allow-no-profile", "--allow-empty"});
    INFO(allowed.err);
    CHECK(allowed.exit_code == 0);
    CHECK(file_exists(dir.file("ran")));
  }
}
