// `runner history` against a real s3rver (npm, tests/s3): a history of 60
// pushes to main is stored with the real `runner upload --store`, each run a
// copy of a golden profile folder (tests/golden/folders/example, so that the
// runs around a change have stacks to compare) with results/1.json written
// for that run: three benchmarks with 1% run-to-run noise, one stepping up
// 10% at run 40, one 3% at run 20, one flat. Checked: both steps are found
// at their commits (±1 run) with intervals holding the true size, the flat
// benchmark has none, the newest change is compared (a regression, with
// its differential flamegraph on disk), records that are not a push's or
// not records are skipped and counted, the second reading comes from the
// record cache, and the page is self-contained.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "base/fs.hpp"
#include "format/format.hpp"
#include "tests/e2e/e2e_support.hpp"
#include "tests/e2e/store_support.hpp"
#include "tests/support/perf_events.hpp"
#include "tests/support/s3rver.hpp"
#include "tests/support/skip.hpp"
#include "tests/support/temp_dir.hpp"

using namespace runner::testing;
namespace fs = std::filesystem;
namespace format = runner::format;
using Json = nlohmann::json;

namespace {

constexpr int kRuns = 60;
constexpr uint64_t kIters = 100;
const std::string kStore = "s3://bench/ci";

struct Benchmark {
  const char* uri;
  double level_ns;
  int step_at;  // -1: flat
  double step;
};
const Benchmark kBenchmarks[] = {
    {"integrations/examples/bench_example.cpp::fib", 1000, 40, 0.10},
    {"integrations/examples/bench_example.cpp::memcpy", 2000, 20, 0.03},
    {"integrations/examples/bench_example.cpp::sort", 5000, -1, 0},
};

std::string commit_of(int run) {
  char text[48];
  std::snprintf(text, sizeof text, "%040x", run + 1);
  return text;
}

// 20 rounds of `iters` iterations around ns_per_iter (0.5% spread).
format::BenchmarkResult result_of(const Benchmark& b, double ns_per_iter,
                                  std::mt19937_64& random) {
  format::BenchmarkResult r;
  r.uri = b.uri;
  r.name = r.uri.substr(r.uri.rfind("::") + 2);
  std::normal_distribution<double> spread(0, 0.005);
  std::vector<double> per_iter;
  for (int i = 0; i < 20; ++i) {
    const double t = ns_per_iter * std::exp(spread(random));
    r.times_per_round_ns.push_back(static_cast<uint64_t>(t * kIters));
    r.iters_per_round.push_back(kIters);
    per_iter.push_back(t);
  }
  std::sort(per_iter.begin(), per_iter.end());
  r.stats.rounds = 20;
  r.stats.iter_per_round = kIters;
  r.stats.mean_ns = r.stats.median_ns = per_iter[10];
  r.stats.min_ns = per_iter.front();
  r.stats.max_ns = per_iter.back();
  r.stats.q1_ns = per_iter[5];
  r.stats.q3_ns = per_iter[15];
  return r;
}

// Run `run` of the history: the golden folder and its results.
std::string write_run(const TempDir& dir, int run, std::mt19937_64& random) {
  const std::string folder = dir.file("runs/" + std::to_string(run));
  fs::create_directories(folder + "/results");
  fs::copy(std::string(std::getenv("GOLDEN_DIR")) + "/folders/example", folder,
           fs::copy_options::recursive);
  std::normal_distribution<double> noise(0, 0.01);
  std::vector<format::BenchmarkResult> results;
  for (const Benchmark& b : kBenchmarks) {
    double level = b.level_ns;
    if (b.step_at >= 0 && run >= b.step_at) level *= 1 + b.step;
    results.push_back(result_of(b, level * std::exp(noise(random)), random));
  }
  REQUIRE(runner::base::write_file_atomic(
      folder + "/results/1.json",
      format::write_walltime_results({"history-test", "1.0", 1}, results)));
  return folder;
}

// Two records under main's refs/ that must be skipped: a pull request's
// run, and a file that is not a record.
void plant_hostile_records(const S3rver& server, const TempDir& dir) {
  auto client = store_client(server.endpoint());
  fs::create_directories(dir.file("planted"));
  const std::string key = plant_run(
      client, dir.file("planted"), "29990101T000000000Z-00000000",
      [](format::StoreRecord& r) {
        r.ref = "refs/pull/7/merge";
        r.commit = std::string(40, 'e');
        r.event = "pull_request";
        r.pull_request = 7;
        r.benchmark_medians = {{kBenchmarks[2].uri, 1, {}, {}, {}, {}}};
      });
  REQUIRE(client.put_text(
      "bench", key.substr(0, key.rfind('/') + 1) + "29990101T000000001Z-1.json",
      "not a record", "application/json"));
}

std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

const Json* series_of(const Json& history, const std::string& uri) {
  for (const Json& s : history["benchmarks"])
    if (s["uri"] == uri) return &s;
  return nullptr;
}

// The run index of the commit of `run` in the history's runs.
size_t run_index(const Json& history, int run) {
  for (size_t i = 0; i < history["runs"].size(); ++i)
    if (history["runs"][i]["commit"] == commit_of(run)) return i;
  return SIZE_MAX;
}

void check_steps(const Json& h, const std::string& out_dir) {
  for (const Benchmark& b : kBenchmarks) {
    CAPTURE(std::string(b.uri));
    const Json* s = series_of(h, b.uri);
    REQUIRE(s != nullptr);
    CHECK((*s)["points"].size() == kRuns);
    CHECK_FALSE((*s)["points"][0]["low"].is_null());
    const Json& changes = (*s)["changes"];
    if (b.step_at < 0) {
      CHECK(changes.empty());
      continue;
    }
    REQUIRE(changes.size() == 1);
    const Json& c = changes[0];
    const size_t at = run_index(h, b.step_at);
    CHECK(c["run"].get<size_t>() + 1 >= at);
    CHECK(c["run"].get<size_t>() <= at + 1);
    CHECK(c["low"].get<double>() < b.step);
    CHECK(c["high"].get<double>() > b.step);
    // The two runs around the step alone: a 10% step is a regression at
    // the 1% threshold; a 3% one may be too close to the noise of single
    // runs to say (inconclusive), never unchanged or faster.
    if (b.step >= 0.10)
      CHECK(c["verdict"] == "regression");
    else
      CHECK((c["verdict"] == "regression" || c["verdict"] == "inconclusive"));
    REQUIRE(c["diff"].is_string());
    CHECK(fs::is_regular_file(out_dir + "/" + c["diff"].get<std::string>()));
    CHECK(fs::is_regular_file(out_dir + "/" + c["compare"].get<std::string>()));
  }
}

// The page in headless Chromium (tests/browser/history_test.js --site):
// it renders, without network, every benchmark in the overview, hover,
// the change points' links to files that exist, a click to the newest
// run's flamegraphs. Without node, Chromium or playwright-core the script
// says SKIP and this part is skipped, saying why.
void check_page_in_chromium(const std::string& out) {
  auto page =
      run_process({"node", std::getenv("HISTORY_BROWSER_TEST"), "--site", out},
                  {}, "", 300);
  INFO(page.out);
  if (page.exit_code == 127 || page.out.find("SKIP ") != std::string::npos) {
    RUNNER_SKIP_CASE(
        "the page in Chromium: " +
        (page.exit_code == 127 ? std::string("node not found") : page.out));
  }
  CHECK(page.exit_code == 0);
  CHECK(page.out.find("all checks passed") != std::string::npos);
}

}  // namespace

TEST_CASE("runner history finds the steps of a stored history") {
  TempDir dir;
  RUNNER_WITH_S3RVER(server, dir) {
    std::mt19937_64 random(2026);
    for (int run = 0; run < kRuns; ++run) {
      const std::string folder = write_run(dir, run, random);
      auto up =
          run_runner({"upload", "--store", kStore, folder},
                     store_job_env(*server, dir, false, commit_of(run)), 300);
      REQUIRE_MESSAGE(up.exit_code == 0, up.err);
      fs::remove_all(folder);
    }
    plant_hostile_records(*server, dir);
    const std::string out = dir.file("history");
    const auto env = store_job_env(*server, dir, false, commit_of(kRuns));
    auto h = run_runner({"history", "--store", kStore, "--branch", "main",
                         "--out", out, "--format", "json"},
                        env);
    REQUIRE_MESSAGE(h.exit_code == 0, h.err);
    const Json history = Json::parse(h.out);
    CHECK(history["runs"].size() == kRuns);
    CHECK(history["skipped_records"] == 2);
    CHECK(history["branch"] == "main");
    check_steps(history, out);
    CHECK(h.err.find("skipped: not a base: the run of pull request 7") !=
          std::string::npos);
    CHECK(Json::parse(file_text(out + "/history.json")) == history);
    const std::string page = file_text(out + "/index.html");
    CHECK(page.find("<script src") == std::string::npos);
    CHECK(page.find("<link") == std::string::npos);
    CHECK(file_text(out + "/history.md").find("fib") != std::string::npos);
    // The runs fetched (around the compared changes, and the newest) have
    // their flamegraphs, linked from their run.
    size_t reported = 0;
    for (const Json& run : history["runs"]) {
      if (run["report"].is_null()) continue;
      ++reported;
      const std::string folder = out + "/" + run["report"].get<std::string>();
      CHECK(fs::is_regular_file(folder + "/summary.json"));
      CHECK(std::any_of(fs::directory_iterator(folder), {},
                        [](const fs::directory_entry& e) {
                          return e.path().extension() == ".svg";
                        }));
    }
    CHECK(reported == 5);  // two pairs and the newest run
    CHECK_FALSE(history["runs"][kRuns - 1]["report"].is_null());
    check_page_in_chromium(out);
    // The second reading: every record of a run from the cache.
    auto again = run_runner(
        {"history", "--store", kStore, "--out", out, "--compares", "0"}, env);
    REQUIRE_MESSAGE(again.exit_code == 0, again.err);
    CHECK(again.err.find("60 runs of 'main' (60 records from the cache, 2 "
                         "skipped)") != std::string::npos);
    // An output folder someone else could write into is refused: a
    // symlink to ours, or ours open to others with files in it.
    fs::create_directory_symlink(out, dir.file("link"));
    fs::permissions(out, fs::perms::all);
    for (const std::string& bad : {dir.file("link"), out}) {
      CAPTURE(bad);
      auto refused = run_runner(
          {"history", "--store", kStore, "--out", bad, "--compares", "0"}, env);
      CHECK(refused.exit_code == 2);
      CHECK(refused.err.find(bad) != std::string::npos);
    }
  }
}

// Real runs of `runner exec` record each benchmark's CPU time per
// iteration (runner.counters.json) in the store; `--metric cpu` makes them
// the series, and `--metric instructions` those counts where a hardware
// PMU counted them, else says that none of the runs has them.
TEST_CASE("runner history --metric cpu: the CPU time the runs recorded") {
  RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
  TempDir dir;
  RUNNER_WITH_S3RVER(server, dir) {
    for (int run = 0; run < 3; ++run) {
      const std::string folder = dir.file("run" + std::to_string(run));
      auto r = run_process(
          runner_argv(
              "exec", folder, dir.path(),
              {"--name", "burn", "--warmup-time", "0", "--max-rounds", "3"},
              {binary("CPU_BURNER_BIN"), "spin", "20", dir.file("o")}),
          {"RUNNER_EXEC_HARNESS=" + binary("EXEC_HARNESS_BIN")});
      REQUIRE_MESSAGE(r.exit_code == 0, r.err);
      auto up =
          run_runner({"upload", "--store", kStore, folder},
                     store_job_env(*server, dir, false, commit_of(run)), 300);
      REQUIRE_MESSAGE(up.exit_code == 0, up.err);
    }
    const auto env = store_job_env(*server, dir, false, commit_of(3));
    const std::vector<std::string> args = {
        "history",  "--store", kStore,  "--compares", "0",
        "--format", "json",    "--out", dir.file("h")};
    auto args_with = [&](const char* metric) {
      auto all = args;
      all.insert(all.end(), {"--metric", metric});
      return all;
    };
    auto cpu = run_runner(args_with("cpu"), env);
    REQUIRE_MESSAGE(cpu.exit_code == 0, cpu.err);
    auto wall = run_runner(args_with("wall"), env);
    REQUIRE_MESSAGE(wall.exit_code == 0, wall.err);
    const Json c = Json::parse(cpu.out), w = Json::parse(wall.out);
    CHECK(c["metric"] == "cpu");
    CHECK(c["unit"] == "ns");
    REQUIRE(c["benchmarks"].size() == 1);
    REQUIRE(c["benchmarks"][0]["points"].size() == 3);
    for (size_t i = 0; i < 3; ++i) {
      const Json& p = c["benchmarks"][0]["points"][i];
      const double wall_ns = w["benchmarks"][0]["points"][i]["value"];
      CAPTURE(i);
      // 20 ms of spinning per iteration: CPU time close to the wall time.
      CHECK(p["value"].get<double>() > 0.5 * wall_ns);
      CHECK(p["value"].get<double>() < 1.5 * wall_ns);
      CHECK(p["low"].is_null());
    }
    auto instructions = run_runner(args_with("instructions"), env);
    if (instructions.exit_code == 2) {
      CHECK(instructions.err.find("none of the 3 runs of 'main' recorded "
                                  "instructions per iteration") !=
            std::string::npos);
    } else {
      REQUIRE_MESSAGE(instructions.exit_code == 0, instructions.err);
      CHECK(Json::parse(instructions.out)["unit"] == "instructions");
    }
  }
}

TEST_CASE("runner history refuses what it cannot read") {
  TempDir dir;
  RUNNER_WITH_S3RVER(server, dir) {
    const auto env = store_job_env(*server, dir, false, commit_of(0));
    auto empty =
        run_runner({"history", "--store", kStore, "--out", dir.file("h")}, env);
    CHECK(empty.exit_code == 2);
    CHECK(empty.err.find("no run of a push to 'main' in s3://bench/ci") !=
          std::string::npos);
    auto bad =
        run_runner({"history", "--store", kStore, "--repository", "x"}, env);
    CHECK(bad.exit_code == 2);
    CHECK(bad.err.find("--repository 'x' is not OWNER/NAME") !=
          std::string::npos);
    auto usage = run_runner({"history"}, env);
    CHECK(usage.exit_code == 2);
    CHECK(usage.err.find("--store is required") != std::string::npos);
  }
}
