// End-to-end tests of `runner exec` (the exec-harness under the runner).
#include <sys/stat.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include "base/fs.hpp"
#include "tests/e2e/e2e_support.hpp"
#include "tests/support/temp_dir.hpp"

using namespace runner::testing;

namespace {

std::vector<std::string> runner_exec(const TempDir& dir,
                                     std::vector<std::string> extra,
                                     std::vector<std::string> command) {
  return runner_argv("exec", dir.file("profile"), dir.path(), extra, command);
}

std::vector<std::string> env_with_harness() {
  return {"RUNNER_EXEC_HARNESS=" + binary("EXEC_HARNESS_BIN")};
}

uint64_t file_size(const std::string& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return static_cast<uint64_t>(st.st_size);
}

// The "N samples" of the runner's summary line.
uint64_t summary_samples(const std::string& err) {
  const size_t at = err.find(" samples, ");
  REQUIRE(at != std::string::npos);
  const size_t from = err.rfind(' ', at - 1) + 1;
  return std::stoull(err.substr(from, at - from));
}

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE(
      "runner exec sleep: table, 5 rounds, markers, artifacts of the child") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    auto r = run_process(
        runner_exec(dir, {"--warmup-time", "0", "--max-rounds", "5"},
                    {"sleep", "0.01"}),
        env_with_harness());
    INFO(r.out, r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.err.find("sleep 0.01") != std::string::npos);  // the table
    const std::string folder = dir.file("profile");
    auto files = list_dir(folder + "/results");
    REQUIRE(files.size() == 1);
    auto res = read_json_file(folder + "/results/" + files[0]);
    REQUIRE(res["benchmarks"].size() == 1);
    CHECK(res["benchmarks"][0]["uri"] == "exec_harness::sleep 0.01");
    CHECK(res["benchmarks"][0]["stats"]["rounds"] == 5);
    CHECK(res["creator"]["name"] == "exec-harness");
    auto ts = read_msgpack_file(folder + "/ExecutionTimestamps.msgpack");
    const auto& markers = ts["markers"];
    REQUIRE(markers.size() == 12);
    REQUIRE(markers[0].contains("SampleStart"));
    REQUIRE(markers[11].contains("SampleEnd"));
    uint64_t start = markers[0]["SampleStart"], end = markers[11]["SampleEnd"];
    for (size_t i = 1; i <= 10; ++i) {
      const char* name = (i % 2 == 1) ? "RoundStart" : "RoundEnd";
      REQUIRE_MESSAGE(markers[i].contains(name), markers[i].dump());
      uint64_t t = markers[i][name];
      CHECK(t >= start);
      CHECK(t <= end);
    }
    // The raw rounds are the marked rounds, one iteration each.
    const auto& bench = res["benchmarks"][0];
    REQUIRE(bench["times_per_round_ns"].size() == 5);
    CHECK(bench["iters_per_round"] == nlohmann::json({1, 1, 1, 1, 1}));
    for (size_t i = 0; i < 5; ++i) {
      const uint64_t round_start = markers[1 + 2 * i]["RoundStart"];
      const uint64_t round_end = markers[2 + 2 * i]["RoundEnd"];
      CHECK(bench["times_per_round_ns"][i] == round_end - round_start);
      // The clock is read before the spawn: no round is shorter than the
      // command's own 10 ms sleep, however busy the machine.
      CHECK(bench["times_per_round_ns"][i] >= uint64_t{10'000'000});
    }
    auto meta = read_json_file(folder + "/perf.metadata");
    CHECK(meta["integration"][0] == "exec-harness");
    CHECK(meta["runner"]["pid_filter"] == "all");
    bool has_sleep = false, has_libc = false;
    for (const auto& [key, path] : meta["path_key_to_path"].items()) {
      std::string p = path;
      has_sleep |= p.size() >= 6 && p.substr(p.size() - 6) == "/sleep";
      has_libc |= p.find("libc.so.6") != std::string::npos;
    }
    CHECK(has_sleep);
    CHECK(has_libc);
  }

  TEST_CASE("runner exec on a CPU-bound program shows its hot function") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    auto r = run_process(
        runner_exec(dir, {"--warmup-time", "0", "--max-rounds", "3"},
                    {binary("SPINNER_BIN"), "150"}),
        env_with_harness());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    auto script = perf_script(dir.file("profile/perf.pipedata"));
    auto samples = parse_perf_script(script.out);
    size_t hot = 0, spinner = 0;
    for (const auto& s : samples) {
      if (s.comm != "spinner") continue;
      ++spinner;
      if (!s.frames.empty() &&
          s.frames[0].sym.find("spin_hot") != std::string::npos)
        ++hot;
    }
    REQUIRE(spinner >= 50);
    CHECK(hot * 10 >= spinner * 8);
  }

  TEST_CASE(
      "runner exec --compress: zstd records that perf script and runner "
      "report read, in a smaller file") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir plain_dir, packed_dir;
    const std::vector<std::string> opts = {"--warmup-time", "0", "--max-rounds",
                                           "3"};
    std::vector<std::string> packed_opts = opts;
    packed_opts.insert(packed_opts.begin(), "--compress");
    const std::vector<std::string> work = {binary("SPINNER_BIN"), "150"};
    auto plain =
        run_process(runner_exec(plain_dir, opts, work), env_with_harness());
    auto packed = run_process(runner_exec(packed_dir, packed_opts, work),
                              env_with_harness());
    INFO(plain.err, packed.err);
    REQUIRE(plain.exit_code == 0);
    REQUIRE(packed.exit_code == 0);
    CHECK(packed.err.find("(zstd level 1, ") != std::string::npos);
    CHECK(plain.err.find("(zstd level") == std::string::npos);

    const std::string folder = packed_dir.file("profile");
    const std::string pipedata = folder + "/perf.pipedata";
    const uint64_t recorded = summary_samples(packed.err);
    auto script = parse_perf_script(perf_script(pipedata).out);
    CHECK(script.size() == recorded);
    CHECK(script.size() >= 100);
    auto report = run_process(
        {binary("RUNNER_BIN"), "report", "--format", "perf-script", folder});
    INFO(report.err);
    REQUIRE(report.exit_code == 0);
    CHECK(parse_perf_script(report.out).size() == script.size());

    auto header =
        run_process({"perf", "report", "-f", "-i", pipedata, "--header-only"});
    CHECK(header.out.find("compressed : Zstd, level = 1") != std::string::npos);
    // The same workload, about as many samples: far fewer bytes.
    const uint64_t plain_size =
        file_size(plain_dir.file("profile/perf.pipedata"));
    const uint64_t packed_size = file_size(pipedata);
    INFO("plain " << plain_size << " bytes, compressed " << packed_size);
    CHECK(packed_size * 2 < plain_size);
  }

  TEST_CASE("runner exec --compress=LEVEL: 1..19 only") {
    TempDir dir;
    for (const char* bad :
         {"--compress=0", "--compress=20", "--compress=fast"}) {
      auto r =
          run_process(runner_exec(dir, {bad}, {"true"}), env_with_harness());
      INFO(bad, r.err);
      CHECK(r.exit_code == 2);
      CHECK(r.err.find("--compress") != std::string::npos);
    }
  }

  TEST_CASE("runner exec bad input") {
    TempDir dir;
    auto unknown = run_process(runner_exec(dir, {"--bogus"}, {"true"}),
                               env_with_harness());
    CHECK(unknown.exit_code == 2);
    CHECK(unknown.err.find("unknown option") != std::string::npos);

    TempDir empty_cwd;
    auto missing = run_process(runner_exec(dir, {}, {}), env_with_harness(),
                               empty_cwd.path());
    CHECK(missing.exit_code == 2);
    CHECK(missing.err.find("missing the command") != std::string::npos);

    auto nonexistent = run_process(
        runner_exec(dir, {}, {"no-such-program-xyz"}), env_with_harness());
    CHECK(nonexistent.exit_code == 127);
    CHECK(nonexistent.err.find("no-such-program-xyz") != std::string::npos);
    CHECK_FALSE(file_exists(dir.file("profile")));  // nothing half-written

    auto bad_duration =
        run_process(runner_exec(dir, {"--warmup-time", "soon"}, {"true"}),
                    env_with_harness());
    CHECK(bad_duration.exit_code != 0);
  }

  TEST_CASE("runner exec: a command that crashes mid-run") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    auto r = run_process(
        runner_exec(dir, {"--warmup-time", "0", "--max-rounds", "3"},
                    {"sh", "-c", "echo about-to-crash >&2; kill -SEGV $$"}),
        env_with_harness());
    CHECK(r.exit_code != 0);
    CHECK(r.err.find("about-to-crash") != std::string::npos);
    CHECK(list_dir(dir.file("profile/results")).empty());
  }

  TEST_CASE("runner exec with runner.yml benchmarks") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    TempDir cwd;
    REQUIRE(runner::base::write_file_atomic(
        cwd.file("runner.yml"), std::string_view("options:\n"
                                                 "  warmup-time: 0s\n"
                                                 "  max-rounds: 2\n"
                                                 "benchmarks:\n"
                                                 "  - name: short-sleep\n"
                                                 "    exec: sleep 0.01\n"
                                                 "  - exec: \"true\"\n"
                                                 "    options:\n"
                                                 "      max-rounds: 3\n")));
    auto r =
        run_process(runner_exec(dir, {}, {}), env_with_harness(), cwd.path());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    auto files = list_dir(dir.file("profile/results"));
    REQUIRE(files.size() == 1);
    auto res = read_json_file(dir.file("profile/results/" + files[0]));
    REQUIRE(res["benchmarks"].size() == 2);
    CHECK(res["benchmarks"][0]["name"] == "short-sleep");
    CHECK(res["benchmarks"][0]["stats"]["rounds"] == 2);
    CHECK(res["benchmarks"][1]["stats"]["rounds"] == 3);
  }
}
