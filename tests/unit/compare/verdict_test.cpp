// Verdicts of runner compare: each verdict reachable, the significance,
// threshold and confidence-interval conditions each decisive, unchanged
// only when the whole interval lies within the threshold (a wide one is
// inconclusive, with the change the data could have detected), the
// correction across benchmarks changing a verdict, inconclusive rows for
// too few rounds and bad numbers (never NaN in the output), the
// summary-stats path (Welch, as codspeed-cpp's results give) and the
// paired path.
#include "compare/verdict.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "compare/runs.hpp"

namespace runner::compare {
namespace {

using format::BenchmarkComparison;
using format::CompareSettings;
using format::CompareTest;
using format::Correction;
using format::Verdict;

// 20 distinct rounds from `low` in steps of `step` (shuffled order).
std::vector<double> rounds(double low, double step, size_t n = 20) {
  std::vector<double> times(n);
  for (size_t i = 0; i < n; ++i)
    times[i] = low + step * static_cast<double>((i * 7) % n);
  return times;
}

std::vector<double> scaled(std::vector<double> times, double factor) {
  for (double& t : times) t *= factor;
  return times;
}

SideSamples raw(std::vector<double> times) {
  SideSamples side;
  side.times_ns = std::move(times);
  side.source = format::SampleSource::kRounds;
  return side;
}

// A results JSON's stats block as codspeed-cpp writes it (no round arrays).
SideSamples summary(double mean, double stdev, uint64_t n, double median) {
  format::BenchmarkStats stats;
  stats.min_ns = mean - 3 * stdev;
  stats.max_ns = mean + 4 * stdev;
  stats.mean_ns = mean;
  stats.stdev_ns = stdev;
  stats.median_ns = median;  // no quartiles: Welch's t on the means
  stats.rounds = n;
  stats.total_time = mean * static_cast<double>(n) * 100 / 1e9;
  stats.iqr_outlier_rounds = 2;
  stats.stdev_outlier_rounds = 1;
  stats.iter_per_round = 100;
  stats.warmup_iters = 10;
  SideSamples side;
  side.summary = stats;
  side.source = format::SampleSource::kSummary;
  return side;
}

BenchmarkComparison decided(BenchmarkComparison b,
                            const CompareSettings& settings = {}) {
  std::vector<BenchmarkComparison> list{std::move(b)};
  apply_verdicts(list, settings);
  return list.front();
}

BenchmarkComparison tested(double p, double change, double low, double high) {
  BenchmarkComparison b;
  b.test = CompareTest::kMannWhitneyU;
  b.p_value_raw = p;
  b.change = change;
  b.ci_low = low;
  b.ci_high = high;
  return b;
}

bool no_outcome(const BenchmarkComparison& b) {
  return !b.change && !b.ci_low && !b.ci_high && !b.p_value && !b.p_value_raw &&
         b.test == CompareTest::kNone;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_SUITE("compare") {
  TEST_CASE(
      "verdict: a disturbed run (only the slow rounds moved) is inconclusive") {
    // Head: the fastest 14 rounds as in base, the other 26 40% slower, as when
    // another job takes the CPU for part of the run. The median moves by ~+40%,
    // the lower quartile does not.
    const std::vector<double> base = rounds(1000, 1, 40);
    std::vector<double> head = base;
    for (double& t : head)
      if (t >= 1014) t *= 1.4;
    const BenchmarkComparison c =
        decided(compare_benchmark(raw(base), raw(head), {}));
    REQUIRE(c.change);
    CHECK(*c.change > 0.05);
    REQUIRE(c.base.q1_ns);
    REQUIRE(c.head.q1_ns);
    CHECK(*c.head.q1_ns == *c.base.q1_ns);
    INFO(c.reason);
    CHECK(c.verdict == Verdict::kInconclusive);
    CHECK(contains(c.reason, "fastest quarter of the rounds"));
    CHECK(c.p_value);  // the numbers stay, for the record
    // The same shift on every round is a regression (the guard lets it be).
    const BenchmarkComparison shifted =
        decided(compare_benchmark(raw(base), raw(scaled(base, 1.1)), {}));
    CHECK(shifted.verdict == Verdict::kRegression);
    // Paired mode has no such guard (drift cancels in the pairs).
    CompareSettings paired;
    paired.paired = true;
    BenchmarkComparison b = tested(1e-6, 0.1, 0.08, 0.12);
    b.base.q1_ns = 100;
    b.head.q1_ns = 100;
    CHECK(decided(b, paired).verdict == Verdict::kRegression);
    CHECK(decided(b, {}).verdict == Verdict::kInconclusive);
  }

  TEST_CASE("verdict: a 20% slower head is a regression") {
    const std::vector<double> base = rounds(1000, 3);
    const BenchmarkComparison c =
        compare_benchmark(raw(base), raw(scaled(base, 1.2)), {});
    CHECK(c.test == CompareTest::kMannWhitneyU);
    REQUIRE(c.p_value_raw);
    CHECK(*c.p_value_raw < 1e-9);
    CHECK(c.p_value == c.p_value_raw);
    REQUIRE(c.change);
    CHECK(*c.change > 0.18);
    CHECK(*c.change < 0.22);
    CHECK(*c.ci_low > 0.1);
    CHECK(*c.ci_high < 0.3);
    CHECK(c.base.median_ns == 1028.5);
    CHECK(c.base.rounds == 20);
    CHECK(c.base.source == format::SampleSource::kRounds);
    CHECK(c.base.folders == 1);
    CHECK(c.head.stdev_ns);
    const BenchmarkComparison v = decided(c);
    CHECK(v.verdict == Verdict::kRegression);
    CHECK(v.reason ==
          "p = 1.5e-11 < 0.05 (Holm), +20.0% beyond the 5% threshold");
  }

  TEST_CASE("verdict: a 20% faster head is an improvement") {
    const std::vector<double> base = rounds(1000, 3);
    const BenchmarkComparison v =
        decided(compare_benchmark(raw(base), raw(scaled(base, 0.8)), {}));
    CHECK(v.verdict == Verdict::kImprovement);
    CHECK(*v.change < -0.18);
    CHECK(*v.ci_high < 0);
    CHECK(contains(v.reason, "-20.0% beyond the 5% threshold"));
  }

  TEST_CASE("verdict: the same rounds are unchanged") {
    const std::vector<double> base = rounds(1000, 3);
    const BenchmarkComparison v =
        decided(compare_benchmark(raw(base), raw(base), {}));
    CHECK(v.verdict == Verdict::kUnchanged);
    CHECK(*v.change == 0);
    CHECK(*v.ci_low >= -0.05);
    CHECK(*v.ci_high <= 0.05);
    INFO(v.reason);
    CHECK(v.reason.starts_with("95% interval ["));
    CHECK(
        v.reason.ends_with("] lies within \xC2\xB1"
                           "5%"));
  }

  TEST_CASE("verdict: change is the Hodges-Lehmann shift over median(base)") {
    std::vector<double> base, head;
    for (int t = 95; t <= 106; ++t) {
      base.push_back(t);
      head.push_back(t + 10);
    }
    const BenchmarkComparison c = compare_benchmark(raw(base), raw(head), {});
    CHECK(*c.change == doctest::Approx(10 / 100.5).epsilon(1e-14));
    // The differences are symmetric about 10, so is the interval.
    CHECK(*c.ci_high - *c.change ==
          doctest::Approx(*c.change - *c.ci_low).epsilon(1e-12));
    CHECK(*c.ci_low > 0);
  }

  TEST_CASE("verdict: the threshold decides a significant small change") {
    const std::vector<double> base = rounds(1000, 0.5);
    const BenchmarkComparison c =
        compare_benchmark(raw(base), raw(scaled(base, 1.03)), {});
    CHECK(*c.p_value_raw < 1e-9);
    CHECK(*c.change == doctest::Approx(0.03).epsilon(0.05));
    const BenchmarkComparison within = decided(c);
    CHECK(within.verdict == Verdict::kUnchanged);
    CHECK(within.reason ==
          "95% interval [+2.8%, +3.2%] lies within \xC2\xB1"
          "5%");
    CompareSettings low;
    low.threshold = 0.02;
    CHECK(decided(c, low).verdict == Verdict::kRegression);
  }

  TEST_CASE("verdict: the confidence interval must exclude 0") {
    const BenchmarkComparison slower = decided(tested(0.001, 0.1, -0.01, 0.2));
    CHECK(slower.verdict == Verdict::kInconclusive);
    CHECK(slower.reason ==
          "95% interval [-1.0%, +20.0%] reaches beyond \xC2\xB1"
          "5%: this data "
          "detects changes of about \xC2\xB1"
          "15.0% or more; more rounds or "
          "--paired narrow it");
    CHECK(decided(tested(0.001, 0.1, 0.01, 0.2)).verdict ==
          Verdict::kRegression);
    CHECK(decided(tested(0.001, -0.1, -0.2, 0.01)).verdict ==
          Verdict::kInconclusive);
    CHECK(decided(tested(0.001, -0.1, -0.2, -0.01)).verdict ==
          Verdict::kImprovement);
  }

  TEST_CASE("verdict: a p-value the normal tail rounds to 0 is below 1e-300") {
    const BenchmarkComparison v = decided(tested(0.0, 0.2, 0.199, 0.201));
    CHECK(v.verdict == Verdict::kRegression);
    CHECK(v.reason ==
          "p < 1e-300 < 0.05 (Holm), +20.0% beyond the 5% threshold");
  }

  TEST_CASE("verdict: significance is decisive") {
    CHECK(decided(tested(0.049, 0.1, 0.05, 0.15)).verdict ==
          Verdict::kRegression);
    const BenchmarkComparison v = decided(tested(0.05, 0.1, 0.05, 0.15));
    CHECK(v.verdict == Verdict::kInconclusive);
    CHECK(v.reason ==
          "95% interval [+5.0%, +15.0%] reaches beyond \xC2\xB1"
          "5%: this data detects changes of about \xC2\xB1"
          "7.1% or "
          "more; more rounds or --paired narrow it");
    // Two digits would print 0.05 for 0.0496: more are shown.
    CHECK(decided(tested(0.0496, 0.1, 0.05, 0.15)).reason ==
          "p = 0.0496 < 0.05 (Holm), +10.0% beyond the 5% threshold");
  }

  TEST_CASE("verdict: the correction across benchmarks changes verdicts") {
    std::vector<BenchmarkComparison> list = {
        tested(0.03, 0.1, 0.05, 0.15), tested(0.04, 0.1, 0.05, 0.15),
        compare_benchmark(raw({1, 2}), raw(rounds(1, 1)), {})};
    CompareSettings settings;
    settings.correction = Correction::kNone;
    apply_verdicts(list, settings);
    CHECK(list[0].verdict == Verdict::kRegression);
    CHECK(list[1].verdict == Verdict::kRegression);
    CHECK(*list[0].p_value == 0.03);
    settings.correction = Correction::kHolm;
    apply_verdicts(list, settings);
    // m = 2 (the inconclusive row has no p-value): 0.06 and 0.06.
    CHECK(*list[0].p_value == doctest::Approx(0.06));
    CHECK(*list[1].p_value == doctest::Approx(0.06));
    CHECK(*list[0].p_value_raw == 0.03);
    CHECK(list[0].verdict == Verdict::kInconclusive);
    CHECK(*list[1].p_value == doctest::Approx(0.06));
    CHECK(list[1].verdict == Verdict::kInconclusive);
    settings.correction = Correction::kBenjaminiHochberg;
    apply_verdicts(list, settings);
    CHECK(*list[0].p_value == doctest::Approx(0.04));
    CHECK(list[0].verdict == Verdict::kRegression);
    CHECK(contains(list[0].reason, "(Benjamini-Hochberg)"));
    CHECK(list[2].verdict == Verdict::kInconclusive);
    CHECK(list[2].reason == "2 rounds in base, need 6");
    CHECK_FALSE(list[2].p_value);
  }

  TEST_CASE("verdict: a wide interval is inconclusive, never unchanged") {
    // +20.4% [-10.1%, +42.5%], not significant: it could be anything from
    // 10% faster to 42% slower.
    BenchmarkComparison v = decided(tested(0.41, 0.204, -0.101, 0.425));
    CHECK(v.verdict == Verdict::kInconclusive);
    CHECK(v.reason ==
          "95% interval [-10.1%, +42.5%] reaches beyond \xC2\xB1"
          "5%: this data detects changes of about \xC2\xB1"
          "37.6% "
          "or more; more rounds or --paired narrow it");
    // Half-width 0.263 = 1.96 se; max(5%, 1.96 se) + z(0.80) se.
    REQUIRE(v.detectable_change);
    CHECK(*v.detectable_change == doctest::Approx(0.3759339).epsilon(1e-6));
    CompareSettings paired;
    paired.paired = true;
    CHECK(decided(tested(0.41, 0.204, -0.101, 0.425), paired)
              .reason.ends_with("more pairs (--pairs) narrow it"));
    // A stricter alpha needs a larger change: z(0.995) se + z(0.80) se.
    CompareSettings strict;
    strict.alpha = 0.01;
    CHECK(*decided(tested(0.41, 0.204, -0.101, 0.425), strict)
               .detectable_change == doctest::Approx(0.4585745).epsilon(1e-6));
    // Significant, but the interval reaches past the threshold on one side
    // and the change is within it: neither a regression nor unchanged.
    v = decided(tested(0.001, 0.04, 0.01, 0.07));
    CHECK(v.verdict == Verdict::kInconclusive);
    CHECK(v.reason.starts_with(
        "95% interval [+1.0%, +7.0%] reaches beyond \xC2\xB1"
        "5%: this data "
        "detects changes of about \xC2\xB1"
        "6.3% or more"));
    // Real rounds of the same program with a wide spread (A/A): no false
    // alarm, and no false reassurance either.
    const std::vector<double> noisy = rounds(1000, 40);
    std::vector<double> again = noisy;
    std::reverse(again.begin(), again.end());
    v = decided(compare_benchmark(raw(noisy), raw(again), {}));
    CHECK(*v.change == 0);
    CHECK(*v.ci_high > 0.05);
    CHECK(v.verdict == Verdict::kInconclusive);
    CHECK(contains(v.reason, "this data detects changes of about"));
    CHECK(*v.detectable_change > *v.ci_high);
  }

  TEST_CASE(
      "verdict: unchanged when the whole interval is within the threshold") {
    BenchmarkComparison v = decided(tested(0.41, 0.01, -0.02, 0.03));
    CHECK(v.verdict == Verdict::kUnchanged);
    CHECK(v.reason ==
          "95% interval [-2.0%, +3.0%] lies within \xC2\xB1"
          "5%");
    REQUIRE(v.detectable_change);
    CHECK(*v.detectable_change == doctest::Approx(0.0607352).epsilon(1e-6));
    // The bounds may touch the threshold, not cross it.
    CHECK(decided(tested(0.5, 0, -0.05, 0.05)).verdict == Verdict::kUnchanged);
    CHECK(decided(tested(0.5, 0, -0.05, 0.0501)).verdict ==
          Verdict::kInconclusive);
    CHECK(decided(tested(0.5, 0, -0.0501, 0.05)).verdict ==
          Verdict::kInconclusive);
    // A narrow interval: the threshold is what a verdict needs first.
    v = decided(tested(0.5, 0, -0.001, 0.001));
    CHECK(*v.detectable_change == doctest::Approx(0.0504294).epsilon(1e-6));
    CompareSettings wider;
    wider.threshold = 0.1;
    CHECK(decided(tested(0.41, 0.05, -0.04, 0.09), wider).verdict ==
          Verdict::kUnchanged);
    // No test, no detectable change.
    CHECK_FALSE(
        decided(compare_benchmark(raw({1, 2, 3}), raw(rounds(1, 1)), {}))
            .detectable_change);
  }

  TEST_CASE("verdict: too few rounds are inconclusive, never a guess") {
    const SideSamples many = raw(rounds(1000, 3));
    BenchmarkComparison c = compare_benchmark(raw({1, 2, 3}), many, {});
    CHECK(c.reason == "3 rounds in base, need 6");
    CHECK(no_outcome(c));
    CHECK(c.base.median_ns == 2);
    CHECK(c.base.rounds == 3);
    c = decided(c);
    CHECK(c.verdict == Verdict::kInconclusive);
    CHECK(c.reason == "3 rounds in base, need 6");
    CHECK(compare_benchmark(raw({1, 2, 3}), raw({5}), {}).reason ==
          "3 rounds in base and 1 round in head, need 6");
    CHECK(compare_benchmark(SideSamples{}, many, {}).reason ==
          "0 rounds in base, need 6");
    CompareSettings strict;
    strict.min_rounds = 30;
    CHECK(compare_benchmark(many, many, strict).reason ==
          "20 rounds in base and 20 rounds in head, need 30");
    CompareSettings lax;
    lax.min_rounds = 0;
    CHECK(compare_benchmark(raw({5}), many, lax).reason ==
          "1 round in base, need 2");
    CHECK(compare_benchmark(summary(100, 1, 4, 100), many, {}).reason ==
          "4 rounds in base, need 6");
  }

  TEST_CASE(
      "verdict: NaN, infinite, zero and negative times are inconclusive") {
    const std::vector<double> good = rounds(1000, 3);
    std::vector<double> bad = good;
    bad[1] = std::nan("");
    BenchmarkComparison c = compare_benchmark(raw(bad), raw(good), {});
    CHECK(c.reason == "base: round 2 time is NaN");
    CHECK(no_outcome(c));
    CHECK_FALSE(c.base.median_ns);
    CHECK_FALSE(c.base.mean_ns);
    CHECK(c.head.median_ns);
    bad[1] = -5;
    CHECK(compare_benchmark(raw(good), raw(bad), {}).reason ==
          "head: round 2 time is negative (-5 ns)");
    bad[1] = 0;
    CHECK(compare_benchmark(raw(bad), raw(good), {}).reason ==
          "base: round 2 time is 0");
    bad[1] = INFINITY;
    CHECK(compare_benchmark(raw(bad), raw(good), {}).reason ==
          "base: round 2 time is infinite");
    c = compare_benchmark(summary(NAN, 1, 10, 100), raw(good), {});
    CHECK(c.reason == "base: mean time is NaN");
    CHECK_FALSE(c.base.mean_ns);
    CHECK(decided(c).verdict == Verdict::kInconclusive);
    CHECK(compare_benchmark(raw(good), summary(100, -1, 10, 100), {}).reason ==
          "head: stdev is negative (-1 ns)");
    CHECK(compare_benchmark(summary(0, 0, 10, 0), raw(good), {}).reason ==
          "base: mean time is 0");
  }

  TEST_CASE("verdict: one folder's quartiles use the median test") {
    // Like tinybench: HEAD 20% slower in the middle of its rounds, but
    // outlier rounds put BASE's mean far above its median, so that the
    // means differ by only 7.7%.
    SideSamples base = summary(5.2, 0.5, 100, 4.8),
                head = summary(5.6, 0.5, 100, 5.76);
    base.summary->q1_ns = 4.6;
    base.summary->q3_ns = 5.0;
    head.summary->q1_ns = 5.52;
    head.summary->q3_ns = 6.0;
    BenchmarkComparison c = compare_benchmark(base, head, {});
    CHECK(c.test == CompareTest::kMedianQuartiles);
    // Computed apart (python3, statistics.NormalDist): SE of a median
    // sqrt(pi/2) * IQR / 1.3489795 / sqrt(n).
    CHECK(*c.change == doctest::Approx(0.2).epsilon(1e-12));
    CHECK(*c.ci_low == doctest::Approx(0.17629628882896797).epsilon(1e-9));
    CHECK(*c.ci_high == doctest::Approx(0.22370371117103202).epsilon(1e-9));
    CHECK(*c.p_value_raw < 1e-10);
    CHECK(decided(c).verdict == Verdict::kRegression);
    // Pooled folders have no quartiles of their own: Welch's t on means.
    base.folders = 2;
    c = compare_benchmark(base, head, {});
    CHECK(c.test == CompareTest::kWelchT);
    CHECK(*c.change == doctest::Approx(0.4 / 5.2).epsilon(1e-12));
    // Quartiles that do not hold the median are not used either.
    base.folders = 1;
    base.summary->q1_ns = 4.9;
    CHECK(compare_benchmark(base, head, {}).test == CompareTest::kWelchT);
  }

  TEST_CASE("verdict: summary stats without quartiles use Welch's t") {
    const SideSamples base = summary(1000, 20, 100, 998);
    BenchmarkComparison c =
        compare_benchmark(base, summary(1100, 25, 100, 1097), {});
    CHECK(c.test == CompareTest::kWelchT);
    CHECK(*c.change == doctest::Approx(0.1).epsilon(1e-12));
    // SE = sqrt(4 + 6.25), df = 188.9, t(0.975) = 1.9728: +-0.632%.
    CHECK(*c.ci_low == doctest::Approx(0.1 - 0.006316).epsilon(1e-4));
    CHECK(*c.ci_high == doctest::Approx(0.1 + 0.006316).epsilon(1e-4));
    CHECK(*c.p_value_raw < 1e-10);
    CHECK(c.base.median_ns == 998);
    CHECK(c.base.mean_ns == 1000);
    CHECK(c.base.stdev_ns == 20);
    CHECK(c.base.rounds == 100);
    CHECK(c.base.source == format::SampleSource::kSummary);
    CHECK(decided(c).verdict == Verdict::kRegression);
    c = decided(compare_benchmark(base, summary(1001, 20, 100, 999), {}));
    CHECK(c.verdict == Verdict::kUnchanged);
    CHECK(*c.p_value > 0.5);
    CHECK(*c.change == doctest::Approx(0.001).epsilon(1e-9));
  }

  TEST_CASE("verdict: raw rounds against a summary use the rounds' mean") {
    const std::vector<double> base = rounds(1000, 3);  // mean 1028.5
    const BenchmarkComparison c =
        compare_benchmark(raw(base), summary(1131.35, 20, 50, 1131), {});
    CHECK(c.test == CompareTest::kWelchT);
    CHECK(*c.change == doctest::Approx(0.1).epsilon(1e-12));
    CHECK(c.base.rounds == 20);
    CHECK(c.head.rounds == 50);
    CHECK(decided(c).verdict == Verdict::kRegression);
  }

  TEST_CASE("verdict: a zero standard error gives no NaN") {
    BenchmarkComparison c = compare_benchmark(summary(500, 0, 10, 500),
                                              summary(500, 0, 10, 500), {});
    CHECK(*c.p_value_raw == 1);
    CHECK(*c.change == 0);
    CHECK(*c.ci_low == 0);
    CHECK(decided(c).verdict == Verdict::kUnchanged);
    c = compare_benchmark(summary(500, 0, 10, 500), summary(550, 0, 10, 550),
                          {});
    CHECK(*c.p_value_raw == 0);
    CHECK(*c.ci_low == doctest::Approx(0.1));
    CHECK(*c.ci_high == doctest::Approx(0.1));
    CHECK(decided(c).verdict == Verdict::kRegression);
    const std::vector<double> flat(10, 7.0);
    c = decided(compare_benchmark(raw(flat), raw(flat), {}));
    CHECK(*c.p_value == 1);
    CHECK(c.verdict == Verdict::kUnchanged);
  }

  TEST_CASE("verdict: an invalid confidence falls back to 95%") {
    const std::vector<double> base = rounds(1000, 3);
    const std::vector<double> head = scaled(base, 1.1);
    CompareSettings odd;
    odd.confidence = 2;
    const BenchmarkComparison a = compare_benchmark(raw(base), raw(head), odd);
    const BenchmarkComparison b = compare_benchmark(raw(base), raw(head), {});
    CHECK(*a.ci_low == *b.ci_low);
    CHECK(*a.ci_high == *b.ci_high);
  }

  TEST_CASE("verdict: paired rounds use Wilcoxon's signed-rank test") {
    const std::vector<double> base = rounds(1000, 3, 12);
    std::vector<double> head = base;
    for (double& t : head) t += 10;
    BenchmarkComparison c = compare_paired(base, head, {});
    CHECK(c.test == CompareTest::kWilcoxonSignedRank);
    // All 12 differences are 10: the shift and its interval are exactly 10.
    CHECK(*c.change == doctest::Approx(10 / 1016.5).epsilon(1e-14));
    CHECK(*c.ci_low == *c.change);
    CHECK(*c.ci_high == *c.change);
    CHECK(*c.p_value_raw < 0.001);
    CHECK(c.base.source == format::SampleSource::kPaired);
    CHECK(c.base.rounds == 12);
    CompareSettings low;
    low.threshold = 0.005;
    CHECK(decided(c, low).verdict == Verdict::kRegression);
    CHECK(decided(c).verdict == Verdict::kUnchanged);
    c = decided(compare_paired(base, scaled(base, 0.9), {}));
    CHECK(c.verdict == Verdict::kImprovement);
    CHECK(*c.change == doctest::Approx(-0.1).epsilon(0.02));
  }

  TEST_CASE("verdict: paired rounds that cannot be tested are inconclusive") {
    const std::vector<double> base = rounds(1000, 3, 10);
    std::vector<double> head = rounds(1000, 3, 9);
    CHECK(compare_paired(base, head, {}).reason ==
          "10 rounds in base but 9 rounds in head: pairs must match");
    const std::vector<double> three = {1, 2, 3};
    CHECK(compare_paired(three, three, {}).reason == "3 pairs, need 6");
    head = base;
    head[0] = NAN;
    const BenchmarkComparison c = compare_paired(base, head, {});
    CHECK(c.reason == "head: round 1 time is NaN");
    CHECK(no_outcome(c));
  }

  TEST_CASE("verdict: one value per run (--metric cpu) uses the runs alone") {
    const auto runs = [](std::vector<double> values) {
      SideSamples side;
      side.source = format::SampleSource::kRuns;
      side.folder_medians_ns = std::move(values);
      side.folders = side.folder_medians_ns.size();
      return side;
    };
    CompareSettings settings;
    settings.metric = format::Metric::kCpu;
    // One run per side: a ratio, but no spread to hold it against.
    const BenchmarkComparison one =
        compare_benchmark(runs({1000}), runs({1200}), settings);
    CHECK(no_outcome(one));
    CHECK(contains(one.reason, "one value per run on each side"));
    CHECK(one.base.rounds == 1);
    // Three runs per side: the run-level test is the verdict's test.
    const std::vector<double> b3{1000, 1010, 990}, h3{1200, 1190, 1215};
    const BenchmarkComparison three =
        compare_benchmark(runs(b3), runs(h3), settings);
    const auto expected = run_level_test(b3, h3, settings.confidence);
    REQUIRE(expected);
    CHECK(three.test == CompareTest::kWelchT);
    CHECK(three.noise == format::NoiseSource::kRuns);
    REQUIRE(three.change);
    CHECK(*three.change == doctest::Approx(expected->change));
    CHECK(*three.ci_low == doctest::Approx(expected->ci_low));
    CHECK(*three.p_value_raw == doctest::Approx(expected->p_value));
    CHECK(three.base.median_ns == doctest::Approx(1000));
    CHECK(three.head.rounds == 3);
    CHECK(three.base.source == format::SampleSource::kRuns);
    CHECK(decided(three, settings).verdict == Verdict::kRegression);
    // A run value that is not a time.
    const BenchmarkComparison bad =
        compare_benchmark(runs({1000, -1}), runs(h3), settings);
    CHECK(no_outcome(bad));
    CHECK(contains(bad.reason, "base: round 2 time is negative"));
  }

  TEST_CASE("verdict: a metric missing on a side, instructions not alike") {
    CompareSettings settings;
    settings.metric = format::Metric::kInstructions;
    SideSamples base = raw(rounds(1000, 10)), head = raw(rounds(1200, 10));
    base.unavailable = "base folder 'a': t::x: no instructions per iteration";
    BenchmarkComparison c = compare_benchmark(base, head, settings);
    CHECK(no_outcome(c));
    CHECK(c.reason == base.unavailable);
    base.unavailable.clear();
    head.user_only = true;
    c = compare_benchmark(base, head, settings);
    CHECK(no_outcome(c));
    CHECK(contains(c.reason, "user space only on the head side"));
    settings.metric = format::Metric::kCpu;  // task-clock: never user-only
    c = compare_benchmark(base, head, settings);
    CHECK(c.test == CompareTest::kMannWhitneyU);
  }

  TEST_CASE("verdict: an interleaved run's advice is more rounds") {
    CompareSettings settings;
    settings.paired = true;
    BenchmarkComparison b = tested(0.3, 0.04, -0.2, 0.3);
    CHECK(contains(decided(b, settings).reason, "more pairs (--pairs)"));
    b.base.folders = b.head.folders = 1;  // one interleaved folder
    const std::string reason = decided(b, settings).reason;
    CHECK(contains(reason, "more rounds (runner exec --interleave"));
    CHECK_FALSE(contains(reason, "--pairs"));
  }

  TEST_CASE("verdict: relative spread of per-folder medians") {
    CHECK(relative_spread(std::vector<double>{100, 110, 105}) ==
          doctest::Approx(0.1));
    CHECK(relative_spread(std::vector<double>{}) == 0);
    CHECK(relative_spread(std::vector<double>{5}) == 0);
    CHECK(relative_spread(std::vector<double>{0, 1}) == 0);
    CHECK(relative_spread(std::vector<double>{100, NAN, 120}) ==
          doctest::Approx(0.2));
  }
}

}  // namespace
}  // namespace runner::compare
