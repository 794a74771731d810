// Runs as the unit of replication (compare/runs.hpp): the run-level test
// on per-run medians and the history test, against numbers computed
// independently (mpmath, 40 digits: the t distribution's density
// integrated numerically, its quantile by root finding; the script is
// below), checked to 1e-9; and through compare_benchmark, pooled rounds
// that are tight within each run but whose runs differ by 10% are no
// longer a confident regression.
//
//   from mpmath import mp, mpf, log, sqrt, exp, findroot, quad, gamma, pi, inf
//   mp.dps = 40
//   def t_cdf(t, df):
//       c = gamma((df+1)/2)/(sqrt(df*pi)*gamma(df/2))
//       f = lambda x: c*(1+x*x/df)**(-(df+1)/2)
//       return quad(f, [-inf, 0, t]) if t > 0 else quad(f, [-inf, t])
//   def t_q(p, df): return findroot(lambda x: t_cdf(x, df) - p, mpf(2))
//   def mean(v): return sum(v)/len(v)
//   def var(v): m = mean(v); return sum((x-m)**2 for x in v)/(len(v)-1)
//   c = mpf('0.95')
//   # Welch on logs: base [1000,1050,1100], head [1100,1150,1210]
//   vx, vy = var(x)/len(x), var(y)/len(y); se = sqrt(vx+vy)
//   df = (vx+vy)**2/(vx**2/(len(x)-1)+vy**2/(len(y)-1)); d = mean(y)-mean(x)
//   half = t_q(1-(1-c)/2, df)*se; p = 2*t_cdf(-abs(d/se), df)
//   change, lo, hi = exp(d)-1, exp(d-half)-1, exp(d+half)-1
//   pooled sd = sqrt(((nx-1)var(x)+(ny-1)var(y))/(nx+ny-2))
//   # one run against n: s = sd(logs of the n), se = s*sqrt(1/n+1), df = n-1
//   # history: s = sd(log h), se = sqrt(2)*s, L = log(1+change), df = n-1
#include "compare/runs.hpp"

#include <cmath>
#include <vector>

#include <doctest/doctest.h>

#include "compare/verdict.hpp"

namespace runner::compare {
namespace {

using format::NoiseSource;
using format::RunLevelStats;
using format::Verdict;

constexpr double kTolerance = 1e-9;

void check_near(double actual, double expected, const char* what) {
  INFO(what << ": " << actual << " vs " << expected);
  CHECK(std::fabs(actual - expected) <= kTolerance);
}

struct Expected {
  double change, low, high, p, log_stdev;
};

void check_runs(const RunLevelStats& r, const Expected& e) {
  check_near(r.change, e.change, "change");
  check_near(r.ci_low, e.low, "ci_low");
  check_near(r.ci_high, e.high, "ci_high");
  check_near(r.p_value, e.p, "p");
  check_near(r.log_stdev, e.log_stdev, "log_stdev");
}

// `runs` runs of 20 rounds, each tight (0.1% apart) around its own median.
SideSamples runs_of(const std::vector<double>& medians) {
  SideSamples side;
  side.source = format::SampleSource::kRounds;
  side.folders = medians.size();
  for (const double m : medians) {
    for (int i = 0; i < 20; ++i)
      side.times_ns.push_back(m * (1 + 0.0001 * ((i * 7) % 20 - 10)));
    side.folder_medians_ns.push_back(m);
  }
  return side;
}

format::BenchmarkComparison decided(format::BenchmarkComparison b) {
  std::vector<format::BenchmarkComparison> list{std::move(b)};
  apply_verdicts(list, {});
  return list.front();
}

TEST_SUITE("compare") {
  TEST_CASE("runs: Welch's t on the log run medians, 3 + 3 runs") {
    auto r = run_level_test(std::vector<double>{1000, 1050, 1100},
                            std::vector<double>{1100, 1150, 1210}, 0.95);
    REQUIRE(r);
    CHECK(r->base_runs == 3);
    CHECK(r->head_runs == 3);
    CHECK(r->history_runs == 0);
    check_runs(
        *r, {0.098410402409662709, -0.014113292482691225, 0.22377693392379478,
             0.073451178542893723, 0.047675282311841909});
  }

  TEST_CASE("runs: one run against several takes the several runs' spread") {
    auto head_many =
        run_level_test(std::vector<double>{1000},
                       std::vector<double>{1080, 1120, 1100, 1150}, 0.95);
    REQUIRE(head_many);
    check_runs(*head_many,
               {0.11220047422474982, 0.011135520394198644, 0.22336706595324507,
                0.038026069295587232, 0.02677466533291242});
    auto base_many = run_level_test(std::vector<double>{1000, 1040, 990},
                                    std::vector<double>{1100}, 0.95);
    REQUIRE(base_many);
    CHECK(base_many->base_runs == 3);
    CHECK(base_many->head_runs == 1);
    check_runs(*base_many, {0.089356026969942966, -0.042818309991149375,
                            0.23978192007075089, 0.10441024944996742,
                            0.026034944021605959});
  }

  TEST_CASE("runs: no run-level test without two runs or with bad medians") {
    CHECK(!run_level_test(std::vector<double>{1000}, std::vector<double>{1100},
                          0.95));
    CHECK(!run_level_test(std::vector<double>{1000, NAN},
                          std::vector<double>{1100, 1200}, 0.95));
    CHECK(!run_level_test(std::vector<double>{1000, 0},
                          std::vector<double>{1100, 1200}, 0.95));
    CHECK(!run_level_test(std::vector<double>{1000, -5},
                          std::vector<double>{1100, 1200}, 0.95));
    // Identical runs: no spread, the point (the rounds then decide).
    auto same = run_level_test(std::vector<double>{1000, 1000},
                               std::vector<double>{1100, 1100}, 0.95);
    REQUIRE(same);
    check_near(same->ci_low, 0.1, "ci_low");
    check_near(same->ci_high, 0.1, "ci_high");
    CHECK(same->p_value == 0);
  }

  TEST_CASE("runs: the history's spread widens a one-run-per-side interval") {
    format::BenchmarkComparison rounds;
    rounds.change = 0.08;
    rounds.ci_low = 0.06;
    rounds.ci_high = 0.10;
    rounds.p_value = rounds.p_value_raw = 1e-6;
    auto r = history_test(
        rounds, std::vector<double>{1000, 1030, 980, 1060, 1010}, 0.95);
    REQUIRE(r);
    CHECK(r->history_runs == 5);
    check_runs(*r, {0.08, -0.039579210854628278, 0.21446767206894638,
                    0.14272081381705117, 0.029885449741405753});
    // Fewer than 3 usable values: not estimated.
    CHECK(!history_test(rounds, std::vector<double>{1000, 1030}, 0.95));
    CHECK(
        !history_test(rounds, std::vector<double>{1000, 1030, INFINITY}, 0.95));
  }

  // The calibration's failure: 3 + 3 runs pooled, each run's rounds within
  // 0.1%, the runs up to 10% apart from each other. The pooled rounds alone say
  // +9.5% in a narrow interval (a regression); the runs allow -1% to +22%.
  TEST_CASE("runs: pooled tight rounds of noisy runs are not a regression") {
    const SideSamples base = runs_of({1000, 1050, 1100});
    const SideSamples head = runs_of({1100, 1150, 1210});
    SideSamples base_pooled = base, head_pooled = head;
    base_pooled.folder_medians_ns.clear();
    head_pooled.folder_medians_ns.clear();
    const auto rounds_only =
        decided(compare_benchmark(base_pooled, head_pooled, {}));
    CHECK(rounds_only.verdict == Verdict::kRegression);  // what pooling said

    const auto c = decided(compare_benchmark(base, head, {}));
    INFO(c.reason);
    CHECK(c.verdict == Verdict::kInconclusive);
    CHECK(c.noise == NoiseSource::kRuns);
    REQUIRE(c.runs);
    REQUIRE(c.ci_low);
    check_near(*c.ci_low, c.runs->ci_low, "ci_low is the runs'");
    CHECK(*c.p_value_raw >= c.runs->p_value);
    CHECK(*c.p_value_raw >= *rounds_only.p_value_raw);
    CHECK(c.reason.find("(spread between 3 + 3 runs)") != std::string::npos);
    CHECK(c.reason.find("more runs per side") != std::string::npos);
  }

  TEST_CASE("runs: one run against three takes the three runs' spread") {
    const auto c = decided(
        compare_benchmark(runs_of({1000, 1050, 1100}), runs_of({1150}), {}));
    INFO(c.reason);
    CHECK(c.noise == NoiseSource::kRuns);
    CHECK(c.verdict == Verdict::kInconclusive);
    CHECK(c.reason.find("(spread between 3 + 1 runs, the base runs' spread "
                        "standing for both sides)") != std::string::npos);
  }

  TEST_CASE("runs: quiet runs leave the rounds' interval deciding") {
    // Runs 0.001% apart, rounds 0.1% apart: the rounds' interval is wider.
    const auto c =
        decided(compare_benchmark(runs_of({1000, 1000.01, 999.99}),
                                  runs_of({1200, 1200.01, 1199.99}), {}));
    CHECK(c.verdict == Verdict::kRegression);
    CHECK(c.noise == NoiseSource::kRounds);
    REQUIRE(c.runs);
  }

  TEST_CASE("runs: one run per side without history is not estimated") {
    const auto c =
        decided(compare_benchmark(runs_of({1000}), runs_of({1200}), {}));
    CHECK(c.verdict == Verdict::kRegression);
    CHECK(c.noise == NoiseSource::kNotEstimated);
    CHECK(!c.runs);
    // With a history whose runs vary by 5-10%, +20% stays a regression
    // only when the history allows it; +8% does not.
    const std::vector<double> history{1000, 1100, 950, 1050, 1000};
    const auto wide = decided(
        compare_benchmark(runs_of({1000}), runs_of({1080}), {}, history));
    CHECK(wide.noise == NoiseSource::kHistory);
    CHECK(wide.verdict == Verdict::kInconclusive);
    REQUIRE(wide.runs);
    CHECK(wide.runs->history_runs == 5);
    CHECK(wide.reason.find("5 stored runs of the base branch") !=
          std::string::npos);
    const auto narrow =
        decided(compare_benchmark(runs_of({1000}), runs_of({1080}), {}));
    CHECK(narrow.verdict == Verdict::kRegression);
  }
}

}  // namespace
}  // namespace runner::compare
