// history's change points on synthetic run histories
// (bench/history/synthetic.hpp, 2% lognormal noise unless said): the two
// steps of the goal at their runs with intervals that hold the true step,
// the rates over 200 seeds (the bench measures them over 1000), outliers
// and short series that give no change point, constant series without a
// division by zero, steps below min_change dropped, and bad values left
// out.
#include "history/change_points.hpp"

#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <vector>

#include <doctest/doctest.h>

#include "bench/history/synthetic.hpp"

namespace runner::history {
namespace {

using bench::StepAt;
using bench::synthetic_series;

const std::vector<StepAt> kTwoSteps = {{20, 0.03}, {40, 0.10}};

bool near(size_t start, size_t run, size_t runs) {
  return start + runs >= run && start <= run + runs;
}

bool holds(const Step& step, double change) {
  return step.low <= change && change <= step.high;
}

TEST_SUITE("history") {
  TEST_CASE("+3% and +10% steps in 2% noise: found at their runs") {
    const std::vector<double> values = synthetic_series(60, 0.02, kTwoSteps, 1);
    const std::vector<Step> steps = find_change_points(values, {});
    REQUIRE(steps.size() == 2);
    CHECK(near(steps[0].start, 20, 1));
    CHECK(near(steps[1].start, 40, 1));
    for (size_t i = 0; i < 2; ++i) {
      const Step& s = steps[i];
      CHECK(holds(s, kTwoSteps[i].change));
      CHECK(s.low < s.change);
      CHECK(s.change < s.high);
      CHECK(s.change == doctest::Approx(s.after / s.before - 1));
      CHECK(s.p_value < 0.002);
    }
    CHECK(steps[0].before == doctest::Approx(1000).epsilon(0.02));
    CHECK(steps[1].after == doctest::Approx(1133).epsilon(0.02));
  }

  TEST_CASE("over 200 seeds: few false steps, most steps found, intervals") {
    size_t flat = 0, small = 0, large = 0, covered = 0, described = 0;
    for (uint64_t seed = 1; seed <= 200; ++seed) {
      flat +=
          !find_change_points(synthetic_series(60, 0.02, {}, seed), {}).empty();
      const std::vector<Step> steps =
          find_change_points(synthetic_series(60, 0.02, kTwoSteps, seed), {});
      bool found_small = false, found_large = false;
      for (const Step& s : steps) {
        found_small |= s.change > 0 && near(s.start, 20, 5);
        found_large |= s.change > 0 && near(s.start, 40, 1);
        if (s.start == 40) ++described, covered += holds(s, 0.10);
      }
      small += found_small, large += found_large;
    }
    CHECK(flat <= 10);    // ≤ 5%
    CHECK(small >= 170);  // ≥ 85%
    CHECK(large >= 198);  // ≥ 99%
    CHECK(static_cast<double>(covered) >= 0.9 * static_cast<double>(described));
  }

  TEST_CASE("one wild run, or two, is not a change") {
    DetectSettings outliers_only;
    outliers_only.max_p_value =
        1;  // the outlier filter alone, not Welch's test
    for (uint64_t seed = 1; seed <= 10; ++seed) {
      const std::vector<double> flat = synthetic_series(60, 0.005, {}, seed);
      for (size_t at :
           {size_t{0}, size_t{1}, size_t{30}, size_t{58}, size_t{59}}) {
        CAPTURE(seed);
        CAPTURE(at);
        std::vector<double> values = flat;
        values[at] *= 1.5;
        CHECK(find_change_points(values, {}).empty());
        CHECK(find_change_points(values, outliers_only).empty());
        if (at + 1 < values.size()) values[at + 1] *= 1.4;
        CHECK(find_change_points(values, outliers_only).empty());
      }
    }
  }

  TEST_CASE("stretches of higher noise are not steps") {
    // 1000 runs whose noise alternates between 1% and 3% every 50 runs:
    // the noisier stretches' extreme runs are not taken for outliers
    // (which would make them look steady, and their level different).
    size_t with_steps = 0;
    for (uint64_t seed = 1; seed <= 40; ++seed) {
      bench::Random random(seed);
      std::vector<double> values(1000);
      for (size_t i = 0; i < values.size(); ++i)
        values[i] =
            1000 * std::exp(((i / 50) % 2 ? 0.01 : 0.03) * random.normal());
      with_steps += !find_change_points(values, {}).empty();
    }
    CHECK(with_steps <= 10);
  }

  TEST_CASE("too few points: no change") {
    const std::vector<double> values = {100, 100, 100, 200, 200, 200};
    for (size_t n = 0; n < 6; ++n) {
      CAPTURE(n);
      CHECK(find_change_points(std::span(values).first(n), {}).empty());
    }
  }

  TEST_CASE("constant series and constant levels") {
    CHECK(find_change_points(std::vector<double>(1000, 5.0), {}).empty());
    std::vector<double> values(60, 1000.0);
    for (size_t i = 30; i < 60; ++i) values[i] = 1050;
    const std::vector<Step> steps = find_change_points(values, {});
    REQUIRE(steps.size() == 1);
    CHECK(steps[0].start == 30);
    CHECK(steps[0].change == doctest::Approx(0.05));
    CHECK(steps[0].low == doctest::Approx(0.05));
    CHECK(steps[0].high == doctest::Approx(0.05));
    CHECK(steps[0].p_value == 0);
    // Repeated values with a rare one-unit tick: still nothing.
    std::vector<double> ticks(100, 1000.0);
    for (size_t i = 7; i < 100; i += 13) ticks[i] = 1001;
    CHECK(find_change_points(ticks, {}).empty());
  }

  TEST_CASE("a step smaller than min_change is not reported") {
    const std::vector<double> values =
        synthetic_series(60, 0.001, {{30, 0.008}}, 3);
    CHECK(find_change_points(values, {}).empty());
    DetectSettings finer;
    finer.min_change = 0.005;
    const std::vector<Step> steps = find_change_points(values, finer);
    REQUIRE(steps.size() == 1);
    CHECK(near(steps[0].start, 30, 1));
    CHECK(holds(steps[0], 0.008));
  }

  TEST_CASE("long series: every step, and the same answer twice") {
    std::vector<StepAt> every_1000;
    for (size_t run = 1000; run < 10000; run += 1000)
      every_1000.push_back({run, run % 2000 == 0 ? -0.1 : 0.1});
    const std::vector<double> values =
        synthetic_series(10000, 0.02, every_1000, 5);
    const std::vector<Step> steps = find_change_points(values, {});
    REQUIRE(steps.size() == every_1000.size());
    for (size_t i = 0; i < steps.size(); ++i) {
      CHECK(near(steps[i].start, every_1000[i].run, 1));
      CHECK(std::abs(steps[i].change - every_1000[i].change) < 0.03);
    }
    const std::vector<Step> again = find_change_points(values, {});
    REQUIRE(again.size() == steps.size());
    for (size_t i = 0; i < steps.size(); ++i) {
      CHECK(again[i].start == steps[i].start);
      CHECK(again[i].change == steps[i].change);
    }
  }

  TEST_CASE("values that are not positive finite numbers are left out") {
    std::vector<double> values(60, 1000.0);
    for (size_t i = 30; i < 60; ++i) values[i] = 2000;
    for (double bad : {0.0, -1.0, std::numeric_limits<double>::quiet_NaN(),
                       std::numeric_limits<double>::infinity()}) {
      CAPTURE(bad);
      std::vector<double> with_bad = values;
      with_bad[10] = with_bad[29] = with_bad[45] = bad;
      const std::vector<Step> steps = find_change_points(with_bad, {});
      REQUIRE(steps.size() == 1);
      CHECK(steps[0].start == 30);
      CHECK(steps[0].change == doctest::Approx(1));
      CHECK(find_change_points(std::vector<double>(60, bad), {}).empty());
    }
  }
}

}  // namespace
}  // namespace runner::history
