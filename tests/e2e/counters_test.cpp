// runner.counters.json on real runs: the task-clock the runner counts in
// each benchmark window against the CPU time (getrusage) the benchmark's
// processes report themselves (cpu_burner), single-threaded, threaded,
// forking and in the kernel; hardware counters absent without a PMU and
// present with one; lost windows; refused perf events never failing a run.
#include <linux/perf_event.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>

#include <doctest/doctest.h>

#include "compare/samples.hpp"
#include "tests/e2e/e2e_support.hpp"
#include "tests/support/perf_events.hpp"
#include "tests/support/temp_dir.hpp"

using namespace runner::testing;

namespace {

constexpr int kRounds = 4;
// What a window holds beyond what the burner's processes report of
// themselves: exec-harness's fork, exec and wait of each round, and the
// kernel's time in them for sampling (stack copies), which task-clock
// charges to the task and tick-based rusage may not; more when other jobs
// load the machine (caches, interrupts).
constexpr double kSlack = 1.05;
constexpr double kRoundNs = 10e6;

std::vector<std::string> env_with_harness() {
  return {"RUNNER_EXEC_HARNESS=" + binary("EXEC_HARNESS_BIN")};
}

// The CPU time the burner's runs reported, and how many runs there were.
std::pair<double, size_t> reported_cpu_ns(const std::string& file) {
  std::ifstream in(file);
  double total = 0;
  size_t lines = 0;
  for (std::string line; std::getline(in, line); ++lines)
    total += std::stod(line);
  return {total, lines};
}

// Runs `runner exec` on cpu_burner MODE MS (after `warmup` of warmup
// rounds); the counters file.
nlohmann::json run_burner(const TempDir& dir, const std::string& mode,
                          const std::string& ms, const std::string& out,
                          const std::string& warmup = "0") {
  auto r = run_process(runner_argv("exec", dir.file("profile"), dir.path(),
                                   {"--warmup-time", warmup, "--max-rounds",
                                    std::to_string(kRounds)},
                                   {binary("CPU_BURNER_BIN"), mode, ms, out}),
                       env_with_harness());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return read_json_file(dir.file("profile") + "/runner.counters.json");
}

const nlohmann::json* counter_info(const nlohmann::json& doc,
                                   const std::string& name) {
  for (const auto& c : doc["counters"])
    if (c["name"] == name) return &c;
  return nullptr;
}

// errno of opening hardware instructions on this process (0: opened).
int pmu_refusal() {
  return perf_event_open_errno(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS);
}

bool no_pmu(int err) {
  return err == ENOENT || err == EOPNOTSUPP || err == ENODEV;
}

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE("task-clock of a window agrees with the process tree's rusage") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    for (const char* mode : {"spin", "threads", "fork", "syscalls"}) {
      SUBCASE(mode) {
        TempDir dir;
        const std::string out = dir.file("cpu.txt");
        auto doc = run_burner(dir, mode, "100", out);
        INFO(doc.dump(2));
        REQUIRE(doc["version"] == 1);
        const auto* info = counter_info(doc, "task-clock");
        REQUIRE(info != nullptr);
        REQUIRE((*info)["counted"] == true);
        REQUIRE(doc["windows"].size() == 1);
        CHECK(doc["lost_windows"] == 0);
        const auto& window = doc["windows"][0];
        CHECK(window["start_ns"].get<uint64_t>() <
              window["stop_ns"].get<uint64_t>());
        const double counted = window["task-clock"]["value"].get<double>();
        const auto [reported, runs] = reported_cpu_ns(out);
        REQUIRE(runs == static_cast<size_t>(kRounds));
        // The window also holds exec-harness's fork/exec/wait of each
        // round: up to kSlack and kRoundNs a round above what the runs
        // report, never below it by more than getrusage's rounding.
        MESSAGE(std::string(mode) << ": task-clock " << counted / 1e6
                                  << " ms, rusage " << reported / 1e6 << " ms");
        CHECK(counted >= reported * 0.99);
        CHECK(counted <= reported * kSlack + kRoundNs * kRounds);
      }
    }
  }

  TEST_CASE("compare's loader: CPU time per iteration of a real folder") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    const std::string out = dir.file("cpu.txt");
    run_burner(dir, "threads", "30", out);
    auto side = runner::compare::load_side("head", {dir.file("profile")});
    REQUIRE_MESSAGE(side, side.error().what());
    REQUIRE(side->benchmarks.size() == 1);
    const auto& b = side->benchmarks[0];
    REQUIRE(b.folder_counters.size() == 1);
    const auto& c = b.folder_counters[0];
    CHECK(c.windows == 1);
    CHECK(c.iterations == kRounds);  // exec-harness: one per round
    REQUIRE(c.cpu_ns_per_iter);
    const auto [reported, runs] = reported_cpu_ns(out);
    REQUIRE(runs == static_cast<size_t>(kRounds));
    const double per_run = reported / kRounds;
    MESSAGE("cpu per iteration " << *c.cpu_ns_per_iter / 1e6
                                 << " ms, rusage per run " << per_run / 1e6
                                 << " ms");
    CHECK(*c.cpu_ns_per_iter >= per_run * 0.99);
    CHECK(*c.cpu_ns_per_iter <= per_run * kSlack + kRoundNs);
  }

  TEST_CASE("compare's loader: exec-harness's warmup inside its window") {
    // exec-harness opens its window before the warmup and reports the
    // warmup rounds (warmup_iters): the CPU time per iteration divides by
    // warmup and measured rounds alike, with nothing left unexplained.
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    const std::string out = dir.file("cpu.txt");
    run_burner(dir, "spin", "20", out, "100ms");
    auto side = runner::compare::load_side("head", {dir.file("profile")});
    REQUIRE_MESSAGE(side, side.error().what());
    REQUIRE(side->benchmarks.size() == 1);
    const auto& c = side->benchmarks[0].folder_counters.at(0);
    const auto [reported, runs] = reported_cpu_ns(out);
    REQUIRE(runs > static_cast<size_t>(kRounds));  // warmup rounds ran
    CHECK(c.warmup_iterations == runs - kRounds);
    CHECK(c.iterations == runs);
    CHECK(side->counter_warnings.empty());
    REQUIRE(c.cpu_ns_per_iter);
    const double per_run = reported / static_cast<double>(runs);
    CHECK(*c.cpu_ns_per_iter >= per_run * 0.99);
    CHECK(*c.cpu_ns_per_iter <= per_run * kSlack + kRoundNs);
  }

  TEST_CASE("runner run, several benchmarks: one window each, on its URI") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    auto r = run_process(runner_argv("run", dir.file("profile"), dir.path(), {},
                                     {binary("EXAMPLE_BIN"), "--rounds", "3"}));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    auto side = runner::compare::load_side("head", {dir.file("profile")});
    REQUIRE_MESSAGE(side, side.error().what());
    REQUIRE(side->benchmarks.size() == 3);  // fib, memcpy, sort
    for (const auto& b : side->benchmarks) {
      CAPTURE(b.uri);
      REQUIRE(b.folder_counters.size() == 1);
      const auto& c = b.folder_counters[0];
      CHECK(c.windows == 1);
      CHECK(c.iterations == 3);
      REQUIRE(c.cpu_ns_per_iter);
      // CPU-bound rounds on one thread: CPU time per iteration above zero
      // and not above the rounds' mean wall time by more than 5% (the
      // window also holds the markers sent after the rounds).
      REQUIRE(b.samples.times_ns.size() == 3);
      double mean = 0;
      for (double t : b.samples.times_ns) mean += t / 3;
      CHECK(*c.cpu_ns_per_iter > 0);
      CHECK(*c.cpu_ns_per_iter <= mean * 1.05 + 1e6);
    }
    CHECK(side->counter_warnings.empty());
  }

  TEST_CASE("an ordinary user: task-clock still counts kernel time") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    const bool root = ::geteuid() == 0;
    if (root && ::access("/usr/bin/setpriv", X_OK) != 0)
      RUNNER_SKIP_CASE("root without /usr/bin/setpriv to become nobody");
    std::ifstream paranoid_file("/proc/sys/kernel/perf_event_paranoid");
    int paranoid = 2;
    paranoid_file >> paranoid;
    if (paranoid > 2)
      RUNNER_SKIP_CASE("kernel.perf_event_paranoid " +
                       std::to_string(paranoid) +
                       " refuses perf events to ordinary users");
    TempDir dir;
    REQUIRE(::chmod(dir.path().c_str(), 0777) == 0);
    const std::vector<std::string> as_nobody = {
        "/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"};
    if (root) {
      // A private (0700) checkout or TMPDIR keeps nobody out of the
      // binaries or the folder.
      std::vector<std::string> reach = as_nobody;
      reach.insert(reach.end(),
                   {"/usr/bin/test", "-x", binary("RUNNER_BIN"), "-a", "-x",
                    binary("CPU_BURNER_BIN"), "-a", "-x",
                    binary("EXEC_HARNESS_BIN"), "-a", "-w", dir.path()});
      if (run_process(reach).exit_code != 0)
        RUNNER_SKIP_CASE(
            "nobody cannot run the built binaries or write the test folder "
            "(a private checkout or TMPDIR)");
    }
    const std::string out = dir.file("cpu.txt");
    auto argv = runner_argv("exec", dir.file("profile"), dir.path(),
                            {"--warmup-time", "0", "--max-rounds", "3"},
                            {binary("CPU_BURNER_BIN"), "syscalls", "100", out});
    if (root) argv.insert(argv.begin(), as_nobody.begin(), as_nobody.end());
    auto r = run_process(
        argv, {"RUNNER_EXEC_HARNESS=" + binary("EXEC_HARNESS_BIN"),
               "XDG_CACHE_HOME=" + dir.file("cache"), "HOME=" + dir.path()});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    auto doc = read_json_file(dir.file("profile") + "/runner.counters.json");
    INFO(doc.dump(2));
    const auto* info = counter_info(doc, "task-clock");
    REQUIRE(info != nullptr);
    REQUIRE((*info)["counted"] == true);
    // Kernel counting is refused to ordinary users from paranoid 2 on.
    CHECK((*info)["user_only"] == (paranoid >= 2));
    REQUIRE(doc["windows"].size() == 1);
    const double counted = doc["windows"][0]["task-clock"]["value"];
    const auto [reported, runs] = reported_cpu_ns(out);
    REQUIRE(runs == 3);
    MESSAGE("user_only " << (*info)["user_only"] << ": task-clock "
                         << counted / 1e6 << " ms, rusage " << reported / 1e6
                         << " ms (mostly kernel time)");
    CHECK(counted >= reported * 0.99);
    CHECK(counted <= reported * kSlack + kRoundNs * 3);
  }

  TEST_CASE("without a hardware PMU instructions and cycles are absent") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    const int err = pmu_refusal();
    if (!no_pmu(err))
      RUNNER_SKIP_CASE("this machine has a hardware PMU (instructions open)");
    TempDir dir;
    auto doc = run_burner(dir, "spin", "20", dir.file("cpu.txt"));
    for (const char* name : {"instructions", "cycles"}) {
      const auto* info = counter_info(doc, name);
      REQUIRE(info != nullptr);
      CHECK((*info)["counted"] == false);
      CHECK((*info)["absent_reason"].get<std::string>().find(
                "no hardware PMU") != std::string::npos);
      for (const auto& window : doc["windows"]) CHECK(!window.contains(name));
    }
    CHECK(doc["windows"][0].contains("task-clock"));
  }

  TEST_CASE("with a hardware PMU instructions and cycles are counted") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    const int err = pmu_refusal();
    if (no_pmu(err))
      RUNNER_SKIP_CASE("no hardware PMU here (instructions do not open)");
    TempDir dir;
    auto doc = run_burner(dir, "spin", "100", dir.file("cpu.txt"));
    INFO(doc.dump(2));
    for (const char* name : {"instructions", "cycles"}) {
      const auto* info = counter_info(doc, name);
      REQUIRE(info != nullptr);
      REQUIRE((*info)["counted"] == true);
      const auto& delta = doc["windows"][0][name];
      // 4 x 100 ms of a spinning loop: far more than 10^7 of either.
      CHECK(delta["value"].get<double>() > 1e7);
      CHECK(delta["multiplexed"] ==
            (delta["running_ns"] < delta["enabled_ns"]));
    }
  }

  TEST_CASE("a window the benchmark never closed is counted as lost") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    auto r = run_process(runner_argv("run", dir.file("profile"), dir.path(),
                                     {"--allow-empty"},
                                     {binary("EXIT_IN_WINDOW_BIN")}));
    INFO(r.err);
    auto doc = read_json_file(dir.file("profile") + "/runner.counters.json");
    CHECK(doc["windows"].empty());
    CHECK(doc["lost_windows"] == 1);
    CHECK(doc["lost_reason"].get<std::string>().find("exited inside") !=
          std::string::npos);
    CHECK(r.err.find("window(s) have no counts") != std::string::npos);
  }

  TEST_CASE("refused perf events: the run goes on, the file says why") {
    TempDir dir;
    auto argv = runner_argv(
        "exec", dir.file("profile"), dir.path(),
        {"--allow-no-profile", "--warmup-time", "0", "--max-rounds", "2"},
        {binary("CPU_BURNER_BIN"), "spin", "10", dir.file("cpu.txt")});
    argv.insert(argv.begin(), binary("NO_PERF_EVENTS_BIN"));
    auto r = run_process(argv, env_with_harness());
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.err.find("CPU time is not counted") != std::string::npos);
    auto doc = read_json_file(dir.file("profile") + "/runner.counters.json");
    const auto* info = counter_info(doc, "task-clock");
    REQUIRE(info != nullptr);
    CHECK((*info)["counted"] == false);
    CHECK(!(*info)["absent_reason"].get<std::string>().empty());
    CHECK(doc["windows"].empty());
  }

  TEST_CASE("runner compare --metric cpu: several runs per side, run level") {
    // 3 busy threads against 1: about 3 times the CPU time per iteration,
    // whatever the wall time on 2 cores. One window per run (exec-harness's
    // rounds share it): one value per run, Welch's t on their logs.
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    std::vector<std::string> argv = {
        binary("RUNNER_BIN"), "compare", "--metric", "cpu", "--format", "json"};
    for (const auto& [side, mode] : {std::pair{"base", "spin"},
                                     {"base", "spin"},
                                     {"head", "threads"},
                                     {"head", "threads"}}) {
      const std::string folder = dir.file(side + std::to_string(argv.size()));
      auto r = run_process(
          runner_argv(
              "exec", folder, dir.path(),
              {"--name", "burn", "--warmup-time", "0", "--max-rounds", "3"},
              {binary("CPU_BURNER_BIN"), mode, "20", dir.file("o")}),
          env_with_harness());
      INFO(r.err);
      REQUIRE(r.exit_code == 0);
      argv.insert(argv.end(), {std::string("--") + side, folder});
    }
    auto r = run_process(argv);
    INFO(r.out, r.err);
    REQUIRE((r.exit_code == 0 || r.exit_code == 1));
    const auto json = nlohmann::json::parse(r.out);
    CHECK(json["settings"]["metric"] == "cpu");
    const auto& b = json["benchmarks"].at(0);
    MESSAGE("cpu: " << b["verdict"] << " " << b["change"] << " [" << b["ci_low"]
                    << ", " << b["ci_high"] << "]");
    CHECK(b["test"] == "welch-t");
    CHECK(b["noise"] == "runs");
    CHECK(b["base"]["source"] == "runs");
    CHECK(b["base"]["rounds"] == 2);
    CHECK(b["runs"]["base_runs"] == 2);
    REQUIRE(b["change"].is_number());
    CHECK(b["change"].get<double>() > 1.6);
    CHECK(b["change"].get<double>() < 2.4);
    // The base's CPU time per iteration: 20 ms of spinning and the spawn.
    CHECK(b["base"]["median_ns"].get<double>() > 19e6);
    CHECK(b["base"]["median_ns"].get<double>() < 30e6);
  }

  TEST_CASE("runner compare --interleaved --metric cpu: per round, not waits") {
    // B sleeps 80 ms before the same 60 ms of spinning: its wall time per
    // round is far above A's, its CPU time A's and the shell's and sleep's
    // start (a few ms).
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    const std::string burner = binary("CPU_BURNER_BIN"), out = dir.file("o");
    const std::string folder = dir.file("ab");
    auto r = run_process(
        runner_argv("exec", folder, dir.path(),
                    {"--interleave", "--warmup-time", "0", "--max-rounds", "8"},
                    {burner, "spin", "60", out, ":::", "/bin/sh", "-c",
                     "sleep 0.08; exec \"$0\" spin 60 \"$1\"", burner, out}),
        env_with_harness());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto compared = [&](const std::string& metric) {
      auto c = run_process({binary("RUNNER_BIN"), "compare", "--interleaved",
                            folder, "--metric", metric, "--format", "json",
                            "--out", dir.file("c-" + metric)});
      INFO(c.out, c.err);
      REQUIRE((c.exit_code == 0 || c.exit_code == 1));
      return nlohmann::json::parse(c.out);
    };
    const auto wall = compared("wall"), cpu = compared("cpu");
    CHECK(cpu["settings"]["metric"] == "cpu");
    const auto& w = wall["benchmarks"].at(0);
    const auto& c = cpu["benchmarks"].at(0);
    MESSAGE("wall " << w["change"] << ", cpu " << c["change"] << " "
                    << c["verdict"]);
    CHECK(c["base"]["rounds"] == 8);
    CHECK(c["test"] == "wilcoxon-signed-rank");
    REQUIRE(w["change"].is_number());
    REQUIRE(c["change"].is_number());
    CHECK(w["change"].get<double>() > 0.8);
    CHECK(std::fabs(c["change"].get<double>()) < 0.15);
    // instructions: counted with a hardware PMU, else a clear refusal.
    auto i = run_process({binary("RUNNER_BIN"), "compare", "--interleaved",
                          folder, "--metric", "instructions"});
    if (no_pmu(pmu_refusal())) {
      CHECK(i.exit_code == 2);
      CHECK(i.err.find("--metric instructions: instructions was not counted") !=
            std::string::npos);
    } else {
      CHECK((i.exit_code == 0 || i.exit_code == 1));
    }
  }
}
