// `runner compare` as a user runs it on a real three-stage workload
// (programs/compare_workload.c), in its two modes:
//
// - profile folders: real `runner exec` runs of A and of B, where B's
//   stage_hash does 50% more of the whole program's work; A/B is a
//   regression (exit 1) of about +50% with stage_hash first among the
//   functions whose self share changed and red in the differential
//   flamegraph, B/A an improvement with stage_hash blue;
// - paired (--paired, ABBA): A against A raises no false alarm (exit 0,
//   neither a regression nor an improvement: unchanged, or inconclusive
//   when a busy machine makes the interval wider than the threshold), A
//   against B' (10% more work) a regression (exit 1).
//
// And a summary-only integration: CodSpeed's tinybench plugin (from npm,
// unchanged, tests/e2e/tinybench) whose `target` is 20% slower in HEAD is
// never called unchanged from one run per side.
//
// Separate runs of one program differ by up to ~20% on a shared VM (the
// whole run is slower, fast rounds included), so the unpaired mode is only
// asked for a large effect, and the small effect and the A/A verdict are
// asked of the paired mode, whose pairs cancel that drift. The verdicts are
// statistics of wall times: each must come out as expected in one of at
// most kAttempts attempts. Everything that is not a statistic (exit codes of
// the records, the files written, the flamegraph's colours) is required in
// every attempt.
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "base/fs.hpp"
#include "format/format.hpp"
#include "tests/e2e/e2e_support.hpp"
#include "tests/support/runtimes.hpp"
#include "tests/support/temp_dir.hpp"

using namespace runner::testing;
using runner::format::BenchmarkComparison;
using runner::format::CompareReport;
using runner::format::Verdict;

namespace {

constexpr int kAttempts = 3;

// One `runner exec` of the workload into dir/<name>: 100 ms of warmup, then
// 40 rounds (about 2 s). The benchmark is named, so that A and B (whose
// commands differ) have the same URI.
std::string record(const TempDir& dir, const std::string& name,
                   const char* slower) {
  std::vector<std::string> command{binary("COMPARE_WORKLOAD_BIN")};
  if (slower) command.insert(command.end(), {"--slower", slower});
  const std::string folder = dir.file(name);
  auto r = run_process(runner_argv("exec", folder, dir.path(),
                                   {"--name", "workload", "--warmup-time",
                                    "100ms", "--max-rounds", "40"},
                                   command),
                       {"RUNNER_EXEC_HARNESS=" + binary("EXEC_HARNESS_BIN")});
  INFO(name, ": ", r.err);
  REQUIRE(r.exit_code == 0);
  return folder;
}

struct Comparison {
  int exit_code = -1;
  std::string out_dir, output;
  CompareReport report;
};

// `runner compare [EXTRA...] BASE HEAD --out OUT --format json`;
// compare.json is read back with the format layer's reader.
Comparison compare(const std::string& base, const std::string& head,
                   const std::string& out_dir,
                   const std::vector<std::string>& extra = {}) {
  std::vector<std::string> argv{binary("RUNNER_BIN"), "compare"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.insert(argv.end(), {base, head, "--out", out_dir, "--format", "json"});
  auto r = run_process(argv);
  INFO(r.out, r.err);
  REQUIRE(r.exit_code >= 0);
  REQUIRE(r.exit_code <= 1);
  auto text = runner::base::read_file(out_dir + "/compare.json");
  REQUIRE_MESSAGE(text, text.error().what());
  auto report = runner::format::read_compare_report(*text);
  REQUIRE_MESSAGE(report, report.error().message());
  REQUIRE(report->benchmarks.size() == 1);
  CHECK(report->added.empty());
  CHECK(report->removed.empty());
  return {r.exit_code, out_dir, r.out + r.err, std::move(*report)};
}

std::string describe(const Comparison& c) {
  const BenchmarkComparison& b = c.report.benchmarks[0];
  char line[256];
  std::snprintf(
      line, sizeof(line),
      "exit %d, %s, change %+.4f [%+.4f, %+.4f], p %.3g: %s", c.exit_code,
      std::string(runner::format::verdict_name(b.verdict)).c_str(),
      b.change.value_or(0), b.ci_low.value_or(0), b.ci_high.value_or(0),
      b.p_value.value_or(-1), b.reason.c_str());
  return line;
}

// The fill colour of the widest frame named `name` in a flamegraph (each
// frame is a <g data-n="NAME" data-s="SAMPLES"> holding a <rect fill="...">);
// "" when there is none.
std::string widest_frame_fill(const std::string& svg, const std::string& name) {
  std::string fill;
  unsigned long long widest = 0;
  const std::string open = "data-n=\"" + name + "\" data-s=\"";
  for (size_t at = svg.find(open); at != std::string::npos;
       at = svg.find(open, at + 1)) {
    const unsigned long long samples =
        std::strtoull(svg.c_str() + at + open.size(), nullptr, 10);
    const size_t end = svg.find("</g>", at);
    const size_t from = svg.find("fill=\"", at);
    if (from == std::string::npos || from > end || samples <= widest) continue;
    widest = samples;
    const size_t close = svg.find('"', from + 6);
    fill = svg.substr(from + 6, close - from - 6);
  }
  return fill;
}

// "rgb(R,G,B)" or "#RRGGBB" as {R, G, B}.
std::optional<std::vector<unsigned>> parse_colour(const std::string& fill) {
  unsigned r = 0, g = 0, b = 0;
  if (std::sscanf(fill.c_str(), "rgb(%u,%u,%u)", &r, &g, &b) == 3 ||
      std::sscanf(fill.c_str(), "#%2x%2x%2x", &r, &g, &b) == 3)
    return std::vector<unsigned>{r, g, b};
  return std::nullopt;
}

// What every comparison of A and B must show, statistics aside: stage_hash
// first among the functions by change of self share, grown from A to B
// (shrunk from B to A); the differential flamegraph written, its widest
// stage_hash frame red (more red than blue) when the share grew, blue when
// it shrank (grey, no change, is neither).
void check_where_the_time_went(const Comparison& c, bool grew) {
  const BenchmarkComparison& b = c.report.benchmarks[0];
  INFO(c.output);
  REQUIRE_FALSE(b.top_functions.empty());
  CHECK(b.top_functions[0].function == "stage_hash");
  CHECK((b.top_functions[0].head_share > b.top_functions[0].base_share) ==
        grew);
  REQUIRE_FALSE(b.diff_flamegraph.empty());
  auto svg = runner::base::read_file(c.out_dir + "/" + b.diff_flamegraph);
  REQUIRE_MESSAGE(svg, svg.error().what());
  const std::string fill = widest_frame_fill(*svg, "stage_hash");
  auto rgb = parse_colour(fill);
  REQUIRE_MESSAGE(rgb, "stage_hash's frame filled '", fill, "'");
  const unsigned red = (*rgb)[0], blue = (*rgb)[2];
  CHECK_MESSAGE((grew ? red > blue : blue > red), "stage_hash drawn ", fill);
}

// Neither a regression nor an improvement, exit 0.
bool no_false_alarm(const Comparison& c) {
  const Verdict v = c.report.benchmarks[0].verdict;
  return c.exit_code == 0 && v != Verdict::kRegression &&
         v != Verdict::kImprovement;
}

// A regression whose change lies in [low, high].
bool is_regression(const Comparison& c, double low, double high) {
  const BenchmarkComparison& b = c.report.benchmarks[0];
  return c.exit_code == 1 && b.verdict == Verdict::kRegression && b.change &&
         *b.change >= low && *b.change <= high;
}

// The workload as a /bin/sh command for --paired, its path single-quoted.
std::string workload_command(const char* slower) {
  std::string quoted = "'";
  for (const char c : binary("COMPARE_WORKLOAD_BIN"))
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  quoted += "'";
  return slower ? quoted + " --slower " + slower : quoted;
}

// A git repository in dir/suite holding tests/e2e/tinybench/bench.mjs and
// a link to its node_modules (the plugin only runs inside a repository);
// "" with the reason in `why` when the machine lacks git, node or the
// plugin.
std::string tinybench_suite(const TempDir& dir, std::string& why) {
  const std::string source = binary("TINYBENCH_DIR");
  if (!file_exists(source + "/node_modules/@codspeed/tinybench-plugin")) {
    why =
        "CodSpeed's tinybench plugin is not installed (make test runs "
        "npm ci in tests/e2e/tinybench)";
    return "";
  }
  const std::string git = find_runtime("git");
  if (git.empty() || find_runtime("node").empty()) {
    why = "no git or no node on this machine";
    return "";
  }
  const std::string suite = dir.file("suite");
  REQUIRE(run_process({git, "init", "-q", suite}).exit_code == 0);
  std::filesystem::copy_file(source + "/bench.mjs", suite + "/bench.mjs");
  std::filesystem::create_directory_symlink(source + "/node_modules",
                                            suite + "/node_modules");
  return suite;
}

// `runner run --no-profile` of the suite into dir/<name>, `target` doing
// `slowdown` times the work.
std::string record_tinybench(const TempDir& dir, const std::string& suite,
                             const std::string& name, const char* slowdown) {
  const std::string folder = dir.file(name);
  auto r = run_process(runner_argv("run", folder, dir.path(), {"--no-profile"},
                                   {find_runtime("node"), "bench.mjs"}),
                       {std::string("SLOWDOWN=") + slowdown}, suite);
  INFO(name, ": ", r.out, r.err);
  REQUIRE(r.exit_code == 0);
  return folder;
}

bool is_improvement(const Comparison& c) {
  return c.exit_code == 0 &&
         c.report.benchmarks[0].verdict == Verdict::kImprovement;
}

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE(
      "runner compare on profiles: A/B (+50%) a regression in stage_hash, "
      "B/A an improvement") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    bool regression = false, improvement = false;
    std::ostringstream log;
    for (int attempt = 1; attempt <= kAttempts; ++attempt) {
      TempDir dir;
      const std::string a = record(dir, "a", nullptr);
      const std::string b = record(dir, "b", "50");
      const auto ab = compare(a, b, dir.file("ab"));
      const auto ba = compare(b, a, dir.file("ba"));
      for (const Comparison* c : {&ab, &ba})
        CHECK(c->report.benchmarks[0].uri == "exec_harness::workload");
      check_where_the_time_went(ab, true);
      check_where_the_time_went(ba, false);
      log << "attempt " << attempt << ":\n  A/B " << describe(ab) << "\n  B/A "
          << describe(ba) << "\n";
      regression |= is_regression(ab, 0.25, 0.9);
      improvement |= is_improvement(ba);
      if (regression && improvement) break;
    }
    MESSAGE(log.str());
    CHECK(regression);
    CHECK(improvement);
  }

  TEST_CASE(
      "runner compare --paired on the workload: A/A no false alarm, A/B "
      "(+10%) a regression") {
    bool quiet = false, regression = false;
    std::ostringstream log;
    const std::vector<std::string> paired{"--paired", "--pairs", "20",
                                          "--warmup-pairs", "2"};
    for (int attempt = 1; attempt <= kAttempts; ++attempt) {
      TempDir dir;
      const std::string a = workload_command(nullptr);
      const auto aa = compare(a, a, dir.file("aa"), paired);
      const auto ab =
          compare(a, workload_command("10"), dir.file("ab"), paired);
      log << "attempt " << attempt << ":\n  A/A " << describe(aa) << "\n  A/B "
          << describe(ab) << "\n";
      quiet |= no_false_alarm(aa);
      regression |= is_regression(ab, 0.05, 0.15);
      if (quiet && regression) break;
    }
    MESSAGE(log.str());
    CHECK(quiet);
    CHECK(regression);
  }

  TEST_CASE(
      "runner compare of a tinybench suite: 20% slower is never unchanged") {
    TempDir dir;
    std::string why;
    const std::string suite = tinybench_suite(dir, why);
    if (suite.empty()) RUNNER_SKIP_CASE(why);
    const std::string base = record_tinybench(dir, suite, "base", "1");
    const std::string head = record_tinybench(dir, suite, "head", "1.2");
    auto r = run_process({binary("RUNNER_BIN"), "compare", base, head, "--out",
                          dir.file("cmp"), "--format", "json"});
    INFO(r.out, r.err);
    REQUIRE(r.exit_code >= 0);
    REQUIRE(r.exit_code <= 1);
    auto text = runner::base::read_file(dir.file("cmp/compare.json"));
    REQUIRE_MESSAGE(text, text.error().what());
    auto report = runner::format::read_compare_report(*text);
    REQUIRE_MESSAGE(report, report.error().message());
    REQUIRE(report->benchmarks.size() == 2);
    for (const BenchmarkComparison& b : report->benchmarks) {
      MESSAGE(b.name, ": ", runner::format::verdict_name(b.verdict), " ",
              b.change.value_or(0), " [", b.ci_low.value_or(0), ", ",
              b.ci_high.value_or(0), "] ", b.reason);
      if (b.name != "target") continue;
      CHECK(b.test == runner::format::CompareTest::kMedianQuartiles);
      CHECK(b.verdict != Verdict::kUnchanged);
      CHECK(b.verdict != Verdict::kImprovement);
      if (b.verdict == Verdict::kRegression) CHECK(r.exit_code == 1);
    }
  }
}
