// format/store_record: a run's record in the shared store.
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include "format/format.hpp"

using namespace runner::format;

namespace {

StoreRecord sample() {
  StoreRecord r;
  r.owner = "acme";
  r.repository = "widgets";
  r.branch = "feat/x";
  r.ref = "refs/heads/feat/x";
  r.commit = std::string(40, 'a');
  r.run_id = "20261124T000000123Z-0badf00d";
  r.created_at = "2026-11-24T00:00:00.123Z";
  r.created_unix_ms = 1795478400123;
  r.event = "push";
  r.ci_run_url = "https://github.com/acme/widgets/actions/runs/1";
  r.archive_key = "acme/widgets/runs/aaa/x.tar.zst";
  r.archive_bytes = 123;
  r.archive_sha256 = std::string(64, 'f');
  r.folder_bytes = 4567;
  r.benchmarks = {"a.cpp::x", "b.cpp::y"};
  r.runner_version = "0.2.0";
  return r;
}

}  // namespace

TEST_CASE("a store record round-trips") {
  const StoreRecord r = sample();
  auto back = read_store_record(write_store_record(r));
  REQUIRE_MESSAGE(back, back.error().message());
  CHECK(write_store_record(*back) == write_store_record(r));
  CHECK(back->branch == "feat/x");
  CHECK(back->benchmarks == r.benchmarks);
  CHECK(back->created_unix_ms == r.created_unix_ms);
}

TEST_CASE("a record from a newer runner, or incomplete, is refused") {
  std::string text = write_store_record(sample());
  std::string newer = text;
  newer.replace(newer.find("\"version\": 1"), 12, "\"version\": 2");
  auto refused = read_store_record(newer);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message().find("version 2 is not supported") !=
        std::string::npos);
  std::string missing = text;
  missing.replace(missing.find("\"commit\""), 8, "\"commmit\"");
  CHECK_FALSE(read_store_record(missing));
  CHECK_FALSE(read_store_record("[]"));
  CHECK_FALSE(read_store_record("{"));
}

TEST_CASE("a store record names a pull request's number, or null") {
  StoreRecord r = sample();
  CHECK(write_store_record(r).find("\"pull_request\": null") !=
        std::string::npos);
  r.pull_request = 7;
  auto back = read_store_record(write_store_record(r));
  REQUIRE_MESSAGE(back, back.error().message());
  CHECK(back->pull_request == std::optional<uint64_t>(7));
  // A record of an older runner has no such member: not a pull request's.
  std::string old = write_store_record(sample());
  old.erase(old.find("  \"pull_request\": null,\n"), 24);
  REQUIRE(old.find("pull_request") == std::string::npos);
  auto read = read_store_record(old);
  REQUIRE_MESSAGE(read, read.error().message());
  CHECK_FALSE(read->pull_request);
  std::string mistyped = write_store_record(sample());
  mistyped.replace(mistyped.find("null"), 4, "\"7\"");
  CHECK_FALSE(read_store_record(mistyped));
}

// Found by fuzz_store_record: a number past 2^64 is a double to nlohmann,
// and converting it to u64 was undefined behaviour.
TEST_CASE("a size that is not an integer >= 0 is refused, not converted") {
  const std::string text = write_store_record(sample());
  const std::string member = "\"folder_bytes\": 4567";
  for (const std::string value :
       {"218446744073709551615841", "-1", "1.5", "1e30", "\"4567\""}) {
    std::string bad = text;
    bad.replace(bad.find(member), member.size(), "\"folder_bytes\": " + value);
    auto refused = read_store_record(bad);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().message() ==
          "store record: folder_bytes is not an integer >= 0");
  }
  std::string version = text;
  version.replace(version.find("\"version\": 1"), 12, "\"version\": 1e300");
  CHECK_FALSE(read_store_record(version));
}

// A record is outside text: a deeply nested member is refused while it is
// parsed, before nlohmann builds (or recurses through) the containers.
TEST_CASE("a record nested deeper than 128 levels is refused") {
  std::string deep = write_store_record(sample());
  const std::string member = "\"ci_run_url\": ";
  const size_t at = deep.find(member) + member.size();
  const size_t end = deep.find(',', at);
  deep.replace(at, end - at,
               std::string(100000, '[') + std::string(100000, ']'));
  auto refused = read_store_record(deep);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message() ==
        "store record: nested deeper than 128 levels");
}

TEST_CASE("a store record carries each benchmark's median, optionally") {
  StoreRecord r = sample();
  r.benchmark_medians = {{"a.cpp::x", 1234.5, 1200.0, 1300.25, 900.0, 2.5e6},
                         {"b.cpp::y", 6e6, {}, {}, {}, {}}};
  const std::string text = write_store_record(r);
  auto back = read_store_record(text);
  REQUIRE_MESSAGE(back, back.error().message());
  CHECK(back->benchmark_medians == r.benchmark_medians);
  // An older runner's record has none.
  std::string older = text;
  older.erase(older.find(",\n  \"benchmark_medians\""));
  older += "\n}\n";
  auto old_back = read_store_record(older);
  REQUIRE_MESSAGE(old_back, old_back.error().message());
  CHECK(old_back->benchmark_medians.empty());
  // A NaN is written as null and refused when read, naming the entry.
  r.benchmark_medians = {{"a.cpp::x", NAN, {}, {}, {}, {}}};
  auto refused = read_store_record(write_store_record(r));
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message().find("benchmark_medians[0] is not") !=
        std::string::npos);
}

TEST_CASE("the median per iteration of a run, as compare estimates it") {
  BenchmarkResult rounds;
  rounds.uri = "b::rounds";
  rounds.times_per_round_ns = {300, 100, 200, 1000};
  rounds.iters_per_round = {1, 1, 1, 2};  // 300, 100, 200, 500 per iteration
  BenchmarkResult more = rounds;  // a second entry of the same URI pools
  more.times_per_round_ns = {400};
  more.iters_per_round = {1};
  BenchmarkResult summary;
  summary.uri = "a::summary";
  summary.stats.median_ns = 42;
  const std::vector<BenchmarkResult> all{rounds, more, summary};
  const auto medians = median_per_iteration_ns(all);
  REQUIRE(medians.size() == 2);
  CHECK(medians[0] == std::pair<std::string, double>{"a::summary", 42});
  CHECK(medians[1] == std::pair<std::string, double>{"b::rounds", 300});
}
