#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "format/format.hpp"

using namespace runner::format;

namespace {

BenchmarkResult sample_benchmark() {
  // config: warmup, min round time, max time, max rounds; stats: min, max,
  // mean, stdev, q1, median, q3, rounds, total_time, IQR and stdev
  // outliers, iterations per round, warmup iterations.
  return {"fib 20",
          "bench.cpp::fib 20",
          {1e9, std::nullopt, std::nullopt, 100},
          {1.5, 3, 2.25, 0.5, 2, 2.125, 2.5, 7, 1e-6, 1, 2, 3, 0},
          {},
          {}};
}

}  // namespace

TEST_CASE("walltime results: the schema's layout") {
  const Creator creator{"runner-exec-harness", "1.2", 77};
  std::vector<BenchmarkResult> list{sample_benchmark()};
  const std::string text = write_walltime_results(creator, list);
  CHECK(text.starts_with(
      "{\n  \"creator\": {\n    \"name\": \"runner-exec-harness\",\n"
      "    \"version\": \"1.2\",\n    \"pid\": 77\n  },\n"
      "  \"instrument\": {\n    \"type\": \"walltime\"\n  },\n"
      "  \"benchmarks\": [\n    {\n      \"name\": \"fib 20\",\n"));
  CHECK(text.find("\"min_round_time_ns\": null") != std::string::npos);
  CHECK(text.find("\"max_rounds\": 100") != std::string::npos);
  CHECK(text.ends_with("}\n"));
}

TEST_CASE("walltime results round trip") {
  const Creator creator{"x", "0.1.0", 4000000000u};
  std::vector<BenchmarkResult> list{sample_benchmark(), sample_benchmark()};
  list[1].name = "second";
  list[1].config = {};
  auto read = read_walltime_results(write_walltime_results(creator, list));
  REQUIRE(read);
  CHECK(read->creator == creator);
  CHECK(read->instrument == "walltime");
  CHECK(read->benchmarks == list);

  auto empty = read_walltime_results(write_walltime_results(creator, {}));
  REQUIRE(empty);
  CHECK(empty->benchmarks.empty());
}

TEST_CASE("walltime results: malformed documents say what is wrong") {
  auto error = [](std::string_view text) {
    auto read = read_walltime_results(text);
    REQUIRE_FALSE(read);
    return read.error().message();
  };
  CHECK(error("") == "not JSON (at byte 1)");
  CHECK(error("{\"benchmarks\": [") == "not JSON (at byte 17)");
  CHECK(error("[]") == "missing creator/instrument/benchmarks");
  CHECK(error(R"({"creator":{},"benchmarks":[]})") ==
        "missing creator/instrument/benchmarks");
  CHECK(error(R"({"creator":{},"instrument":{},"benchmarks":{}})") ==
        "missing creator/instrument/benchmarks");
  CHECK(error(R"({"creator":1,"instrument":2,"benchmarks":[3]})") ==
        "a benchmark is not an object");
  CHECK(error(R"({"creator":1,"instrument":2,"benchmarks":[{"name":"a"}]})") ==
        "benchmark without string 'uri'");
  CHECK(error(R"({"creator":1,"instrument":2,"benchmarks":[
      {"name":"a","uri":"b","config":{}}]})") ==
        "benchmark without 'stats' object");
  CHECK(error(R"({"creator":1,"instrument":2,"benchmarks":[
      {"name":"a","uri":"b","config":{},"stats":{"min_ns":"1"}}]})") ==
        "stats without number 'min_ns'");
  // Counts must be unsigned integers.
  std::string doc = write_walltime_results(
      {}, std::vector<BenchmarkResult>{sample_benchmark()});
  const std::string rounds = "\"rounds\": 7";
  doc.replace(doc.find(rounds), rounds.size(), "\"rounds\": -7");
  CHECK(error(doc) == "stats without unsigned 'rounds'");
  // Creator and instrument of other shapes are accepted (read as empty).
  auto odd = read_walltime_results(
      R"({"creator":"me","instrument":[],"benchmarks":[]})");
  REQUIRE(odd);
  CHECK(odd->creator == Creator{});
  CHECK(odd->instrument.empty());
}

TEST_CASE("walltime results: the raw rounds follow stats and round-trip") {
  const Creator creator{"exec-harness", "1.3.0", 9};
  std::vector<BenchmarkResult> list{sample_benchmark(), sample_benchmark()};
  list[0].times_per_round_ns = {30, 18446744073709551615u, 12};
  list[0].iters_per_round = {1, 2, 3};
  const std::string text = write_walltime_results(creator, list);
  CHECK(text.find("\"warmup_iters\": 0\n      },\n"
                  "      \"times_per_round_ns\": [\n        30,\n"
                  "        18446744073709551615,\n        12\n      ],\n"
                  "      \"iters_per_round\": [\n        1,\n        2,\n"
                  "        3\n      ]\n    },") != std::string::npos);
  // Empty arrays are not written: the second benchmark has none.
  CHECK(text.find("times_per_round_ns") == text.rfind("times_per_round_ns"));
  auto read = read_walltime_results(text);
  REQUIRE(read);
  CHECK(read->benchmarks == list);
  // Written again, byte for byte.
  CHECK(write_walltime_results(read->creator, read->benchmarks) == text);
}

TEST_CASE("walltime results: malformed raw rounds name the member") {
  auto with_rounds = [](std::string_view members) {
    std::string doc = write_walltime_results(
        {}, std::vector<BenchmarkResult>{sample_benchmark()});
    const std::string end = "\"warmup_iters\": 0\n      }";
    doc.insert(doc.find(end) + end.size(), "," + std::string(members));
    return read_walltime_results(doc);
  };
  auto error = [&](std::string_view members) {
    auto read = with_rounds(members);
    REQUIRE_FALSE(read);
    return read.error().message();
  };
  const std::string times_not_unsigned =
      "benchmark's 'times_per_round_ns' is not an array of unsigned integers";
  const std::string iters_not_unsigned =
      "benchmark's 'iters_per_round' is not an array of unsigned integers";
  CHECK(error(R"("times_per_round_ns": [1], "iters_per_round": [-1])") ==
        iters_not_unsigned);
  CHECK(error(R"("times_per_round_ns": [1.5], "iters_per_round": [1])") ==
        times_not_unsigned);
  CHECK(error(R"("times_per_round_ns": ["1"], "iters_per_round": [1])") ==
        times_not_unsigned);
  CHECK(error(R"("times_per_round_ns": [null], "iters_per_round": [1])") ==
        times_not_unsigned);
  CHECK(error(R"("times_per_round_ns": 1, "iters_per_round": [1])") ==
        times_not_unsigned);
  CHECK(error(R"("times_per_round_ns": [1], "iters_per_round": {})") ==
        iters_not_unsigned);
  CHECK(error(R"("times_per_round_ns": [1, 2], "iters_per_round": [1])") ==
        "benchmark's 'times_per_round_ns' and 'iters_per_round' differ in "
        "length");
  CHECK(error(R"("times_per_round_ns": [1])") ==
        "benchmark with 'times_per_round_ns' but without 'iters_per_round'");
  CHECK(error(R"("iters_per_round": [1])") ==
        "benchmark with 'iters_per_round' but without 'times_per_round_ns'");
  CHECK(error(R"("times_per_round_ns": [5, 6], "iters_per_round": [1, 0])") ==
        "benchmark's 'iters_per_round' has a round of 0 iterations");
  // Present but empty: accepted, nothing read.
  auto empty =
      with_rounds(R"("times_per_round_ns": [], "iters_per_round": [])");
  REQUIRE(empty);
  CHECK(empty->benchmarks[0].times_per_round_ns.empty());
  auto one =
      with_rounds(R"("times_per_round_ns": [7], "iters_per_round": [2])");
  REQUIRE(one);
  CHECK(one->benchmarks[0].times_per_round_ns == std::vector<uint64_t>{7});
  CHECK(one->benchmarks[0].iters_per_round == std::vector<uint64_t>{2});
}
