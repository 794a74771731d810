// compare/interleaved: the folder of one `runner exec --interleave` run
// (results JSON and ExecutionTimestamps.msgpack written through format):
// the two benchmarks paired, and every folder that is not one refused with
// a reason.
#include "compare/interleaved.hpp"

#include <filesystem>

#include <doctest/doctest.h>

#include "base/fs.hpp"
#include "tests/support/temp_dir.hpp"

namespace compare = runner::compare;
namespace format = runner::format;
using runner::testing::TempDir;

namespace {

format::BenchmarkResult rounds_of(const std::string& name,
                                  std::vector<uint64_t> rounds) {
  format::BenchmarkResult r;
  r.name = name;
  r.uri = "exec_harness::" + name;
  r.stats.mean_ns = r.stats.median_ns = 1000;
  r.stats.stdev_ns = 1;
  r.stats.rounds = rounds.size();
  r.stats.iter_per_round = 1;
  r.iters_per_round.assign(rounds.size(), 1);
  r.times_per_round_ns = std::move(rounds);
  return r;
}

void write_results(const std::string& folder,
                   const std::vector<format::BenchmarkResult>& benchmarks) {
  std::filesystem::create_directories(folder + "/results");
  REQUIRE(runner::base::write_file_atomic(
      folder + "/results/1.json",
      format::write_walltime_results({"exec-harness", "1", 1}, benchmarks)));
}

// One CurrentBenchmark per round, in the order given.
void write_announced(const std::string& folder,
                     const std::vector<std::string>& uris) {
  format::ExecutionTimestamps ts;
  uint64_t now = 100;
  for (const auto& uri : uris) {
    ts.markers.push_back({"RoundStart", now += 10});
    ts.markers.push_back({"RoundEnd", now += 10});
    ts.uri_by_ts.emplace_back(now += 10, uri);
  }
  REQUIRE(runner::base::write_file_atomic(
      format::ProfileLayout(folder).execution_timestamps(),
      format::write_execution_timestamps(ts)));
}

std::string load_error(const std::string& folder) {
  auto pair = compare::load_interleaved(folder);
  REQUIRE_FALSE(pair);
  return pair.error().what();
}

const std::string kA = "exec_harness::a", kB = "exec_harness::b";

}  // namespace

TEST_CASE("check_abba_order: A B B A A B, nothing else") {
  CHECK(compare::check_abba_order({kA, kB, kB, kA, kA, kB}, kA, kB, 3));
  CHECK(compare::check_abba_order({}, kA, kB, 0));
  auto swapped = compare::check_abba_order({kA, kB, kA, kB}, kA, kB, 2);
  REQUIRE_FALSE(swapped);
  CHECK(swapped.error().message() ==
        "round 3 of the run was 'exec_harness::a', expected "
        "'exec_harness::b' (ABBA order)");
  auto sequential = compare::check_abba_order({kA, kA, kB, kB}, kA, kB, 2);
  CHECK_FALSE(sequential);
  auto b_first = compare::check_abba_order({kB, kA, kA, kB}, kA, kB, 2);
  CHECK_FALSE(b_first);
  auto short_run = compare::check_abba_order({kA, kB}, kA, kB, 2);
  REQUIRE_FALSE(short_run);
  CHECK(short_run.error().message() ==
        "the runner was told 2 rounds, the results hold 4");
}

TEST_CASE("load_interleaved: the first benchmark is the base") {
  TempDir dir;
  const std::string folder = dir.path() + "/ab";
  write_results(folder, {rounds_of("a", {10, 11, 12, 13}),
                         rounds_of("b", {20, 21, 22, 23})});
  write_announced(folder, {kA, kB, kB, kA, kA, kB, kB, kA});
  auto pair = compare::load_interleaved(folder);
  REQUIRE_MESSAGE(pair, pair.error().what());
  CHECK(pair->base.uri == kA);
  CHECK(pair->head.uri == kB);
  CHECK(pair->base.samples.times_ns == std::vector<double>{10, 11, 12, 13});
  CHECK(pair->head.samples.times_ns == std::vector<double>{20, 21, 22, 23});
  CHECK(pair->warnings.empty());
}

TEST_CASE("load_interleaved: without ExecutionTimestamps, a warning") {
  TempDir dir;
  const std::string folder = dir.path() + "/ab";
  write_results(folder, {rounds_of("a", {10, 11}), rounds_of("b", {20, 21})});
  auto pair = compare::load_interleaved(folder);
  REQUIRE_MESSAGE(pair, pair.error().what());
  REQUIRE(pair->warnings.size() == 1);
  CHECK(pair->warnings[0].find("could not be checked") != std::string::npos);
}

TEST_CASE("load_interleaved: folders that are not one interleaved run") {
  TempDir dir;
  const std::string uneven = dir.path() + "/uneven";
  write_results(uneven, {rounds_of("a", {10, 11, 12}), rounds_of("b", {20})});
  CHECK(load_error(uneven).find("'a' has 3 rounds, 'b' 1") !=
        std::string::npos);

  const std::string three = dir.path() + "/three";
  write_results(
      three, {rounds_of("a", {1}), rounds_of("b", {2}), rounds_of("c", {3})});
  CHECK(load_error(three).find("holds 3 benchmarks, not the two") !=
        std::string::npos);

  const std::string one = dir.path() + "/one";
  write_results(one, {rounds_of("a", {1, 2})});
  CHECK(load_error(one).find("holds 1 benchmarks") != std::string::npos);

  const std::string sequential = dir.path() + "/sequential";
  write_results(sequential,
                {rounds_of("a", {10, 11}), rounds_of("b", {20, 21})});
  write_announced(sequential, {kA, kB});  // one window per benchmark
  const std::string why = load_error(sequential);
  CHECK(why.find("not an interleaved run") != std::string::npos);
  CHECK(why.find("runner exec --interleave") != std::string::npos);

  const std::string summary_only = dir.path() + "/summary";
  auto a = rounds_of("a", {}), b = rounds_of("b", {});
  a.stats.rounds = b.stats.rounds = 5;
  write_results(summary_only, {a, b});
  CHECK(load_error(summary_only).find("no round times") != std::string::npos);

  CHECK(load_error(dir.path() + "/missing").find("interleaved folder") !=
        std::string::npos);
}
