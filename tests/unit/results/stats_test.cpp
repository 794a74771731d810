// Stats and the results JSON, pinned with hand-computed numbers.
#include <cmath>
#include <filesystem>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "base/fs.hpp"
#include "integrations/results/walltime_results.hpp"
#include "tests/support/temp_dir.hpp"

using runner::results::compute_stats;

TEST_SUITE("results") {
  TEST_CASE("five rounds: mean, median, exclusive quartiles, sample stdev") {
    std::vector<uint64_t> rounds{300, 100, 600, 200, 400};  // unsorted input
    auto s = compute_stats(rounds);
    CHECK(s.rounds == 5);
    CHECK(s.min_ns == 100);
    CHECK(s.max_ns == 600);
    CHECK(s.mean_ns == doctest::Approx(320));
    CHECK(s.median_ns == 300);
    CHECK(s.q1_ns == doctest::Approx(150));
    CHECK(s.q3_ns == doctest::Approx(500));
    CHECK(s.stdev_ns == doctest::Approx(std::sqrt(37000.0)));
    CHECK(s.iqr_outlier_rounds == 0);
    CHECK(s.stdev_outlier_rounds == 0);
    CHECK(s.total_time == doctest::Approx(1600e-9));
    CHECK(s.iter_per_round == 1);
    CHECK(s.warmup_iters == 0);
  }

  TEST_CASE("six rounds with one IQR outlier") {
    std::vector<uint64_t> rounds{100, 110, 120, 130, 140, 500};
    auto s = compute_stats(rounds);
    CHECK(s.q1_ns == doctest::Approx(107.5));
    CHECK(s.q3_ns == doctest::Approx(230));
    CHECK(s.median_ns == doctest::Approx(125));
    CHECK(s.iqr_outlier_rounds == 1);
  }

  TEST_CASE("2 sigma outlier: sixteen 1s and a 50") {
    std::vector<uint64_t> rounds(16, 1);
    rounds.push_back(50);
    auto s = compute_stats(rounds);
    CHECK(s.mean_ns == doctest::Approx(66.0 / 17));
    CHECK(s.mean_ns == doctest::Approx(3.88235).epsilon(1e-5));
    CHECK(s.stdev_ns == doctest::Approx(11.8842).epsilon(1e-4));
    CHECK(s.stdev_outlier_rounds == 1);
    CHECK(s.iqr_outlier_rounds == 1);
    CHECK(s.median_ns == 1);
  }

  TEST_CASE("single round and two rounds") {
    std::vector<uint64_t> one{42};
    auto s1 = compute_stats(one);
    CHECK(s1.rounds == 1);
    CHECK(s1.mean_ns == 42);
    CHECK(s1.median_ns == 42);
    CHECK(s1.q1_ns == 42);
    CHECK(s1.q3_ns == 42);
    CHECK(s1.stdev_ns == 0);
    CHECK(s1.iqr_outlier_rounds == 0);
    CHECK(s1.stdev_outlier_rounds == 0);

    std::vector<uint64_t> two{200, 100};
    auto s2 = compute_stats(two);
    CHECK(s2.median_ns == 150);
    CHECK(s2.q1_ns == doctest::Approx(125));  // 100*0.75 + 200*0.25
    CHECK(s2.q3_ns == doctest::Approx(175));
    CHECK(s2.stdev_ns == doctest::Approx(std::sqrt(5000.0)));
  }

  TEST_CASE("quartiles of 8 and 9 values (Python statistics.quantiles)") {
    std::vector<uint64_t> eight{1, 2, 3, 4, 5, 6, 7, 8};
    auto s8 = compute_stats(eight);
    CHECK(s8.q1_ns == doctest::Approx(2.25));  // pos 1.25
    CHECK(s8.median_ns == doctest::Approx(4.5));
    CHECK(s8.q3_ns == doctest::Approx(6.75));  // pos 5.75

    std::vector<uint64_t> nine{1, 2, 3, 4, 5, 6, 7, 8, 9};
    auto s9 = compute_stats(nine);
    CHECK(s9.q1_ns == doctest::Approx(2.5));  // pos 1.5
    CHECK(s9.median_ns == 5);
    CHECK(s9.q3_ns == doctest::Approx(7.5));  // pos 6.5
  }

  TEST_CASE("variable iterations: per-iteration times, integer division") {
    std::vector<uint64_t> rounds{1000, 2001, 3005};
    std::vector<uint64_t> iters{10, 20, 30};
    auto s = compute_stats(rounds, iters);
    CHECK(s.min_ns == 100);  // 1000/10, 2001/20 = 100, 3005/30 = 100
    CHECK(s.max_ns == 100);
    CHECK(s.stdev_ns == 0);
    CHECK(s.iter_per_round == 20);
    CHECK(s.total_time == doctest::Approx(6006e-9));

    std::vector<uint64_t> r2{100, 100};
    std::vector<uint64_t> i2{1, 2};
    auto s2 = compute_stats(r2, i2);
    CHECK(s2.min_ns == 50);
    CHECK(s2.iter_per_round == 1);  // (1+2)/2 integer mean
  }

  TEST_CASE("bad input: empty rounds, zero iterations") {
    auto s = compute_stats({});
    CHECK(s.rounds == 0);
    CHECK(s.mean_ns == 0);
    CHECK(s.stdev_ns == 0);
    CHECK(s.total_time == 0);
    std::vector<uint64_t> rounds{10, 20};
    std::vector<uint64_t> zero{0, 0};
    auto z = compute_stats(rounds, zero);  // no division by zero
    CHECK(z.min_ns == 10);
    CHECK(z.max_ns == 20);
  }

  TEST_CASE("results_json: the schema of spec 7.2, nulls, full precision") {
    runner::results::BenchmarkResult b;
    b.name = "sleep \"0.1\"";
    b.uri = "exec_harness::sleep \"0.1\"";
    b.config.max_rounds = 7;
    b.config.warmup_time_ns = 1e9;
    std::vector<uint64_t> rounds{100, 200, 300, 400, 600};
    b.stats = compute_stats(rounds);
    std::vector<runner::results::BenchmarkResult> list{b};
    std::string text =
        runner::results::results_json({"exec-harness", "1.3.0", 4242}, list);
    CHECK(text.find("\n  \"creator\"") != std::string::npos);  // pretty
    auto doc = nlohmann::json::parse(text);
    CHECK(doc["creator"]["name"] == "exec-harness");
    CHECK(doc["creator"]["version"] == "1.3.0");
    CHECK(doc["creator"]["pid"] == 4242);
    CHECK(doc["instrument"]["type"] == "walltime");
    REQUIRE(doc["benchmarks"].size() == 1);
    const auto& j = doc["benchmarks"][0];
    CHECK(j["name"] == "sleep \"0.1\"");
    CHECK(j["uri"] == "exec_harness::sleep \"0.1\"");
    CHECK(j["config"]["min_round_time_ns"].is_null());
    CHECK(j["config"]["max_time_ns"].is_null());
    CHECK(j["config"]["max_rounds"] == 7);
    CHECK(j["config"]["warmup_time_ns"].get<double>() == 1e9);
    for (const char* key : {"min_ns", "max_ns", "mean_ns", "stdev_ns", "q1_ns",
                            "median_ns", "q3_ns", "total_time"}) {
      INFO(key);
      CHECK(j["stats"][key].is_number_float());
    }
    for (const char* key :
         {"rounds", "iqr_outlier_rounds", "stdev_outlier_rounds",
          "iter_per_round", "warmup_iters"}) {
      INFO(key);
      CHECK(j["stats"][key].is_number_unsigned());
    }
    CHECK(j["stats"]["stdev_ns"].get<double>() == std::sqrt(37000.0));  // exact
    CHECK(j["stats"]["rounds"] == 5);
  }

  TEST_CASE("write_results: creates the directory, atomic, <pid>.json") {
    runner::testing::TempDir dir;
    std::vector<runner::results::BenchmarkResult> list(1);
    list[0].name = "x";
    list[0].uri = "exec_harness::x";
    auto path = runner::results::write_results(dir.file("a/b/results"),
                                               {"t", "1", 77}, list);
    REQUIRE(path);
    CHECK(*path == dir.file("a/b/results/77.json"));
    auto text = runner::base::read_file(*path);
    REQUIRE(text);
    CHECK(nlohmann::json::parse(*text)["benchmarks"][0]["uri"] ==
          "exec_harness::x");
    int entries = 0;
    for (auto& e :
         std::filesystem::directory_iterator(dir.file("a/b/results"))) {
      (void)e;
      ++entries;  // no temporary left behind
    }
    CHECK(entries == 1);
    // A file where the directory should be: a clear error, no crash.
    REQUIRE(runner::base::write_file_atomic(dir.file("file"),
                                            std::string_view("x")));
    auto bad = runner::results::write_results(dir.file("file/results"),
                                              {"t", "1", 1}, list);
    CHECK_FALSE(bad);
  }

  TEST_CASE("results_directory honours CODSPEED_PROFILE_FOLDER") {
    ::setenv("CODSPEED_PROFILE_FOLDER", "/some/where", 1);
    CHECK(runner::results::results_directory() == "/some/where/results");
    ::unsetenv("CODSPEED_PROFILE_FOLDER");
    CHECK(runner::results::results_directory() == "./.codspeed/results");
  }
}
