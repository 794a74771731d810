// A fixed format::CompareReport with every kind of row `runner compare`
// makes (regression, improvement, unchanged, inconclusive; added, removed,
// noise, top functions, warnings) and hostile names (a '|', markdown and
// HTML characters, unicode, a long name), for the compare.json, text and
// markdown tests and the golden files of tests/golden/compare/.
#pragma once

#include "format/format.hpp"

namespace runner::testing {

inline format::CompareReport sample_compare_report() {
  using namespace runner::format;
  CompareReport r;
  r.base = {{"runner-profile.base-1", "runner-profile.base-2"}, "", 5};
  r.head = {{"runner-profile.head"}, "", 5};
  BenchmarkComparison regression{
      "bench_parse.cpp::parse | json (\xC3\xBCn\xC3\xAF\x63ode, "
      "\xE6\x97\xA5\xE6\x9C\xAC)",
      "parse | json (\xC3\xBCn\xC3\xAF\x63ode, \xE6\x97\xA5\xE6\x9C\xAC)",
      Verdict::kRegression,
      "+10.2% is above the 5% threshold",
      0.102,
      0.091,
      0.113,
      0.0012,
      0.0004,
      CompareTest::kMannWhitneyU,
      {1.234e6, 1.2401e6, 1.2e4, 40, 2, SampleSource::kRounds},
      {1.36e6, 1.3612e6, 1.5e4, 20, 1, SampleSource::kRounds},
      {{"json::parse_value(char const*&)", 0.12, 0.225},
       {"std::vector<int, std::allocator<int> >::push_back(int const&)", 0.30,
        0.28},
       {"memcpy", 0.05, 0.049}},
      "parse_json.diff.svg"};
  BenchmarkComparison improvement{
      "bench_sort.cpp::sort <1000> *fast* `x`",
      "sort <1000> *fast* `x`",
      Verdict::kImprovement,
      "-15.3% is beyond the 5% threshold",
      -0.153,
      -0.171,
      -0.135,
      0.0001,
      0.00005,
      CompareTest::kWelchT,
      {std::nullopt, 812.4, 20.5, 10, 2, SampleSource::kSummary},
      {std::nullopt, 688.1, 18.25, 10, 1, SampleSource::kSummary},
      {},
      ""};
  BenchmarkComparison unchanged{
      "bench_fib.cpp::fib_20",
      "fib_20",
      Verdict::kUnchanged,
      "p = 0.41 >= 0.05",
      0.008,
      -0.004,
      0.021,
      0.41,
      0.205,
      CompareTest::kMannWhitneyU,
      {9.995e2, 1.001e3, 3.5, 30, 2, SampleSource::kMarkers},
      {1.0075e3, 1.009e3, 4.0, 12, 1, SampleSource::kMarkers},
      {{"fib(int)", 0.91, 0.915}},
      "fib_20.diff.svg"};
  BenchmarkComparison long_name{
      "bench_hash.cpp::BM_HashTable/insert/1048576/real_time/threads:8/"
      "iterations:1000/manual_time",
      "BM_HashTable/insert/1048576/real_time/threads:8/iterations:1000/"
      "manual_time",
      Verdict::kUnchanged,
      "+0.3% is within the 5% threshold",
      0.003,
      -0.012,
      0.018,
      0.03,
      0.006,
      CompareTest::kMannWhitneyU,
      {2.5e9, 2.51e9, 1.1e7, 8, 2, SampleSource::kRounds},
      {2.5075e9, 2.509e9, 1.3e7, 8, 1, SampleSource::kRounds},
      {},
      ""};
  BenchmarkComparison inconclusive{
      "bench_startup.cpp::startup",
      "startup",
      Verdict::kInconclusive,
      "3 rounds in base, need 6",
      std::nullopt,
      std::nullopt,
      std::nullopt,
      std::nullopt,
      std::nullopt,
      CompareTest::kNone,
      {4.56e7, 4.6e7, 2e6, 3, 2, SampleSource::kRounds},
      {4.4e7, 4.41e7, 1e6, 9, 1, SampleSource::kRounds},
      {},
      ""};
  r.benchmarks = {regression, improvement, unchanged, long_name, inconclusive};
  r.added = {{"bench_new.cpp::new_bench", "new_bench"}};
  r.removed = {{"bench_old.cpp::old_bench", "old_bench"}};
  r.noise = {
      {"base", regression.uri, regression.name, {1.23e6, 1.25e6}, 0.01626},
      {"base", unchanged.uri, unchanged.name, {989.0, 1019.7}, 0.031}};
  r.warnings = {
      "head: results/4242.json: benchmark 'bench_old.cpp::broken' has 0 "
      "rounds: left out"};
  return r;
}

}  // namespace runner::testing
