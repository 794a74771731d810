// End-to-end tests of `runner compare`: the real runner on profile folders
// the test writes (results JSON through format::write_walltime_results,
// ExecutionTimestamps through format::write_execution_timestamps), and on
// two real `runner exec` profile folders for the differential profile.
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "base/fs.hpp"
#include "format/format.hpp"
#include "tests/e2e/e2e_support.hpp"
#include "tests/support/temp_dir.hpp"

using namespace runner::testing;
namespace format = runner::format;
using nlohmann::json;

namespace {

constexpr uint64_t kIters = 100;

// A deterministic round-to-round jitter in [-1, 1].
double jitter(uint64_t i) {
  uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull;
  x ^= x >> 29;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 32;
  return static_cast<double>(x % 2001) / 1000.0 - 1.0;
}

// `rounds` round times of kIters iterations around `ns_per_iter` (1%
// jitter; `seed` picks the jitter sequence).
std::vector<uint64_t> round_times(double ns_per_iter, size_t rounds,
                                  uint64_t seed) {
  std::vector<uint64_t> out;
  for (size_t i = 0; i < rounds; ++i)
    out.push_back(static_cast<uint64_t>(
        std::llround(ns_per_iter * kIters * (1 + 0.01 * jitter(seed + i)))));
  return out;
}

// Summary stats of per-iteration times (sample stdev).
format::BenchmarkStats stats_of(const std::vector<double>& t) {
  format::BenchmarkStats s;
  s.rounds = t.size();
  if (t.empty()) return s;
  std::vector<double> sorted = t;
  std::sort(sorted.begin(), sorted.end());
  double sum = 0;
  for (double v : t) sum += v;
  s.mean_ns = sum / static_cast<double>(t.size());
  double ss = 0;
  for (double v : t) ss += (v - s.mean_ns) * (v - s.mean_ns);
  s.stdev_ns =
      t.size() > 1 ? std::sqrt(ss / static_cast<double>(t.size() - 1)) : 0;
  s.min_ns = sorted.front();
  s.max_ns = sorted.back();
  s.q1_ns = sorted[sorted.size() / 4];
  s.median_ns = sorted[sorted.size() / 2];
  s.q3_ns = sorted[sorted.size() * 3 / 4];
  s.total_time = sum * kIters / 1e9;
  s.iter_per_round = kIters;
  return s;
}

std::string uri_of(const std::string& name) { return "bench.cpp::" + name; }

// A benchmark with round arrays (and the stats they give).
format::BenchmarkResult with_rounds(const std::string& name,
                                    std::vector<uint64_t> times) {
  format::BenchmarkResult r;
  r.name = name;
  r.uri = uri_of(name);
  std::vector<double> per_iter;
  for (uint64_t t : times)
    per_iter.push_back(static_cast<double>(t) / static_cast<double>(kIters));
  r.stats = stats_of(per_iter);
  r.iters_per_round.assign(times.size(), kIters);
  r.times_per_round_ns = std::move(times);
  return r;
}

// A benchmark with summary stats only (as codspeed-cpp writes).
format::BenchmarkResult summary_only(const std::string& name, double mean,
                                     double stdev, uint64_t rounds) {
  format::BenchmarkResult r;
  r.name = name;
  r.uri = uri_of(name);
  r.stats.mean_ns = r.stats.median_ns = mean;
  r.stats.q1_ns = mean - stdev;
  r.stats.q3_ns = mean + stdev;
  r.stats.min_ns = mean - 2 * stdev;
  r.stats.max_ns = mean + 2 * stdev;
  r.stats.stdev_ns = stdev;
  r.stats.rounds = rounds;
  r.stats.iter_per_round = kIters;
  return r;
}

// <folder>/results/<pid>.json holding `benchmarks`.
std::string write_results(
    const std::string& folder,
    const std::vector<format::BenchmarkResult>& benchmarks,
    uint32_t pid = 4242) {
  std::filesystem::create_directories(folder + "/results");
  format::Creator creator{"compare-test", "1.0", pid};
  std::string path =
      folder + "/results/" + format::ProfileLayout::result_file_name(pid);
  REQUIRE(runner::base::write_file_atomic(
      path, format::write_walltime_results(creator, benchmarks)));
  return folder;
}

// base/ and head/ under `dir`, each with one benchmark "fib" of `rounds`
// rounds around `base_ns` and `head_ns` per iteration.
std::pair<std::string, std::string> write_fib(const TempDir& dir,
                                              double base_ns, double head_ns,
                                              size_t rounds,
                                              uint64_t head_seed) {
  return {write_results(dir.file("base"),
                        {with_rounds("fib", round_times(base_ns, rounds, 1))}),
          write_results(
              dir.file("head"),
              {with_rounds("fib", round_times(head_ns, rounds, head_seed))})};
}

std::vector<std::string> compare_argv(std::vector<std::string> args) {
  args.insert(args.begin(), {binary("RUNNER_BIN"), "compare"});
  return args;
}

ProcessResult run_compare(std::vector<std::string> args) {
  return run_process(compare_argv(std::move(args)));
}

// `runner compare --format json BASE HEAD EXTRA...`, its stdout parsed.
json compare_json(const std::string& base, const std::string& head,
                  int expected_exit, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"--format", "json", base, head};
  args.insert(args.end(), extra.begin(), extra.end());
  auto r = run_compare(args);
  INFO(r.out, r.err);
  REQUIRE(r.exit_code == expected_exit);
  return json::parse(r.out);
}

// The benchmark named `name` of a report (fails the test when absent).
const json& benchmark_named(const json& report, const std::string& name) {
  for (const auto& b : report["benchmarks"])
    if (b["name"] == name) return b;
  FAIL("no benchmark named " << name << " in " << report.dump());
  static const json kNone;
  return kNone;
}

size_t lines(const std::string& text) {
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

// ExecutionTimestamps.msgpack: per benchmark, `rounds` round markers of
// durations `ns` each, then its URI.
void write_markers(
    const std::string& folder,
    const std::vector<std::pair<std::string, std::vector<uint64_t>>>& rounds) {
  std::filesystem::create_directories(folder);
  format::ExecutionTimestamps ts;
  uint64_t now = 1'000'000'000;
  ts.markers.push_back({"SampleStart", now});
  for (const auto& [uri, durations] : rounds) {
    for (uint64_t d : durations) {
      now += 1000;
      ts.markers.push_back({"RoundStart", now});
      now += d;
      ts.markers.push_back({"RoundEnd", now});
    }
    now += 1000;
    ts.uri_by_ts.emplace_back(now, uri);
  }
  ts.markers.push_back({"SampleEnd", now + 1});
  REQUIRE(runner::base::write_file_atomic(
      format::ProfileLayout(folder).execution_timestamps(),
      format::write_execution_timestamps(ts)));
}

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE("identical rounds: unchanged, exit 0, compare.json/md written") {
    TempDir dir;
    auto [base, head] = write_fib(dir, 1000, 1000, 20, 1);
    auto r = run_compare({base, head});
    INFO(r.out, r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("fib") != std::string::npos);
    CHECK(r.out.find("unchanged") != std::string::npos);
    auto report = read_json_file(head + "/compare/compare.json");
    REQUIRE(report["benchmarks"].size() == 1);
    CHECK(report["benchmarks"][0]["verdict"] == "unchanged");
    CHECK(report["benchmarks"][0]["test"] == "mann-whitney-u");
    CHECK(report["benchmarks"][0]["head"]["rounds"] == 20);
    CHECK(file_exists(head + "/compare/compare.md"));
  }

  TEST_CASE("10% slower rounds: regression, exit 1, change close to +0.10") {
    TempDir dir;
    auto [base, head] = write_fib(dir, 1000, 1100, 20, 50);
    auto report = compare_json(base, head, 1);
    const json& b = benchmark_named(report, "fib");
    CHECK(b["verdict"] == "regression");
    CHECK(b["change"].get<double>() == doctest::Approx(0.10).epsilon(0.02));
    CHECK(b["ci_low"].get<double>() > 0);
    CHECK(b["p_value"].get<double>() < 0.05);
    CHECK(file_exists(head + "/compare/compare.json"));
    CHECK(file_exists(head + "/compare/compare.md"));
    auto md = run_compare({"--format", "markdown", base, head});
    CHECK(md.exit_code == 1);
    CHECK(md.out.find("| ") != std::string::npos);
    CHECK(md.out.find("regression") != std::string::npos);

    // The reverse: an improvement, exit 0.
    auto reverse = compare_json(head, base, 0, {"--out", dir.file("rev")});
    const json& i = benchmark_named(reverse, "fib");
    CHECK(i["verdict"] == "improvement");
    CHECK(i["change"].get<double>() < -0.07);
    CHECK(file_exists(dir.file("rev/compare.json")));
  }

  TEST_CASE("summary stats only (codspeed-cpp): the median test, else Welch") {
    TempDir dir;
    // Without quartiles, only the means can be compared.
    auto bare = [](format::BenchmarkResult r) {
      r.stats.q1_ns = r.stats.q3_ns = 0;
      return r;
    };
    auto base = write_results(
        dir.file("base"),
        {summary_only("slow", 1000, 10, 20), summary_only("same", 500, 10, 20),
         bare(summary_only("bare", 500, 10, 20))});
    auto head = write_results(dir.file("head"),
                              {summary_only("slow", 1100, 10, 20),
                               summary_only("same", 500.5, 10, 20),
                               bare(summary_only("bare", 600, 10, 20))});
    auto report = compare_json(base, head, 1);
    const json& slow = benchmark_named(report, "slow");
    const json& same = benchmark_named(report, "same");
    CHECK(slow["test"] == "median-quartiles");
    CHECK(slow["verdict"] == "regression");
    CHECK(slow["change"].get<double>() == doctest::Approx(0.10));
    CHECK(same["test"] == "median-quartiles");
    CHECK(same["verdict"] == "unchanged");
    CHECK(benchmark_named(report, "bare")["test"] == "welch-t");
    CHECK(benchmark_named(report, "bare")["verdict"] == "regression");
    CHECK(report["benchmarks"][2]["name"] == "same");  // regressions first
  }

  TEST_CASE("markers only, and markers divided by the results' iterations") {
    TempDir dir;
    // Two benchmarks per folder, no results: each one's rounds are the
    // markers between the previous URI and its own.
    auto ns = [](double per_round, uint64_t seed) {
      std::vector<uint64_t> out;
      for (uint64_t i = 0; i < 12; ++i)
        out.push_back(
            static_cast<uint64_t>(per_round * (1 + 0.01 * jitter(seed + i))));
      return out;
    };
    write_markers(dir.file("base"),
                  {{uri_of("a"), ns(50000, 1)}, {uri_of("b"), ns(80000, 20)}});
    write_markers(dir.file("head"),
                  {{uri_of("a"), ns(50000, 40)}, {uri_of("b"), ns(88000, 60)}});
    auto report = compare_json(dir.file("base"), dir.file("head"), 1);
    const json& a = benchmark_named(report, "a");
    const json& b = benchmark_named(report, "b");
    CHECK(a["verdict"] == "unchanged");
    CHECK(b["verdict"] == "regression");
    CHECK(b["change"].get<double>() == doctest::Approx(0.10).epsilon(0.02));
    CHECK(b["head"]["rounds"] == 12);
    CHECK(a["base"]["median_ns"].get<double>() ==
          doctest::Approx(50000).epsilon(0.02));

    // Results without round arrays whose round count matches the markers:
    // per-iteration times (round / iter_per_round).
    for (const char* side : {"base2", "head2"}) {
      write_markers(dir.file(side), {{uri_of("a"), ns(50000, 3)}});
      write_results(dir.file(side), {summary_only("a", 500, 5, 12)});
    }
    auto divided = compare_json(dir.file("base2"), dir.file("head2"), 0);
    const json& d = benchmark_named(divided, "a");
    CHECK(d["test"] == "mann-whitney-u");
    CHECK(d["base"]["median_ns"].get<double>() ==
          doctest::Approx(500).epsilon(0.02));
  }

  TEST_CASE("added and removed benchmarks are listed, not errors") {
    TempDir dir;
    auto base = write_results(dir.file("base"),
                              {with_rounds("kept", round_times(1000, 10, 1)),
                               with_rounds("gone", round_times(1000, 10, 2))});
    auto head = write_results(dir.file("head"),
                              {with_rounds("kept", round_times(1000, 10, 1)),
                               with_rounds("new", round_times(1000, 10, 3))});
    auto report = compare_json(base, head, 0);
    REQUIRE(report["added"].size() == 1);
    CHECK(report["added"][0]["uri"] == uri_of("new"));
    CHECK(report["added"][0]["name"] == "new");
    REQUIRE(report["removed"].size() == 1);
    CHECK(report["removed"][0]["uri"] == uri_of("gone"));
    CHECK(report["benchmarks"].size() == 1);
    auto text = run_compare({base, head});
    CHECK(text.exit_code == 0);
    CHECK(text.out.find("new") != std::string::npos);
    CHECK(text.out.find("gone") != std::string::npos);
  }

  TEST_CASE("--format json has every documented member") {
    TempDir dir;
    auto [base, head] = write_fib(dir, 1000, 1000, 10, 7);
    auto report = compare_json(base, head, 0);
    for (const char* member :
         {"base", "head", "settings", "benchmarks", "added", "removed", "noise",
          "warnings", "summary"})
      CHECK_MESSAGE(report.contains(member), member);
    CHECK(report["base"]["folders"][0] == base);
    CHECK(report["head"]["folders"][0] == head);
    REQUIRE(report["benchmarks"].size() == 1);
    const json& b = report["benchmarks"][0];
    for (const char* member : {"uri", "name", "verdict", "change", "ci_low",
                               "ci_high", "p_value", "test", "base", "head"})
      CHECK_MESSAGE(b.contains(member), member);
    for (const char* side : {"base", "head"}) {
      CHECK(b[side].contains("median_ns"));
      CHECK(b[side]["rounds"] == 10);
    }
    // The file and stdout are the same document.
    CHECK(read_json_file(head + "/compare/compare.json") == report);
  }

  TEST_CASE("several folders per side are pooled, with a noise report") {
    TempDir dir;
    std::vector<std::string> bases, heads;
    for (int run = 0; run < 3; ++run) {
      double drift = 1.0 + 0.01 * run;  // run-to-run spread of 2%
      bases.push_back(write_results(
          dir.file("base" + std::to_string(run)),
          {with_rounds("fib", round_times(1000 * drift, 8, 10 * run))}));
      heads.push_back(write_results(
          dir.file("head" + std::to_string(run)),
          {with_rounds("fib", round_times(1000 * drift, 8, 10 * run + 5))}));
    }
    auto report = compare_json(bases[0], heads[0], 0,
                               {"--base", bases[1], "--base", bases[2],
                                "--head", heads[1], "--head", heads[2]});
    CHECK(report["base"]["folders"].size() == 3);
    REQUIRE(report["benchmarks"].size() == 1);
    CHECK(report["benchmarks"][0]["base"]["rounds"] == 24);
    CHECK(report["benchmarks"][0]["head"]["rounds"] == 24);
    REQUIRE(report["noise"].size() == 2);
    for (const auto& entry : report["noise"]) {
      CHECK(entry["medians_ns"].size() == 3);
      CHECK(entry["spread"].get<double>() ==
            doctest::Approx(0.02).epsilon(0.3));
    }
  }

  // Three runs per side whose rounds are within 1% but whose medians are
  // 5-10% apart from run to run: pooling the rounds said "+9.5%, a
  // regression"; the runs (the unit of replication) cannot tell.
  TEST_CASE("pooled runs that differ from run to run are not a regression") {
    TempDir dir;
    std::vector<std::string> bases, heads;
    const double base_ns[] = {1000, 1050, 1100}, head_ns[] = {1100, 1150, 1210};
    for (int run = 0; run < 3; ++run) {
      bases.push_back(write_results(
          dir.file("base" + std::to_string(run)),
          {with_rounds("fib", round_times(base_ns[run], 20, 10 * run))}));
      heads.push_back(write_results(
          dir.file("head" + std::to_string(run)),
          {with_rounds("fib", round_times(head_ns[run], 20, 10 * run + 5))}));
    }
    auto report = compare_json(bases[0], heads[0], 0,
                               {"--base", bases[1], "--base", bases[2],
                                "--head", heads[1], "--head", heads[2]});
    REQUIRE(report["benchmarks"].size() == 1);
    const json& b = report["benchmarks"][0];
    INFO(b.dump());
    CHECK(b["verdict"] == "inconclusive");
    CHECK(b["noise"] == "runs");
    CHECK(b["runs"]["base_runs"] == 3);
    CHECK(b["runs"]["head_runs"] == 3);
    CHECK(b["ci_low"].get<double>() < 0);
    CHECK(b["ci_low"] == b["runs"]["ci_low"]);
    CHECK(b["reason"].get<std::string>().find("(spread between 3 + 3 runs)") !=
          std::string::npos);
    // One run per side: the rounds alone decide, and the report says once
    // that the run-to-run noise is not known.
    auto single = compare_json(bases[0], heads[0], 1);
    CHECK(single["benchmarks"][0]["verdict"] == "regression");
    CHECK(single["benchmarks"][0]["noise"] == "not-estimated");
    CHECK(single["benchmarks"][0]["runs"].is_null());
    auto text = run_compare({bases[0], heads[0]});
    const std::string said =
        "run-to-run noise not estimated (one run per side and no store "
        "history)";
    const size_t at = text.out.find(said);
    CHECK(at != std::string::npos);
    CHECK(text.out.find(said, at + 1) == std::string::npos);
  }

  TEST_CASE("bad input: exit 2 with one line naming the problem") {
    TempDir dir;
    auto good = write_results(dir.file("good"),
                              {with_rounds("fib", round_times(1000, 10, 1))});
    auto missing = run_compare({dir.file("nope"), good});
    CHECK(missing.exit_code == 2);
    CHECK(lines(missing.err) == 1);
    CHECK(missing.err.find("base folder '" + dir.file("nope") +
                           "': no such directory") != std::string::npos);

    std::filesystem::create_directories(dir.file("empty"));
    auto empty = run_compare({good, dir.file("empty")});
    CHECK(empty.exit_code == 2);
    CHECK(lines(empty.err) == 1);
    CHECK(empty.err.find("head folder") != std::string::npos);
    CHECK(empty.err.find("no results") != std::string::npos);

    std::filesystem::create_directories(dir.file("broken/results"));
    REQUIRE(runner::base::write_file_atomic(dir.file("broken/results/7.json"),
                                            std::string_view("{\"creator\":")));
    auto broken = run_compare({good, dir.file("broken")});
    CHECK(broken.exit_code == 2);
    CHECK(lines(broken.err) == 1);
    CHECK(broken.err.find("results/7.json") != std::string::npos);

    REQUIRE(runner::base::write_file_atomic(dir.file("file"),
                                            std::string_view("x")));
    auto not_dir = run_compare({dir.file("file"), good});
    CHECK(not_dir.exit_code == 2);
    CHECK(not_dir.err.find("not a directory") != std::string::npos);

    auto usage = run_compare({good});
    CHECK(usage.exit_code == 2);
    CHECK(usage.err.find("missing HEAD") != std::string::npos);
    auto threshold = run_compare({"--threshold", "100", good, good});
    CHECK(threshold.exit_code == 2);
    CHECK(lines(threshold.err) == 1);
  }

  TEST_CASE("--fail-on-inconclusive: exit 3 when the data cannot tell") {
    TempDir dir;
    // The same program on both sides, but rounds spread +-30%: the interval
    // reaches far beyond +-5%, so "unchanged" would be a guess.
    auto spread = [](uint64_t seed) {
      std::vector<uint64_t> out;
      for (uint64_t i = 0; i < 10; ++i)
        out.push_back(static_cast<uint64_t>(
            std::llround(1000.0 * kIters * (1 + 0.3 * jitter(seed + i)))));
      return out;
    };
    auto base = write_results(dir.file("base"),
                              {with_rounds("wide", spread(1)),
                               with_rounds("narrow", round_times(500, 20, 1))});
    auto head = write_results(dir.file("head"),
                              {with_rounds("wide", spread(100)),
                               with_rounds("narrow", round_times(500, 20, 9))});
    auto report = compare_json(base, head, 0);
    const json& wide = benchmark_named(report, "wide");
    INFO(wide.dump());
    CHECK(wide["verdict"] == "inconclusive");
    CHECK(wide["detectable_change"].get<double>() > 0.1);
    CHECK(wide["reason"].get<std::string>().find(
              "this data detects changes of about") != std::string::npos);
    CHECK(benchmark_named(report, "narrow")["verdict"] == "unchanged");
    CHECK(report["verdict"] == "inconclusive");
    // Asked to, the same comparison exits 3, and its verdict is written.
    const std::string verdict = dir.file("verdict");
    auto strict =
        run_compare({"--fail-on-inconclusive", "--verdict-file", verdict,
                     "--out", dir.file("strict"), base, head});
    INFO(strict.out, strict.err);
    CHECK(strict.exit_code == 3);
    CHECK(strict.out.find("inconclusive: 95% interval [") != std::string::npos);
    auto written = runner::base::read_file(verdict);
    REQUIRE(written);
    CHECK(*written == "inconclusive\n");
    // Only the narrow one: unchanged, exit 0 even when asked.
    auto narrow_base = write_results(
        dir.file("nb"), {with_rounds("narrow", round_times(500, 20, 1))});
    auto narrow_head = write_results(
        dir.file("nh"), {with_rounds("narrow", round_times(500, 20, 9))});
    compare_json(narrow_base, narrow_head, 0, {"--fail-on-inconclusive"});
    // A regression beside an inconclusive benchmark: still exit 1.
    auto slow_head = write_results(
        dir.file("slow"), {with_rounds("wide", spread(100)),
                           with_rounds("narrow", round_times(600, 20, 9))});
    auto slow = compare_json(base, slow_head, 1, {"--fail-on-inconclusive"});
    CHECK(slow["verdict"] == "regression");
  }

  TEST_CASE("0 or 1 round, negative times: inconclusive rows, no crash") {
    TempDir dir;
    auto negative = summary_only("negative", 1000, 10, 20);
    auto negative_head = negative;
    negative_head.stats.mean_ns = negative_head.stats.median_ns = -5;
    auto base = write_results(dir.file("base"),
                              {with_rounds("one", round_times(1000, 1, 1)),
                               summary_only("zero", 1000, 0, 0), negative});
    auto head = write_results(
        dir.file("head"), {with_rounds("one", round_times(2000, 1, 2)),
                           summary_only("zero", 2000, 0, 0), negative_head});
    auto report = compare_json(base, head, 0);
    REQUIRE(report["benchmarks"].size() == 3);
    for (const auto& b : report["benchmarks"]) {
      INFO(b.dump());
      CHECK(b["verdict"] == "inconclusive");
      CHECK_FALSE(b["reason"].get<std::string>().empty());
    }
    const json& one = benchmark_named(report, "one");
    CHECK(one["base"]["rounds"] == 1);
  }

  TEST_CASE("the compare folder: a symlink or another user's is refused") {
    TempDir dir;
    auto [base, head] = write_fib(dir, 1000, 1000, 10, 2);
    std::filesystem::create_directories(dir.file("elsewhere"));
    REQUIRE(::symlink(dir.file("elsewhere").c_str(),
                      (head + "/compare").c_str()) == 0);
    auto r = run_compare({base, head});
    INFO(r.out, r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("symbolic link") != std::string::npos);
    CHECK(r.out.find("fib") != std::string::npos);  // still printed
    CHECK(list_dir(dir.file("elsewhere")).empty());

    REQUIRE(runner::base::write_file_atomic(dir.file("plain"),
                                            std::string_view("x")));
    auto file = run_compare({"--out", dir.file("plain"), base, head});
    CHECK(file.exit_code == 2);
    CHECK(file.err.find(dir.file("plain")) != std::string::npos);

    if (::geteuid() != 0)
      RUNNER_SKIP_CASE("a folder of another user needs root to create");
    std::filesystem::create_directories(dir.file("theirs"));
    REQUIRE(::chown(dir.file("theirs").c_str(), 65534, 65534) == 0);
    auto theirs = run_compare({"--out", dir.file("theirs"), base, head});
    CHECK(theirs.exit_code == 2);
    CHECK(theirs.err.find("owned by uid 65534") != std::string::npos);
  }

  TEST_CASE("--paired: two shell commands from the command line") {
    TempDir dir;
    auto r = run_compare({"--paired", "--pairs", "6", "--warmup-pairs", "0",
                          "--format", "json", "--out", dir.file("out"),
                          "sleep 0.001", "sleep 0.001"});
    INFO(r.out, r.err);
    REQUIRE((r.exit_code == 0 || r.exit_code == 1));
    auto report = json::parse(r.out);
    CHECK(report["settings"]["paired"] == true);
    CHECK(report["base"]["command"] == "sleep 0.001");
    REQUIRE(report["benchmarks"].size() == 1);
    CHECK(report["benchmarks"][0]["test"] == "wilcoxon-signed-rank");
    CHECK(report["benchmarks"][0]["head"]["rounds"] == 6);
    CHECK(read_json_file(dir.file("out/compare.json")) == report);

    auto failing = run_compare({"--paired", "--pairs", "6", "exit 3", "true"});
    CHECK(failing.exit_code == 2);
    // A progress line, then the error in one line.
    CHECK(failing.err.find("runner compare: paired mode: base command 'exit "
                           "3'") != std::string::npos);
    CHECK(failing.err.find("exited with code 3\n") != std::string::npos);
  }

  TEST_CASE(
      "two runner exec profiles: a differential flamegraph, top functions") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    const std::vector<std::string> env = {"RUNNER_EXEC_HARNESS=" +
                                          binary("EXEC_HARNESS_BIN")};
    for (const auto& [side, ms] : {std::pair{"base", "30"}, {"head", "33"}}) {
      auto r = run_process(runner_argv("exec", dir.file(side), dir.path(),
                                       {"--name", "spin", "--warmup-time", "0",
                                        "--max-rounds", "8"},
                                       {binary("SPINNER_BIN"), ms}),
                           env);
      INFO(r.err);
      REQUIRE(r.exit_code == 0);
    }
    auto r =
        run_compare({"--format", "json", dir.file("base"), dir.file("head")});
    INFO(r.out, r.err);
    REQUIRE((r.exit_code == 0 || r.exit_code == 1));
    auto report = json::parse(r.out);
    REQUIRE(report["benchmarks"].size() == 1);
    const json& b = report["benchmarks"][0];
    CHECK(b["base"]["rounds"] == 8);
    const std::string svg = b["diff_flamegraph"];
    REQUIRE_FALSE(svg.empty());
    CHECK(svg.ends_with(".diff.svg"));
    CHECK(file_exists(dir.file("head/compare/" + svg)));
    // Its title repeats the verdict and the change; its colours are the
    // change of time per iteration, at the ratio that change gives.
    const std::string text =
        runner::base::read_file(dir.file("head/compare/" + svg)).value_or("");
    const std::string verdict = b["verdict"];
    CHECK(text.find("spin (HEAD against BASE): " + verdict + ", ") !=
          std::string::npos);
    char ratio[32];
    std::snprintf(ratio, sizeof(ratio), "HEAD/BASE %.3f",
                  1 + b["change"].get<double>());
    CHECK(text.find(ratio) != std::string::npos);
    REQUIRE_FALSE(b["top_functions"].empty());
    bool spin_hot = false;
    for (const auto& f : b["top_functions"])
      spin_hot |=
          f["function"].get<std::string>().find("spin") != std::string::npos;
    CHECK(spin_hot);
  }
}
