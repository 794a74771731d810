// `runner exec --interleave` and `runner compare --interleaved` on real
// processes under the real runner:
//
// - the order: two commands that append a letter to one file run as
//   A B B A A B B A ... (the warmup alternating too), and the runner is told
//   the same: one benchmark window and one CurrentBenchmark per round, in
//   ABBA order, two results entries with as many rounds each;
// - the verdicts on the deterministic workload (programs/compare_workload.c):
//   B doing 30% more work than A is a regression (+16% to +28% measured
//   under load), the reverse an improvement (each within kAttempts attempts),
//   and A against A (100 pairs) raises no false alarm in any attempt
//   (unchanged, or inconclusive when a busy machine widens the interval; up to
//   kAttempts attempts for unchanged);
// - malformed use: one command, three commands, an empty side, a command
//   that fails in round k, a runner.yml of three benchmarks, a folder that
//   is not an interleaved run: each a clear error and its exit status.
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "base/fs.hpp"
#include "tests/e2e/e2e_support.hpp"
#include "tests/support/temp_dir.hpp"

using namespace runner::testing;

namespace {

constexpr int kAttempts = 3;

std::vector<std::string> env_with_harness() {
  return {"RUNNER_EXEC_HARNESS=" + binary("EXEC_HARNESS_BIN")};
}

ProcessResult exec_interleaved(const TempDir& dir, const std::string& folder,
                               std::vector<std::string> extra,
                               const std::vector<std::string>& command,
                               const std::string& cwd = "") {
  extra.insert(extra.begin(), "--interleave");
  return run_process(
      runner_argv("exec", dir.file(folder), dir.path(), extra, command),
      env_with_harness(), cwd);
}

ProcessResult compare_interleaved(const std::string& folder,
                                  std::vector<std::string> extra = {}) {
  std::vector<std::string> argv = {binary("RUNNER_BIN"), "compare",
                                   "--interleaved", folder};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return run_process(argv);
}

std::string text_of(const std::string& path) {
  auto text = runner::base::read_file(path);
  return text ? *text : "";
}

// The workload against itself (`slower` 0) or against 30% more work, under
// the runner, then compared: compare.json.
nlohmann::json workload_comparison(const TempDir& dir, const std::string& name,
                                   const std::string& a_slower,
                                   const std::string& b_slower,
                                   const std::string& rounds = "30") {
  const std::string workload = binary("COMPARE_WORKLOAD_BIN");
  auto run = exec_interleaved(
      dir, name, {"--warmup-time", "200ms", "--max-rounds", rounds},
      {workload, "--slower", a_slower, ":::", workload, "--slower", b_slower});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  auto compared = compare_interleaved(dir.file(name), {"--format", "json"});
  INFO(compared.out, compared.err);
  REQUIRE((compared.exit_code == 0 || compared.exit_code == 1));
  auto json = nlohmann::json::parse(compared.out);
  CHECK(json == read_json_file(dir.file(name) + "/compare/compare.json"));
  CHECK(compared.exit_code == (json["verdict"] == "regression" ? 1 : 0));
  return json;
}

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE("runner exec --interleave: ABBA order, one window per round") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    const std::string log = dir.file("order");
    auto r = exec_interleaved(dir, "ab",
                              {"--warmup-time", "100ms", "--max-rounds", "6"},
                              {"sh", "-c", "printf A >> " + log, ":::", "sh",
                               "-c", "printf B >> " + log});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    // The warmup pairs alternate (AB BA AB ...), then 6 measured pairs.
    const std::string order = text_of(log);
    INFO(order);
    REQUIRE(order.size() >= 12 + 2);
    CHECK(order.substr(order.size() - 12) == "ABBAABBAABBA");
    const std::string warmup = order.substr(0, order.size() - 12);
    CHECK(warmup.size() % 2 == 0);
    for (size_t i = 0; i < warmup.size(); ++i) {
      const bool even_pair = (i / 2) % 2 == 0, first = i % 2 == 0;
      CHECK(warmup[i] == (first == even_pair ? 'A' : 'B'));
    }
    CHECK(r.err.find("interleaved: 6 pairs in ABBA order") !=
          std::string::npos);

    const std::string folder = dir.file("ab");
    auto files = list_dir(folder + "/results");
    REQUIRE(files.size() == 1);
    auto res = read_json_file(folder + "/results/" + files[0]);
    REQUIRE(res["benchmarks"].size() == 2);
    const std::string a = res["benchmarks"][0]["uri"],
                      b = res["benchmarks"][1]["uri"];
    CHECK(a == "exec_harness::sh -c printf A >> " + log);
    CHECK(b == "exec_harness::sh -c printf B >> " + log);
    CHECK(res["benchmarks"][0]["times_per_round_ns"].size() == 6);
    CHECK(res["benchmarks"][1]["times_per_round_ns"].size() == 6);

    // One CurrentBenchmark per measured round, in ABBA order; one window
    // (SampleStart, RoundStart, RoundEnd, SampleEnd) per round.
    auto ts = read_msgpack_file(folder + "/ExecutionTimestamps.msgpack");
    std::string announced;
    for (const auto& entry : ts["uri_by_ts"])
      announced += entry[1] == a ? 'A' : entry[1] == b ? 'B' : '?';
    CHECK(announced == "ABBAABBAABBA");
    const auto& markers = ts["markers"];
    REQUIRE(markers.size() == 4 * 12);
    for (size_t i = 0; i < markers.size(); ++i) {
      static const char* kKinds[] = {"SampleStart", "RoundStart", "RoundEnd",
                                     "SampleEnd"};
      CHECK_MESSAGE(markers[i].contains(kKinds[i % 4]), markers[i].dump());
    }
    // Each round's time is its window's round.
    const auto& a_rounds = res["benchmarks"][0]["times_per_round_ns"];
    const uint64_t first_round =
        static_cast<uint64_t>(markers[2]["RoundEnd"]) -
        static_cast<uint64_t>(markers[1]["RoundStart"]);
    CHECK(a_rounds[0] == first_round);

    // compare --interleaved reads it: 6 pairs.
    auto compared = compare_interleaved(folder, {"--format", "json"});
    INFO(compared.err);
    REQUIRE((compared.exit_code == 0 || compared.exit_code == 1));
    auto json = nlohmann::json::parse(compared.out);
    CHECK(json["settings"]["paired"] == true);
    CHECK(json["benchmarks"][0]["test"] == "wilcoxon-signed-rank");
    CHECK(json["benchmarks"][0]["base"]["rounds"] == 6);
    CHECK(json["base"]["command"] == "sh -c printf A >> " + log);
    CHECK(json["head"]["command"] == "sh -c printf B >> " + log);
  }

  TEST_CASE("30% more work in B: a regression; B/A an improvement") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    bool regression = false, improvement = false;
    for (int attempt = 1; attempt <= kAttempts && !regression; ++attempt) {
      auto json =
          workload_comparison(dir, "ab" + std::to_string(attempt), "0", "30");
      const auto& c = json["benchmarks"][0];
      MESSAGE("A/B attempt " << attempt << ": " << c["verdict"] << " "
                             << c["change"] << " [" << c["ci_low"] << ", "
                             << c["ci_high"] << "]");
      CHECK(c["verdict"] != "improvement");
      CHECK(c["uri"] == std::string("exec_harness::") +
                            binary("COMPARE_WORKLOAD_BIN") + " --slower 30");
      // 30% more work is +16% to +28% of a round on a busy 2-core
      // machine (the spawn's fixed cost, the neighbours' share of caches).
      regression = c["verdict"] == "regression" &&
                   c["change"].get<double>() > 0.08 &&
                   c["change"].get<double>() < 0.6;
    }
    CHECK(regression);
    for (int attempt = 1; attempt <= kAttempts && !improvement; ++attempt) {
      auto json =
          workload_comparison(dir, "ba" + std::to_string(attempt), "30", "0");
      const auto& c = json["benchmarks"][0];
      MESSAGE("B/A attempt " << attempt << ": " << c["verdict"] << " "
                             << c["change"]);
      CHECK(c["verdict"] != "regression");
      improvement = c["verdict"] == "improvement" &&
                    c["change"].get<double>() < -0.07 &&
                    c["change"].get<double>() > -0.4;
    }
    CHECK(improvement);
  }

  TEST_CASE("A against A: no false alarm") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    bool unchanged = false;
    for (int attempt = 1; attempt <= kAttempts && !unchanged; ++attempt) {
      // 100 pairs: with 30, the tests running beside this one once made
      // an attempt a false alarm (-5.4% [-14.1%, -0.2%]).
      auto json = workload_comparison(dir, "aa" + std::to_string(attempt), "0",
                                      "0", "100");
      const auto& c = json["benchmarks"][0];
      MESSAGE("A/A attempt " << attempt << ": " << c["verdict"] << " "
                             << c["change"] << " [" << c["ci_low"] << ", "
                             << c["ci_high"] << "], detectable "
                             << c["detectable_change"]);
      // The same command twice: the names get (A) and (B).
      CHECK(c["name"].get<std::string>().find(" --slower 0 (B) vs ") !=
            std::string::npos);
      CHECK(c["verdict"] != "regression");
      CHECK(c["verdict"] != "improvement");
      unchanged = c["verdict"] == "unchanged";
      // The hint names what gives an interleaved run more pairs.
      if (c["verdict"] == "inconclusive")
        CHECK(c["reason"].get<std::string>().find(
                  "more rounds (runner exec --interleave --max-rounds) "
                  "narrow it") != std::string::npos);
    }
    // Under load the interval can stay wider than the threshold
    // (inconclusive): no false alarm is what is required.
    if (!unchanged)
      MESSAGE("A/A never unchanged in " << kAttempts << " attempts");
  }

  TEST_CASE("runner exec --interleave: runner.yml's two benchmarks") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    REQUIRE(runner::base::write_file_atomic(
        dir.file("runner.yml"),
        "options:\n  warmup-time: 0s\n  max-rounds: 4\n"
        "benchmarks:\n  - name: old\n    exec: 'true'\n"
        "  - name: new\n    exec: 'true 1'\n"));
    auto r = exec_interleaved(dir, "yml", {}, {}, dir.path());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    auto ts =
        read_msgpack_file(dir.file("yml") + "/ExecutionTimestamps.msgpack");
    std::string announced;
    for (const auto& entry : ts["uri_by_ts"])
      announced += entry[1] == "exec_harness::old"   ? 'A'
                   : entry[1] == "exec_harness::new" ? 'B'
                                                     : '?';
    CHECK(announced == "ABBAABBA");

    // Options that differ between the two cannot share one loop.
    REQUIRE(runner::base::write_file_atomic(
        dir.file("runner.yml"),
        "benchmarks:\n  - exec: 'true'\n  - exec: 'true 1'\n"
        "    options:\n      max-rounds: 3\n"));
    auto differ = exec_interleaved(dir, "differ", {}, {}, dir.path());
    CHECK(differ.exit_code == 2);
    CHECK(differ.err ==
          "runner exec: interleaved benchmarks run in one loop: give both "
          "the same walltime options\n");
  }

  TEST_CASE("runner exec --interleave: malformed use is refused") {
    TempDir dir;
    SUBCASE("one command") {
      auto r = exec_interleaved(dir, "p", {}, {"true"});
      CHECK(r.exit_code == 2);
      CHECK(r.err.find("--interleave takes two commands separated by ':::' "
                       "(got one; usage: runner exec --interleave") !=
            std::string::npos);
      CHECK_FALSE(file_exists(dir.file("p")));
    }
    SUBCASE("three commands") {
      auto r = exec_interleaved(dir, "p", {},
                                {"true", ":::", "true", ":::", "true"});
      CHECK(r.exit_code == 2);
      CHECK(r.err.find("(got more than two;") != std::string::npos);
    }
    SUBCASE("an empty side") {
      auto r = exec_interleaved(dir, "p", {}, {":::", "true"});
      CHECK(r.exit_code == 2);
      CHECK(r.err.find("--interleave: a command is empty") !=
            std::string::npos);
    }
    SUBCASE("runner.yml with three benchmarks") {
      REQUIRE(runner::base::write_file_atomic(
          dir.file("runner.yml"),
          "benchmarks:\n  - exec: 'true'\n  - exec: 'true 1'\n"
          "  - exec: 'true 2'\n"));
      auto r = exec_interleaved(dir, "p", {}, {}, dir.path());
      CHECK(r.exit_code == 2);
      CHECK(r.err.find("interleaving alternates exactly two benchmarks, A "
                       "and B (3 given)") != std::string::npos);
    }
    SUBCASE("a command that fails in its round 3") {
      RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
      // B fails on its third start (counted in a file).
      const std::string count = dir.file("count");
      const std::string b =
          "echo >> " + count + "; test $(wc -l < " + count + ") -lt 3";
      auto r = exec_interleaved(dir, "p",
                                {"--warmup-time", "0", "--max-rounds", "5"},
                                {"true", ":::", "sh", "-c", b});
      INFO(r.err);
      CHECK(r.exit_code == 1);
      CHECK(r.err.find("exec-harness: interleaved benchmarks 'true' and 'sh "
                       "-c " +
                       b + "' failed: round 3: 'sh -c " + b +
                       "': command exited with code 1 (no results "
                       "written)") != std::string::npos);
      CHECK(list_dir(dir.file("p") + "/results").empty());
    }
  }

  TEST_CASE("runner compare --interleaved: what is not one interleaved run") {
    TempDir dir;
    SUBCASE("a folder of one benchmark") {
      RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
      auto run = run_process(
          runner_argv("exec", dir.file("one"), dir.path(),
                      {"--warmup-time", "0", "--max-rounds", "6"}, {"true"}),
          env_with_harness());
      REQUIRE(run.exit_code == 0);
      auto r = compare_interleaved(dir.file("one"));
      CHECK(r.exit_code == 2);
      CHECK(r.err == "runner compare: interleaved folder '" + dir.file("one") +
                         "': holds 1 benchmarks, not the two of one "
                         "interleaved run (an interleaved folder comes from "
                         "'runner exec --interleave -- COMMAND_A ::: "
                         "COMMAND_B')\n");
    }
    SUBCASE("two benchmarks run one after the other") {
      RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
      REQUIRE(runner::base::write_file_atomic(
          dir.file("runner.yml"),
          "options:\n  warmup-time: 0s\n  max-rounds: 6\n"
          "benchmarks:\n  - exec: 'true'\n  - exec: 'true 1'\n"));
      auto run =
          run_process(runner_argv("exec", dir.file("seq"), dir.path(), {}, {}),
                      env_with_harness(), dir.path());
      REQUIRE(run.exit_code == 0);
      auto r = compare_interleaved(dir.file("seq"));
      CHECK(r.exit_code == 2);
      CHECK(r.err.find("not an interleaved run: the runner was told 2 "
                       "rounds, the results hold 12") != std::string::npos);
    }
    SUBCASE("usage errors") {
      auto two = run_process({binary("RUNNER_BIN"), "compare", "--interleaved",
                              dir.path(), dir.path()});
      CHECK(two.exit_code == 2);
      CHECK(two.err.find("--interleaved takes one folder") !=
            std::string::npos);
      auto paired = run_process({binary("RUNNER_BIN"), "compare",
                                 "--interleaved", "--paired", dir.path()});
      CHECK(paired.exit_code == 2);
      CHECK(paired.err.find("--interleaved and --paired do not go together") !=
            std::string::npos);
    }
  }
}
