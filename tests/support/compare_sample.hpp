// A fixed format::CompareReport with every kind of row `runner compare`
// makes (regression, improvement, unchanged, inconclusive; added, removed,
// noise, top functions, warnings) and hostile names (a '|', markdown and
// HTML characters, unicode, a long name), for the compare.json, text and
// markdown tests and the golden files of tests/golden/compare/.
#pragma once

#include <cstddef>
#include <iterator>
#include <string>
#include <tuple>

#include "format/format.hpp"

namespace runner::testing {

inline format::CompareReport sample_compare_report() {
  using namespace runner::format;
  using V = Verdict;
  using T = CompareTest;
  using S = SampleSource;
  const std::string unicode =
      "parse | json (\xC3\xBCn\xC3\xAF\x63ode, \xE6\x97\xA5\xE6\x9C\xAC)";
  const std::string hash =
      "BM_HashTable/insert/1048576/real_time/threads:8/iterations:1000/"
      "manual_time";
  // Name, verdict, reason; then the estimate: change, its interval, p-value
  // after and before the correction, test.
  const BenchmarkRef refs[] = {{"bench_parse.cpp", unicode},
                               {"bench_sort.cpp", "sort <1000> *fast* `x`"},
                               {"bench_fib.cpp", "fib_20"},
                               {"bench_hash.cpp", hash},
                               {"bench_startup.cpp", "startup"}};
  const Verdict verdicts[] = {V::kRegression, V::kImprovement, V::kUnchanged,
                              V::kUnchanged, V::kInconclusive};
  const char* reasons[] = {"+10.2% is above the 5% threshold",
                           "-15.3% is beyond the 5% threshold",
                           "95% interval [-0.4%, +2.1%] lies within \xC2\xB1"
                           "5%",
                           "95% interval [-1.2%, +1.8%] lies within \xC2\xB1"
                           "5%",
                           "3 rounds in base, need 6"};
  CompareReport r;
  for (size_t i = 0; i < std::size(refs); ++i) {
    BenchmarkComparison b;
    b.uri = refs[i].uri + "::" + refs[i].name;
    b.name = refs[i].name;
    b.verdict = verdicts[i];
    b.reason = reasons[i];
    r.benchmarks.push_back(b);
  }
  // Then the change it could have detected.
  auto estimate = [&](size_t i, double change, double low, double high,
                      double p, double raw, CompareTest test,
                      double detectable) {
    BenchmarkComparison& b = r.benchmarks[i];
    std::tie(b.change, b.ci_low, b.ci_high) = std::tuple{change, low, high};
    std::tie(b.p_value, b.p_value_raw, b.test) = std::tuple{p, raw, test};
    b.detectable_change = detectable;
  };
  estimate(0, 0.102, 0.091, 0.113, 0.0012, 0.0004, T::kMannWhitneyU, 0.0547);
  estimate(1, -0.153, -0.171, -0.135, 0.0001, 0.00005, T::kWelchT, 0.0577);
  estimate(2, 0.008, -0.004, 0.021, 0.41, 0.205, T::kMannWhitneyU, 0.0554);
  estimate(3, 0.003, -0.012, 0.018, 0.03, 0.006, T::kMannWhitneyU, 0.0564);
  // median, q1, mean, stdev, rounds, folders, source of each side.
  const CompareSideStats sides[][2] = {
      {{1.234e6, 1.229e6, 1.2401e6, 1.2e4, 40, 2, S::kRounds},
       {1.36e6, 1.352e6, 1.3612e6, 1.5e4, 20, 1, S::kRounds}},
      {{std::nullopt, std::nullopt, 812.4, 20.5, 10, 2, S::kSummary},
       {std::nullopt, std::nullopt, 688.1, 18.25, 10, 1, S::kSummary}},
      {{9.995e2, 9.97e2, 1.001e3, 3.5, 30, 2, S::kMarkers},
       {1.0075e3, 1.004e3, 1.009e3, 4.0, 12, 1, S::kMarkers}},
      {{2.5e9, 2.49e9, 2.51e9, 1.1e7, 8, 2, S::kRounds},
       {2.5075e9, 2.5e9, 2.509e9, 1.3e7, 8, 1, S::kRounds}},
      {{4.56e7, 4.5e7, 4.6e7, 2e6, 3, 2, S::kRounds},
       {4.4e7, 4.38e7, 4.41e7, 1e6, 9, 1, S::kRounds}}};
  for (size_t i = 0; i < std::size(sides); ++i)
    std::tie(r.benchmarks[i].base, r.benchmarks[i].head) =
        std::tuple{sides[i][0], sides[i][1]};
  r.benchmarks[0].top_functions = {
      {"json::parse_value(char const*&)", 0.12, 0.225},
      {"std::vector<int, std::allocator<int> >::push_back(int const&)", 0.30,
       0.28},
      {"memcpy", 0.05, 0.049}};
  r.benchmarks[0].diff_flamegraph = "parse_json.diff.svg";
  r.benchmarks[2].top_functions = {{"fib(int)", 0.91, 0.915}};
  r.benchmarks[2].diff_flamegraph = "fib_20.diff.svg";

  // The run-to-run noise: the runs decided, the rounds did, not estimated,
  // the store's history decided (base runs, head runs, history runs, log
  // stdev, change, ci_low, ci_high, p).
  using N = format::NoiseSource;
  r.benchmarks[0].noise = N::kRuns;
  r.benchmarks[0].runs = {2, 1, 0, 0.0114, 0.102, 0.091, 0.113, 0.0004};
  r.benchmarks[1].noise = N::kNotEstimated;
  r.benchmarks[2].noise = N::kRounds;
  r.benchmarks[2].runs = {2, 1, 0, 0.0031, 0.009, 0.001, 0.017, 0.08};
  r.benchmarks[3].noise = N::kHistory;
  r.benchmarks[3].runs = {1, 1, 10, 0.0042, 0.003, -0.012, 0.018, 0.006};
  r.history = "10 stored runs of pushes to 'main' in s3://bench/ci";
  r.base = {{"runner-profile.base-1", "runner-profile.base-2"}, "", 5};
  r.head = {{"runner-profile.head"}, "", 5};
  r.added = {{"bench_new.cpp::new_bench", "new_bench"}};
  r.removed = {{"bench_old.cpp::old_bench", "old_bench"}};
  const BenchmarkComparison& parse = r.benchmarks[0];
  const BenchmarkComparison& fib = r.benchmarks[2];
  r.noise = {{"base", parse.uri, parse.name, {1.23e6, 1.25e6}, 0.01626},
             {"base", fib.uri, fib.name, {989.0, 1019.7}, 0.031}};
  r.warnings = {
      "head: results/4242.json: benchmark 'bench_old.cpp::broken' has 0 "
      "rounds: left out"};
  return r;
}

}  // namespace runner::testing
