// compare's statistics pinned against published worked examples (R's
// ?wilcox.test and ?t.test examples, Wikipedia's Welch example, p.adjust),
// table quantiles, the tie paths (expected values computed by hand from the
// rank-test formulas), the selection against brute-force enumeration, and
// symmetry properties.
#include "compare/stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>
#include <vector>

#include <doctest/doctest.h>

namespace runner::compare::stats {
namespace {

// Hollander & Wolfe p. 69 (R ?wilcox.test): the two-sample example.
const std::vector<double> kRankX = {0.80, 0.83, 1.89, 1.04, 1.45,
                                    1.38, 1.91, 1.64, 0.73, 1.46};
const std::vector<double> kRankY = {1.15, 0.88, 0.90, 0.74, 1.21};
// Hollander & Wolfe p. 29 (R ?wilcox.test): the paired example.
const std::vector<double> kPairedX = {1.83, 0.50, 1.62, 2.48, 1.68,
                                      1.88, 1.55, 3.06, 1.30};
const std::vector<double> kPairedY = {0.878, 0.647, 0.598, 2.05, 1.06,
                                      1.29,  1.06,  3.14,  1.29};
// Student's sleep data (R ?t.test).
const std::vector<double> kSleep1 = {0.7, -1.6, -0.2, -1.2, -0.1,
                                     3.4, 3.7,  0.8,  0.0,  2.0};
const std::vector<double> kSleep2 = {1.9, 0.8, 1.1, 0.1, -0.1,
                                     4.4, 5.5, 1.6, 4.6, 3.4};
// Wikipedia "Welch's t-test", example 1.
const std::vector<double> kWikiA1 = {27.5, 21.0, 19.0, 23.6, 17.0,
                                     17.9, 16.9, 20.1, 21.9, 22.6,
                                     23.1, 19.6, 19.0, 21.7, 21.4};
const std::vector<double> kWikiA2 = {27.1, 22.0, 20.8, 23.4, 23.4,
                                     23.5, 25.8, 22.0, 24.8, 20.2,
                                     21.9, 22.1, 22.9, 20.5, 24.4};

std::vector<double> paired_differences() {
  std::vector<double> d(kPairedX.size());
  for (size_t i = 0; i < d.size(); ++i) d[i] = kPairedX[i] - kPairedY[i];
  return d;
}

MeanSummary summary_of(const std::vector<double>& v) {
  return {mean(v), stdev(v), static_cast<double>(v.size())};
}

std::vector<double> random_values(size_t n, int distinct, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> pick(-distinct, distinct);
  std::vector<double> v(n);
  for (double& x : v) x = pick(rng) * 0.25;
  return v;
}

TEST_SUITE("compare") {
  TEST_CASE("stats: median, mean, stdev") {
    CHECK(median(std::vector<double>{3, 1, 2}) == 2);
    CHECK(median(std::vector<double>{4, 1, 3, 2}) == 2.5);
    CHECK(median(std::vector<double>{}) == 0);
    CHECK(mean(std::vector<double>{1, 2, 6}) == 3);
    CHECK(stdev(std::vector<double>{2, 4, 4, 4, 5, 5, 7, 9}) ==
          doctest::Approx(std::sqrt(32.0 / 7)).epsilon(1e-14));
    CHECK(stdev(std::vector<double>{5}) == 0);
    // R: quantile(c(7, 1, 3, 5, 9), 0.25) = 3 (type 7); quantile(1:4, .25)
    // = 1.75.
    CHECK(quantile(std::vector<double>{7, 1, 3, 5, 9}, 0.25) == 3);
    CHECK(quantile(std::vector<double>{4, 3, 2, 1}, 0.25) == 1.75);
    CHECK(quantile(std::vector<double>{4, 3, 2, 1}, 0.5) == 2.5);
    CHECK(quantile(std::vector<double>{4, 3, 2, 1}, 1) == 4);
    CHECK(quantile(std::vector<double>{}, 0.25) == 0);
  }

  TEST_CASE("stats: mid-ranks and tie groups") {
    const MidRanks r = mid_ranks(std::vector<double>{10, 20, 10, 30, 10, 20});
    CHECK(r.ranks == std::vector<double>{2, 4.5, 2, 6, 2, 4.5});
    CHECK(r.ties);
    CHECK(r.tie_term == (27 - 3) + (8 - 2));
    const MidRanks distinct = mid_ranks(std::vector<double>{3, 1, 2});
    CHECK(distinct.ranks == std::vector<double>{3, 1, 2});
    CHECK_FALSE(distinct.ties);
    CHECK(distinct.tie_term == 0);
  }

  TEST_CASE("stats: normal CDF and quantile against table values") {
    CHECK(normal_cdf(0) == 0.5);
    CHECK(normal_cdf(1.959963984540054) ==
          doctest::Approx(0.975).epsilon(1e-12));
    CHECK(normal_quantile(0.975) == doctest::Approx(1.959964).epsilon(1e-6));
    CHECK(normal_quantile(0.995) == doctest::Approx(2.575829).epsilon(1e-6));
    CHECK(normal_quantile(0.9) == doctest::Approx(1.281552).epsilon(1e-6));
    CHECK(normal_quantile(0.05) == doctest::Approx(-1.644854).epsilon(1e-6));
    CHECK(normal_quantile(1e-10) == doctest::Approx(-6.361341).epsilon(1e-6));
    CHECK(normal_quantile(0.5) == doctest::Approx(0).epsilon(1e-15));
    CHECK(std::isinf(normal_quantile(0)));
    CHECK(normal_quantile(1) > 0);
    for (const double p : {1e-6, 0.01, 0.2, 0.49, 0.7, 0.999}) {
      CHECK(normal_quantile(p) == doctest::Approx(-normal_quantile(1 - p)));
      CHECK(normal_cdf(normal_quantile(p)) ==
            doctest::Approx(p).epsilon(1e-12));
    }
  }

  TEST_CASE("stats: incomplete beta closed forms") {
    for (const double x : {0.01, 0.3, 0.5, 0.8, 0.99}) {
      CHECK(incomplete_beta(x, 2.5, 1) ==
            doctest::Approx(std::pow(x, 2.5)).epsilon(1e-12));
      CHECK(incomplete_beta(x, 1, 3.5) ==
            doctest::Approx(1 - std::pow(1 - x, 3.5)).epsilon(1e-12));
      CHECK(incomplete_beta(x, 4, 7) ==
            doctest::Approx(1 - incomplete_beta(1 - x, 7, 4)).epsilon(1e-12));
    }
    CHECK(incomplete_beta(0.5, 30, 30) == doctest::Approx(0.5).epsilon(1e-12));
    CHECK(incomplete_beta(0, 2, 3) == 0);
    CHECK(incomplete_beta(1, 2, 3) == 1);
    CHECK(std::isnan(incomplete_beta(0.5, -1, 3)));
  }

  TEST_CASE("stats: Student t CDF and quantile against table values") {
    CHECK(t_quantile(0.975, 1) == doctest::Approx(12.706205).epsilon(1e-7));
    CHECK(t_quantile(0.975, 10) == doctest::Approx(2.228139).epsilon(1e-6));
    CHECK(t_quantile(0.995, 5) == doctest::Approx(4.032143).epsilon(1e-6));
    CHECK(t_quantile(0.95, 30) == doctest::Approx(1.697261).epsilon(1e-6));
    CHECK(t_quantile(0.975, 2) == doctest::Approx(4.302653).epsilon(1e-6));
    CHECK(t_quantile(0.025, 10) == doctest::Approx(-2.228139).epsilon(1e-6));
    // Cauchy (df = 1): F(t) = 1/2 + atan(t)/pi.
    CHECK(t_cdf(3, 1) ==
          doctest::Approx(0.5 + std::atan(3.0) / std::numbers::pi)
              .epsilon(1e-12));
    CHECK(t_cdf(0, 7.5) == 0.5);
    // Huge df: the normal.
    CHECK(t_cdf(1.96, 1e6) == doctest::Approx(normal_cdf(1.96)).epsilon(1e-6));
    CHECK(t_cdf(1.96, 1e8) == doctest::Approx(normal_cdf(1.96)).epsilon(1e-9));
    for (const double df : {1.0, 2.5, 17.776, 300.0}) {
      for (const double t : {0.3, 1.0, 2.0, 6.0}) {
        CHECK(t_cdf(-t, df) ==
              doctest::Approx(1 - t_cdf(t, df)).epsilon(1e-12));
        CHECK(t_quantile(t_cdf(t, df), df) == doctest::Approx(t).epsilon(1e-9));
      }
    }
    CHECK(std::isnan(t_cdf(1, 0)));
    CHECK(std::isnan(t_quantile(0.5, -2)));
  }

  TEST_CASE("stats: Mann-Whitney U exact (Hollander & Wolfe p. 69)") {
    const RankTest greater =
        mann_whitney_u(kRankX, kRankY, Alternative::kGreater);
    CHECK(greater.statistic == 35);
    CHECK(greater.exact);
    CHECK(greater.p_value == doctest::Approx(382.0 / 3003).epsilon(1e-12));
    CHECK(greater.p_value == doctest::Approx(0.1272).epsilon(5e-4));
    const RankTest two = mann_whitney_u(kRankX, kRankY);
    CHECK(two.statistic == 35);
    CHECK(two.p_value == doctest::Approx(0.2544).epsilon(5e-4));
    CHECK(two.p_value == doctest::Approx(2 * 382.0 / 3003).epsilon(1e-12));
    // Swapping the samples: U_Y = n1 n2 - U_X, the same two-sided p, and
    // the "less" tail of the swap is the "greater" tail of the original.
    const RankTest swapped = mann_whitney_u(kRankY, kRankX);
    CHECK(swapped.statistic == 15);
    CHECK(swapped.p_value == doctest::Approx(two.p_value).epsilon(1e-12));
    CHECK(mann_whitney_u(kRankY, kRankX, Alternative::kLess).p_value ==
          doctest::Approx(greater.p_value).epsilon(1e-12));
  }

  TEST_CASE("stats: Mann-Whitney U normal approximation (fallback path)") {
    const RankTest greater =
        mann_whitney_u(kRankX, kRankY, Alternative::kGreater, Method::kNormal);
    CHECK_FALSE(greater.exact);
    CHECK(greater.statistic == 35);
    CHECK(greater.p_value == doctest::Approx(0.1223).epsilon(5e-4));
    const RankTest two =
        mann_whitney_u(kRankX, kRankY, Alternative::kTwoSided, Method::kNormal);
    CHECK(two.p_value == doctest::Approx(2 * greater.p_value).epsilon(1e-12));
  }

  TEST_CASE("stats: Mann-Whitney U with ties uses the tie-corrected normal") {
    // U by pair counting = 16; ties 1/3/3/1/2/1/1/1: sum(t^3 - t) = 54;
    // sigma^2 = 42/12 (14 - 54/182); z = (16 - 21 + 0.5)/sigma.
    const std::vector<double> x = {1, 2, 2, 3, 5, 5, 7}, y = {2, 3, 3, 4, 6, 8};
    const RankTest test = mann_whitney_u(x, y);
    CHECK_FALSE(test.exact);
    CHECK(test.statistic == 16);
    CHECK(test.p_value == doctest::Approx(0.5150755147).epsilon(1e-9));
    // All values equal: no evidence, no NaN.
    const std::vector<double> same(8, 3.0);
    CHECK(mann_whitney_u(same, same).p_value == 1);
    CHECK(mann_whitney_u(x, std::vector<double>{}).p_value == 1);
  }

  TEST_CASE("stats: exact null distributions") {
    // m = n = 2: U in 0..4 with counts 1, 1, 2, 1, 1 of C(4, 2) = 6.
    const std::vector<double> u22 = mann_whitney_null(2, 2);
    REQUIRE(u22.size() == 5);
    CHECK(u22[0] == doctest::Approx(1.0 / 6));
    CHECK(u22[2] == doctest::Approx(2.0 / 6));
    CHECK(u22[4] == doctest::Approx(1.0 / 6));
    // 10 and 5: P0(U <= 8) = 0.01998 (= 60/3003), symmetric, sums to 1.
    const std::vector<double> u = mann_whitney_null(10, 5);
    REQUIRE(u.size() == 51);
    double below = 0, total = 0;
    for (size_t s = 0; s <= 8; ++s) below += u[s];
    for (const double p : u) total += p;
    CHECK(below == doctest::Approx(0.01998).epsilon(5e-5));
    CHECK(below == doctest::Approx(60.0 / 3003).epsilon(1e-12));
    CHECK(total == doctest::Approx(1).epsilon(1e-12));
    for (size_t s = 0; s < u.size(); ++s)
      CHECK(u[s] == doctest::Approx(u[u.size() - 1 - s]).epsilon(1e-12));
    // The largest exact case: P0(U = 0) = 1/C(98, 49), no cancellation.
    const std::vector<double> big = mann_whitney_null(49, 49);
    REQUIRE(big.size() == 49 * 49 + 1);
    CHECK(big[0] * 2.5477612258980857e28 == doctest::Approx(1).epsilon(1e-9));
    CHECK(big[1] == doctest::Approx(big[0]).epsilon(1e-12));
    CHECK(big[2] == doctest::Approx(2 * big[0]).epsilon(1e-12));
    CHECK(big[1200] == doctest::Approx(big[2401 - 1200]).epsilon(1e-12));
    // n = 3: V in 0..6 with counts 1, 1, 1, 2, 1, 1, 1 of 8.
    const std::vector<double> v3 = signed_rank_null(3);
    REQUIRE(v3.size() == 7);
    CHECK(v3[3] == doctest::Approx(2.0 / 8));
    CHECK(v3[6] == doctest::Approx(1.0 / 8));
  }

  TEST_CASE("stats: Hodges-Lehmann shift and exact Moses interval") {
    const ShiftEstimate shift = hodges_lehmann_shift(kRankX, kRankY, 0.95);
    CHECK(shift.exact);
    CHECK(shift.estimate == doctest::Approx(0.305).epsilon(1e-12));
    CHECK(shift.ci_low == doctest::Approx(-0.15).epsilon(1e-12));
    CHECK(shift.ci_high == doctest::Approx(0.76).epsilon(1e-12));
    CHECK(shift.coverage == doctest::Approx(0.9600).epsilon(5e-5));
    // y - x: the mirror image.
    const ShiftEstimate mirror = hodges_lehmann_shift(kRankY, kRankX, 0.95);
    CHECK(mirror.estimate == doctest::Approx(-0.305).epsilon(1e-12));
    CHECK(mirror.ci_low == doctest::Approx(-0.76).epsilon(1e-12));
    CHECK(mirror.ci_high == doctest::Approx(0.15).epsilon(1e-12));
    // The normal-approximation k for these sizes is also 9.
    const ShiftEstimate normal =
        hodges_lehmann_shift(kRankX, kRankY, 0.95, Method::kNormal);
    CHECK_FALSE(normal.exact);
    CHECK(normal.ci_low == doctest::Approx(-0.15).epsilon(1e-12));
    CHECK(normal.ci_high == doctest::Approx(0.76).epsilon(1e-12));
    // A lower confidence narrows the interval.
    const ShiftEstimate narrow = hodges_lehmann_shift(kRankX, kRankY, 0.5);
    CHECK(narrow.ci_low > shift.ci_low);
    CHECK(narrow.ci_high < shift.ci_high);
  }

  TEST_CASE("stats: Wilcoxon signed-rank exact (Hollander & Wolfe p. 29)") {
    const std::vector<double> d = paired_differences();
    const RankTest greater = wilcoxon_signed_rank(d, Alternative::kGreater);
    CHECK(greater.statistic == 40);
    CHECK(greater.exact);
    CHECK(greater.n == 9);
    CHECK(greater.p_value == doctest::Approx(0.01953).epsilon(5e-6));
    CHECK(greater.p_value == doctest::Approx(10.0 / 512).epsilon(1e-12));
    CHECK(wilcoxon_signed_rank(d).p_value ==
          doctest::Approx(20.0 / 512).epsilon(1e-12));
    // Negated differences: V' = 45 - V, the same two-sided p.
    std::vector<double> negated(d);
    for (double& v : negated) v = -v;
    const RankTest flipped = wilcoxon_signed_rank(negated);
    CHECK(flipped.statistic == 5);
    CHECK(flipped.p_value == doctest::Approx(20.0 / 512).epsilon(1e-12));
  }

  TEST_CASE("stats: Wilcoxon signed-rank drops zeros and corrects for ties") {
    // Nonzero: 1, -1, 2, 2, 3, -0.5; |d| ranks 2.5, 2.5, 4.5, 4.5, 6, 1;
    // V = 17.5; sigma^2 = 6*7*13/24 - 12/48 = 22.5; z = (17.5-10.5-0.5)/sigma.
    const std::vector<double> d = {1, -1, 2, 2, 3, -0.5, 0};
    const RankTest test = wilcoxon_signed_rank(d);
    CHECK_FALSE(test.exact);
    CHECK(test.n == 6);
    CHECK(test.statistic == 17.5);
    CHECK(test.p_value == doctest::Approx(0.1705869329).epsilon(1e-9));
    CHECK(wilcoxon_signed_rank(std::vector<double>{0, 0, 0}).p_value == 1);
    CHECK(wilcoxon_signed_rank(std::vector<double>{}).p_value == 1);
  }

  TEST_CASE("stats: paired Hodges-Lehmann against enumerated Walsh averages") {
    const std::vector<double> d = paired_differences();
    std::vector<double> walsh;
    for (size_t i = 0; i < d.size(); ++i)
      for (size_t j = i; j < d.size(); ++j) walsh.push_back((d[i] + d[j]) / 2);
    std::sort(walsh.begin(), walsh.end());
    REQUIRE(walsh.size() == 45);
    const ShiftEstimate shift = hodges_lehmann_paired(d, 0.95);
    CHECK(shift.exact);
    CHECK(shift.estimate == walsh[22]);
    // k = 6 (P0(V <= 5) = 10/512 <= 0.025 < P0(V <= 6) = 14/512).
    CHECK(shift.ci_low == walsh[5]);
    CHECK(shift.ci_high == walsh[39]);
    CHECK(shift.coverage == doctest::Approx(1 - 20.0 / 512).epsilon(1e-12));
  }

  TEST_CASE("stats: selection equals brute-force enumeration") {
    for (const unsigned seed : {1u, 2u, 3u}) {
      std::vector<double> x = random_values(31, 6, seed);
      std::vector<double> y = random_values(17, 40, seed + 10);
      std::sort(x.begin(), x.end());
      std::sort(y.begin(), y.end());
      std::vector<double> differences, walsh;
      for (const double a : x)
        for (const double b : y) differences.push_back(a - b);
      for (size_t i = 0; i < x.size(); ++i)
        for (size_t j = i; j < x.size(); ++j)
          walsh.push_back((x[i] + x[j]) / 2);
      std::sort(differences.begin(), differences.end());
      std::sort(walsh.begin(), walsh.end());
      bool all_equal = true;
      for (size_t k = 1; k <= differences.size(); ++k)
        all_equal = all_equal && kth_difference(x, y, k) == differences[k - 1];
      for (size_t k = 1; k <= walsh.size(); ++k)
        all_equal = all_equal && kth_walsh_average(x, k) == walsh[k - 1];
      CHECK(all_equal);
    }
  }

  TEST_CASE("stats: Hodges-Lehmann with ties uses the normal k") {
    const std::vector<double> x = random_values(40, 5, 7);
    const std::vector<double> y = random_values(30, 5, 8);
    const ShiftEstimate shift = hodges_lehmann_shift(x, y, 0.95);
    CHECK_FALSE(shift.exact);
    CHECK(shift.coverage == doctest::Approx(0.95).epsilon(0.01));
    CHECK(shift.ci_low <= shift.estimate);
    CHECK(shift.estimate <= shift.ci_high);
  }

  TEST_CASE("stats: 100 000 rounds a side stay fast and exact") {
    const size_t n = 100000;
    std::vector<double> x(n), y(n);
    for (size_t i = 0; i < n; ++i) {
      x[i] = static_cast<double>((i * 7919) % n);
      y[i] = x[i] + 0.5;
    }
    // Differences k + 0.5 with multiplicity n - |k|: symmetric about 0.5.
    const ShiftEstimate shift = hodges_lehmann_shift(y, x, 0.95);
    CHECK(shift.estimate == 0.5);
    CHECK(shift.ci_low < 0.5);
    CHECK(shift.ci_high - 0.5 == doctest::Approx(0.5 - shift.ci_low));
    const RankTest test = mann_whitney_u(y, x);
    CHECK(test.p_value > 0.99);
    const ShiftEstimate paired = hodges_lehmann_paired(x, 0.95);
    CHECK(paired.estimate == doctest::Approx((n - 1) / 2.0));
  }

  TEST_CASE("stats: Welch's t on the sleep data (R ?t.test)") {
    const WelchTest w = welch_t(summary_of(kSleep1), summary_of(kSleep2), 0.95);
    CHECK(w.t == doctest::Approx(-1.8608).epsilon(5e-5));
    CHECK(w.df == doctest::Approx(17.776).epsilon(5e-5));
    CHECK(w.p_value == doctest::Approx(0.07939).epsilon(5e-5));
    CHECK(w.difference == doctest::Approx(-1.58).epsilon(1e-12));
    CHECK(w.ci_low == doctest::Approx(-3.3654832).epsilon(1e-7));
    CHECK(w.ci_high == doctest::Approx(0.2054832).epsilon(1e-6));
    const WelchTest back =
        welch_t(summary_of(kSleep2), summary_of(kSleep1), 0.95);
    CHECK(back.t == doctest::Approx(-w.t));
    CHECK(back.p_value == doctest::Approx(w.p_value));
    CHECK(back.ci_low == doctest::Approx(-w.ci_high));
  }

  TEST_CASE("stats: Welch's t on Wikipedia's example 1") {
    const WelchTest w = welch_t(summary_of(kWikiA1), summary_of(kWikiA2), 0.95);
    CHECK(w.t == doctest::Approx(-2.46).epsilon(2e-3));
    CHECK(w.df == doctest::Approx(24.99).epsilon(2e-4));
    CHECK(w.p_value == doctest::Approx(0.0214).epsilon(3e-3));
  }

  TEST_CASE("stats: Welch's t with a zero standard error has no NaN") {
    const WelchTest equal = welch_t({5, 0, 10}, {5, 0, 8}, 0.95);
    CHECK(equal.p_value == 1);
    CHECK(equal.ci_low == 0);
    CHECK(equal.ci_high == 0);
    const WelchTest apart = welch_t({6, 0, 10}, {5, 0, 8}, 0.95);
    CHECK(apart.p_value == 0);
    CHECK(apart.ci_low == 1);
    CHECK(apart.ci_high == 1);
    // One side without spread: df = n - 1 of the other.
    const WelchTest one = welch_t({6, 0, 10}, {5, 2, 8}, 0.95);
    CHECK(one.df == doctest::Approx(7).epsilon(1e-12));
    const WelchTest tiny = welch_t({6, 1, 1}, {5, 2, 8}, 0.95);
    CHECK(tiny.p_value == 1);
    CHECK(std::isinf(tiny.ci_high));
  }

  TEST_CASE("stats: Holm and Benjamini-Hochberg adjusted p-values") {
    const std::vector<double> p = {0.01, 0.04, 0.03, 0.005};
    const std::vector<double> holm = holm_adjust(p);
    const std::vector<double> bh = benjamini_hochberg_adjust(p);
    const std::vector<double> holm_expected = {0.03, 0.06, 0.06, 0.02};
    const std::vector<double> bh_expected = {0.02, 0.04, 0.04, 0.02};
    REQUIRE(holm.size() == 4);
    REQUIRE(bh.size() == 4);
    for (size_t i = 0; i < 4; ++i) {
      CHECK(holm[i] == doctest::Approx(holm_expected[i]).epsilon(1e-12));
      CHECK(bh[i] == doctest::Approx(bh_expected[i]).epsilon(1e-12));
    }
    CHECK(holm_adjust(std::vector<double>{0.7, 0.9}) ==
          std::vector<double>{1, 1});
    CHECK(benjamini_hochberg_adjust(std::vector<double>{0.02}) ==
          std::vector<double>{0.02});
    CHECK(holm_adjust(std::vector<double>{}).empty());
  }

  TEST_CASE("median_difference: medians from quartiles, against python3") {
    // statistics.NormalDist: sigma = IQR / (2 z(0.75)), SE = sqrt(pi/2)
    // sigma / sqrt(n); z = -4 / 4.645415801170988.
    const MedianTest m =
        median_difference({90, 100, 110, 25}, {95, 104, 113, 36}, 0.95);
    CHECK(m.difference == -4);
    CHECK(m.z == doctest::Approx(-0.861063932961976).epsilon(1e-12));
    CHECK(m.p_value == doctest::Approx(0.3892028321650519).epsilon(1e-9));
    CHECK(m.ci_low == doctest::Approx(-13.104847663508416).epsilon(1e-9));
    CHECK(m.ci_high == doctest::Approx(5.104847663508416).epsilon(1e-9));
    // No spread: the point, p 1 when equal, else 0.
    const MedianTest same =
        median_difference({5, 5, 5, 10}, {5, 5, 5, 10}, 0.95);
    CHECK(same.p_value == 1);
    CHECK(same.ci_low == 0);
    const MedianTest apart =
        median_difference({6, 6, 6, 10}, {5, 5, 5, 10}, 0.95);
    CHECK(apart.p_value == 0);
    CHECK(apart.ci_high == 1);
    // Fewer than two rounds: an unbounded interval.
    CHECK(
        std::isinf(median_difference({1, 2, 3, 1}, {1, 2, 3, 5}, 0.95).ci_low));
  }
}

}  // namespace
}  // namespace runner::compare::stats
