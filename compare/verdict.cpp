// One benchmark's test, change and confidence interval; the correction
// across benchmarks and the verdicts (see verdict.hpp).
#include "compare/verdict.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "compare/runs.hpp"
#include "compare/stats.hpp"

namespace runner::compare {
namespace {

using format::BenchmarkComparison;
using format::CompareSettings;
using format::CompareSideStats;
using format::Verdict;

// Below two rounds no test has a variance to work with.
constexpr uint64_t kFewestRounds = 2;
// The chance that a change of detectable_change is called (the power).
constexpr double kPower = 0.80;
constexpr const char* kPlusMinus = "\xC2\xB1";  // U+00B1

uint64_t needed_rounds(const CompareSettings& settings) {
  return std::max(settings.min_rounds, kFewestRounds);
}

// settings.confidence when it is a probability, else 95%.
double confidence(const CompareSettings& settings) {
  const double c = settings.confidence;
  return c > 0 && c < 1 ? c : 0.95;
}

std::optional<double> finite(double v) {
  if (!std::isfinite(v)) return std::nullopt;
  return v;
}

std::string percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%+.1f%%", fraction * 100);
  return text;
}

std::string plain_percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%g%%", fraction * 100);
  return text;
}

// "31.4%": a magnitude, one decimal.
std::string plain_one_decimal(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", fraction * 100);
  return text;
}

std::string number(double v, int digits) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*g", digits, v);
  return text;
}

// p with two significant digits, more when two would put it on the other
// side of alpha ("0.05" for 0.0496).
std::string p_text(double p, double alpha) {
  for (const int digits : {2, 4, 6}) {
    std::string text = number(p, digits);
    if ((std::strtod(text.c_str(), nullptr) < alpha) == (p < alpha))
      return text;
  }
  return number(p, 17);
}

std::string_view correction_label(format::Correction correction) {
  if (correction == format::Correction::kHolm) return " (Holm)";
  if (correction == format::Correction::kBenjaminiHochberg)
    return " (Benjamini-Hochberg)";
  return "";
}

std::string count_text(uint64_t count, std::string_view unit) {
  std::string text = std::to_string(count) + " " + std::string(unit);
  return count == 1 ? text : text + "s";
}

// "3 rounds in base, need 6", "3 rounds in base and 1 round in head, need 6".
std::optional<std::string> rounds_problem(uint64_t base, uint64_t head,
                                          uint64_t need) {
  const std::string tail = ", need " + std::to_string(need);
  if (base < need && head < need)
    return count_text(base, "round") + " in base and " +
           count_text(head, "round") + " in head" + tail;
  if (base < need) return count_text(base, "round") + " in base" + tail;
  if (head < need) return count_text(head, "round") + " in head" + tail;
  return std::nullopt;
}

// Why `v` cannot be a time ("is NaN", "is negative (-5 ns)"), or nothing.
std::optional<std::string> time_problem(double v, bool zero_allowed) {
  if (std::isnan(v)) return "is NaN";
  if (std::isinf(v)) return "is infinite";
  if (v < 0) return "is negative (" + number(v, 6) + " ns)";
  if (v == 0 && !zero_allowed) return "is 0";
  return std::nullopt;
}

std::optional<std::string> times_problem(std::string_view side,
                                         std::span<const double> times) {
  for (size_t i = 0; i < times.size(); ++i)
    if (auto problem = time_problem(times[i], false))
      return std::string(side) + ": round " + std::to_string(i + 1) + " time " +
             *problem;
  return std::nullopt;
}

std::optional<std::string> samples_problem(std::string_view side,
                                           const SideSamples& samples) {
  if (!samples.times_ns.empty()) return times_problem(side, samples.times_ns);
  if (!samples.summary) return std::nullopt;  // 0 rounds, said before
  if (auto problem = time_problem(samples.summary->mean_ns, false))
    return std::string(side) + ": mean time " + *problem;
  if (auto problem = time_problem(samples.summary->stdev_ns, true))
    return std::string(side) + ": stdev " + *problem;
  return std::nullopt;
}

// Median, mean and stdev of valid raw times (left empty when one is not).
void describe_times(std::span<const double> times, CompareSideStats& out) {
  out.rounds = times.size();
  if (times.empty() || times_problem("", times)) return;
  out.median_ns = stats::median(times);
  out.q1_ns = stats::quantile(times, 0.25);
  out.mean_ns = stats::mean(times);
  if (times.size() >= 2) out.stdev_ns = stats::stdev(times);
}

CompareSideStats side_stats(const SideSamples& samples) {
  CompareSideStats out;
  out.folders = samples.folders;
  out.source = samples.source;
  if (samples.source == format::SampleSource::kRuns) {
    describe_times(samples.folder_medians_ns, out);
    return out;
  }
  if (!samples.times_ns.empty() || !samples.summary) {
    describe_times(samples.times_ns, out);
    return out;
  }
  const format::BenchmarkStats& summary = *samples.summary;
  out.rounds = summary.rounds;
  if (!time_problem(summary.median_ns, false))
    out.median_ns = summary.median_ns;
  if (!time_problem(summary.q1_ns, false)) out.q1_ns = summary.q1_ns;
  if (!time_problem(summary.mean_ns, false)) out.mean_ns = summary.mean_ns;
  if (!time_problem(summary.stdev_ns, true)) out.stdev_ns = summary.stdev_ns;
  return out;
}

BenchmarkComparison inconclusive(BenchmarkComparison out, std::string reason) {
  out.verdict = Verdict::kInconclusive;
  out.reason = std::move(reason);
  out.test = format::CompareTest::kNone;
  out.change = out.ci_low = out.ci_high = std::nullopt;
  out.p_value = out.p_value_raw = std::nullopt;
  return out;
}

// Sets the test's outcome, all relative to `scale`; inconclusive when a
// number is not finite (a scale near 0, an overflow).
BenchmarkComparison with_outcome(BenchmarkComparison out,
                                 format::CompareTest test, double p,
                                 double shift, double low, double high,
                                 double scale) {
  out.test = test;
  out.p_value_raw = out.p_value = finite(p);
  out.change = finite(shift / scale);
  out.ci_low = finite(low / scale);
  out.ci_high = finite(high / scale);
  if (!(scale > 0) || !out.p_value || !out.change || !out.ci_low ||
      !out.ci_high)
    return inconclusive(std::move(out), "the statistics are not finite");
  return out;
}

BenchmarkComparison rank_comparison(BenchmarkComparison out,
                                    std::span<const double> base,
                                    std::span<const double> head,
                                    const CompareSettings& settings) {
  const stats::RankTest u = stats::mann_whitney_u(head, base);
  const stats::ShiftEstimate shift =
      stats::hodges_lehmann_shift(head, base, confidence(settings));
  return with_outcome(std::move(out), format::CompareTest::kMannWhitneyU,
                      u.p_value, shift.estimate, shift.ci_low, shift.ci_high,
                      stats::median(base));
}

stats::MeanSummary mean_summary(const SideSamples& samples) {
  if (!samples.times_ns.empty())
    return {stats::mean(samples.times_ns), stats::stdev(samples.times_ns),
            static_cast<double>(samples.times_ns.size())};
  const format::BenchmarkStats& summary = *samples.summary;  // checked
  return {summary.mean_ns, summary.stdev_ns,
          static_cast<double>(summary.rounds)};
}

BenchmarkComparison welch_comparison(BenchmarkComparison out,
                                     const SideSamples& base,
                                     const SideSamples& head,
                                     const CompareSettings& settings) {
  const stats::MeanSummary b = mean_summary(base), h = mean_summary(head);
  const stats::WelchTest welch = stats::welch_t(h, b, confidence(settings));
  return with_outcome(std::move(out), format::CompareTest::kWelchT,
                      welch.p_value, welch.difference, welch.ci_low,
                      welch.ci_high, b.mean);
}

// A side for the median test: one folder's summary stats with its quartiles
// around the median (what codspeed-cpp and tinybench write); std::nullopt
// for rounds, pooled folders or missing quartiles (Welch's t then).
std::optional<stats::QuartileSummary> quartiles(const SideSamples& samples) {
  if (!samples.times_ns.empty() || !samples.summary || samples.folders != 1)
    return std::nullopt;
  const format::BenchmarkStats& s = *samples.summary;
  if (!(s.q1_ns > 0 && s.q1_ns <= s.median_ns && s.median_ns <= s.q3_ns &&
        std::isfinite(s.q3_ns)))
    return std::nullopt;
  return stats::QuartileSummary{s.q1_ns, s.median_ns, s.q3_ns,
                                static_cast<double>(s.rounds)};
}

BenchmarkComparison median_comparison(BenchmarkComparison out,
                                      const stats::QuartileSummary& base,
                                      const stats::QuartileSummary& head,
                                      const CompareSettings& settings) {
  const stats::MedianTest test =
      stats::median_difference(head, base, confidence(settings));
  return with_outcome(std::move(out), format::CompareTest::kMedianQuartiles,
                      test.p_value, test.difference, test.ci_low, test.ci_high,
                      base.median);
}

std::string interval_text(const BenchmarkComparison& b,
                          const CompareSettings& settings) {
  return plain_percent(confidence(settings)) + " interval [" +
         percent(*b.ci_low) + ", " + percent(*b.ci_high) + "]";
}

// The smallest true change that this comparison would call a regression
// (or an improvement) 4 times out of 5. The interval's half-width h gives
// the standard error se = h / z((1 + confidence) / 2); a verdict needs the
// estimate beyond the threshold, beyond z(1 - alpha/2) se (significant) and
// beyond h (the interval clear of zero); the estimate falls more than
// z(0.80) se short of the true change one time in 5. Docs/compare.md
// states the same.
std::optional<double> detectable_change(const BenchmarkComparison& b,
                                        const CompareSettings& settings) {
  const double half = (*b.ci_high - *b.ci_low) / 2;
  const double z_confidence =
      stats::normal_quantile(0.5 + confidence(settings) / 2);
  const double se = half / z_confidence;
  const double alpha =
      settings.alpha > 0 && settings.alpha < 1 ? settings.alpha : 0.05;
  const double z_alpha = stats::normal_quantile(1 - alpha / 2);
  const double needed =
      std::max({settings.threshold, z_alpha * se, z_confidence * se});
  return finite(needed + stats::normal_quantile(kPower) * se);
}

// "p = 0.41 >= 0.05 (Holm)", or "p = 0.001 < 0.05 (Holm)".
std::string p_comparison(double p, const CompareSettings& settings) {
  if (p < 1e-300)  // the normal tail rounds to 0 beyond z = 37
    return "p < 1e-300 < " + number(settings.alpha, 6) +
           std::string(correction_label(settings.correction));
  return "p = " + p_text(p, settings.alpha) +
         (p < settings.alpha ? " < " : " >= ") + number(settings.alpha, 6) +
         std::string(correction_label(settings.correction));
}

// Whose spread the interval is: " (between 3 + 3 runs)", " (between 10
// stored runs of the base branch)"; "" for the rounds'.
std::string noise_words(const BenchmarkComparison& b) {
  if (!b.runs) return "";
  const uint64_t base_runs = b.runs->base_runs, head_runs = b.runs->head_runs;
  if (b.noise == format::NoiseSource::kRuns &&
      (base_runs == 1 || head_runs == 1))
    return " (spread between " + std::to_string(base_runs) + " + " +
           std::to_string(head_runs) + " runs, the " +
           std::string(base_runs == 1 ? "head" : "base") +
           " runs' spread standing for both sides)";
  if (b.noise == format::NoiseSource::kRuns)
    return " (spread between " + std::to_string(base_runs) + " + " +
           std::to_string(head_runs) + " runs)";
  if (b.noise == format::NoiseSource::kHistory)
    return " (run-to-run spread of " + std::to_string(b.runs->history_runs) +
           " stored runs of the base branch)";
  return "";
}

std::string narrowing_advice(const BenchmarkComparison& b,
                             const CompareSettings& settings) {
  // An interleaved run's pairs are its rounds, in one folder.
  if (settings.paired && b.base.folders > 0)
    return "more rounds (runner exec --interleave --max-rounds) narrow it";
  if (settings.paired) return "more pairs (--pairs) narrow it";
  if (b.noise == format::NoiseSource::kRuns ||
      b.noise == format::NoiseSource::kHistory)
    return "more runs per side (--base/--head) narrow it";
  return "more rounds or --paired narrow it";
}

std::string verdict_reason(const BenchmarkComparison& b, Verdict verdict,
                           const CompareSettings& settings) {
  const std::string threshold = plain_percent(settings.threshold);
  if (verdict == Verdict::kRegression || verdict == Verdict::kImprovement)
    return p_comparison(*b.p_value, settings) + ", " + percent(*b.change) +
           " beyond the " + threshold + " threshold" + noise_words(b);
  const std::string interval = interval_text(b, settings) + noise_words(b);
  if (verdict == Verdict::kUnchanged)
    return interval + " lies within " + kPlusMinus + threshold;
  std::string out = interval + " reaches beyond " + kPlusMinus + threshold;
  out += ": this data detects changes of about ";
  out += kPlusMinus;
  out += b.detectable_change ? plain_one_decimal(*b.detectable_change) : "?";
  return out + " or more; " + narrowing_advice(b, settings);
}

// Regression (improvement): significant, beyond the threshold, the
// interval above (below) zero. Unchanged: the whole interval within
// +-threshold (equivalence). Anything else could be either.
Verdict decide(const BenchmarkComparison& b, const CompareSettings& settings) {
  const double t = settings.threshold;
  if (*b.p_value < settings.alpha) {
    if (*b.change > t && *b.ci_low > 0) return Verdict::kRegression;
    if (*b.change < -t && *b.ci_high < 0) return Verdict::kImprovement;
  }
  if (*b.ci_low >= -t && *b.ci_high <= t) return Verdict::kUnchanged;
  return Verdict::kInconclusive;
}

void correct_p_values(std::vector<BenchmarkComparison>& benchmarks,
                      format::Correction correction) {
  std::vector<size_t> tested;
  std::vector<double> raw;
  for (size_t i = 0; i < benchmarks.size(); ++i) {
    if (!benchmarks[i].p_value_raw) continue;
    tested.push_back(i);
    raw.push_back(*benchmarks[i].p_value_raw);
  }
  std::vector<double> adjusted = raw;
  if (correction == format::Correction::kHolm)
    adjusted = stats::holm_adjust(raw);
  if (correction == format::Correction::kBenjaminiHochberg)
    adjusted = stats::benjamini_hochberg_adjust(raw);
  for (size_t r = 0; r < tested.size(); ++r)
    benchmarks[tested[r]].p_value = adjusted[r];
}

// A change of the code moves the fast rounds as well as the median; a run
// disturbed by other jobs or throttling mostly slows the rest. So a
// regression (improvement) also needs the lower quartile to move beyond the
// threshold the same way; otherwise it is inconclusive. Not in paired mode,
// where drift hits both sides alike. std::nullopt: the verdict stands.
std::optional<std::string> disturbance(const BenchmarkComparison& b,
                                       const CompareSettings& settings) {
  if (settings.paired || !b.base.q1_ns || !b.head.q1_ns) return std::nullopt;
  if (b.verdict != Verdict::kRegression && b.verdict != Verdict::kImprovement)
    return std::nullopt;
  const double q1_change = *b.head.q1_ns / *b.base.q1_ns - 1;
  const double direction = b.verdict == Verdict::kRegression ? 1 : -1;
  if (!std::isfinite(q1_change) || q1_change * direction > settings.threshold)
    return std::nullopt;
  return percent(*b.change) + " overall but " + percent(q1_change) +
         " in the fastest quarter of the rounds: a run looks disturbed "
         "(rerun, or pool repeated runs with --base/--head)";
}

CompareSideStats paired_side(std::span<const double> times) {
  CompareSideStats out;
  out.folders = 0;
  out.source = format::SampleSource::kPaired;
  describe_times(times, out);
  return out;
}

// The round-level test alone (compare_benchmark before the run level).
BenchmarkComparison round_level(const SideSamples& base,
                                const SideSamples& head,
                                const CompareSettings& settings) {
  BenchmarkComparison out;
  out.base = side_stats(base);
  out.head = side_stats(head);
  if (auto problem = rounds_problem(out.base.rounds, out.head.rounds,
                                    needed_rounds(settings)))
    return inconclusive(std::move(out), *problem);
  for (const auto& [side, samples] :
       {std::pair{"base", &base}, std::pair{"head", &head}})
    if (auto problem = samples_problem(side, *samples))
      return inconclusive(std::move(out), *problem);
  if (!base.times_ns.empty() && !head.times_ns.empty())
    return rank_comparison(std::move(out), base.times_ns, head.times_ns,
                           settings);
  const auto base_quartiles = quartiles(base), head_quartiles = quartiles(head);
  if (base_quartiles && head_quartiles)
    return median_comparison(std::move(out), *base_quartiles, *head_quartiles,
                             settings);
  return welch_comparison(std::move(out), base, head, settings);
}

// Why the sides' values cannot be compared at all (the metric missing on
// a side, instructions with and without the kernel's), or nothing.
std::optional<std::string> metric_problem(const SideSamples& base,
                                          const SideSamples& head,
                                          const CompareSettings& settings) {
  if (!base.unavailable.empty()) return base.unavailable;
  if (!head.unavailable.empty()) return head.unavailable;
  if (settings.metric == format::Metric::kInstructions &&
      base.user_only != head.user_only)
    return std::string("instructions counted in user space only on the ") +
           (base.user_only ? "base" : "head") +
           " side, the kernel's included on the other: not comparable";
  return std::nullopt;
}

// One value per run on a side (--metric cpu/instructions without a window
// per round): the run-level test alone.
BenchmarkComparison runs_only(const SideSamples& base, const SideSamples& head,
                              const CompareSettings& settings) {
  BenchmarkComparison out;
  out.base = side_stats(base);
  out.head = side_stats(head);
  for (const auto& [side, samples] :
       {std::pair{"base", &base}, std::pair{"head", &head}})
    if (auto problem = times_problem(side, samples->folder_medians_ns))
      return inconclusive(std::move(out), *problem);
  auto runs = run_level_test(base.folder_medians_ns, head.folder_medians_ns,
                             confidence(settings));
  if (!runs)
    return inconclusive(
        std::move(out),
        "one value per run on each side (its counts over its iterations): "
        "compare several runs per side (--base/--head), or an interleaved "
        "run, whose rounds each have their own");
  out =
      with_outcome(std::move(out), format::CompareTest::kWelchT, runs->p_value,
                   runs->change, runs->ci_low, runs->ci_high, 1);
  out.runs = *runs;
  out.noise = format::NoiseSource::kRuns;
  return out;
}

}  // namespace

BenchmarkComparison compare_benchmark(const SideSamples& base,
                                      const SideSamples& head,
                                      const CompareSettings& settings,
                                      std::span<const double> history) {
  if (auto problem = metric_problem(base, head, settings)) {
    BenchmarkComparison out;
    out.base = side_stats(base);
    out.head = side_stats(head);
    return inconclusive(std::move(out), *problem);
  }
  if (base.source == format::SampleSource::kRuns ||
      head.source == format::SampleSource::kRuns)
    return runs_only(base, head, settings);
  BenchmarkComparison out = round_level(base, head, settings);
  if (!out.p_value_raw) return out;
  if (base.folder_medians_ns.size() >= 2 ||
      head.folder_medians_ns.size() >= 2) {
    if (auto runs =
            run_level_test(base.folder_medians_ns, head.folder_medians_ns,
                           confidence(settings)))
      apply_run_level(out, *runs, format::NoiseSource::kRuns);
    return out;
  }
  if (auto runs = history_test(out, history, confidence(settings)))
    apply_run_level(out, *runs, format::NoiseSource::kHistory);
  return out;
}

BenchmarkComparison compare_paired(std::span<const double> base,
                                   std::span<const double> head,
                                   const CompareSettings& settings) {
  BenchmarkComparison out;
  out.noise = format::NoiseSource::kRounds;  // each round is a run
  out.base = paired_side(base);
  out.head = paired_side(head);
  if (base.size() != head.size())
    return inconclusive(std::move(out), count_text(base.size(), "round") +
                                            " in base but " +
                                            count_text(head.size(), "round") +
                                            " in head: pairs must match");
  if (base.size() < needed_rounds(settings))
    return inconclusive(std::move(out),
                        count_text(base.size(), "pair") + ", need " +
                            std::to_string(needed_rounds(settings)));
  for (const auto& [side, times] :
       {std::pair{"base", base}, std::pair{"head", head}})
    if (auto problem = times_problem(side, times))
      return inconclusive(std::move(out), *problem);
  std::vector<double> differences(base.size());
  for (size_t i = 0; i < base.size(); ++i) differences[i] = head[i] - base[i];
  const stats::RankTest v = stats::wilcoxon_signed_rank(differences);
  const stats::ShiftEstimate shift =
      stats::hodges_lehmann_paired(differences, confidence(settings));
  return with_outcome(std::move(out), format::CompareTest::kWilcoxonSignedRank,
                      v.p_value, shift.estimate, shift.ci_low, shift.ci_high,
                      stats::median(base));
}

void apply_verdicts(std::vector<BenchmarkComparison>& benchmarks,
                    const CompareSettings& settings) {
  correct_p_values(benchmarks, settings.correction);
  for (BenchmarkComparison& b : benchmarks) {
    if (!b.p_value || !b.change || !b.ci_low || !b.ci_high) {
      b.verdict = Verdict::kInconclusive;
      b.detectable_change = std::nullopt;
      if (b.reason.empty()) b.reason = "no test could run";
      continue;
    }
    b.detectable_change = detectable_change(b, settings);
    b.verdict = decide(b, settings);
    b.reason = verdict_reason(b, b.verdict, settings);
    if (auto disturbed = disturbance(b, settings)) {
      b.verdict = Verdict::kInconclusive;  // the numbers stay, for the record
      b.reason = *disturbed;
    }
  }
}

double relative_spread(std::span<const double> medians) {
  double low = 0, high = 0;
  size_t count = 0;
  for (const double m : medians) {
    if (!std::isfinite(m)) continue;
    low = count == 0 ? m : std::min(low, m);
    high = count == 0 ? m : std::max(high, m);
    ++count;
  }
  if (count < 2 || !(low > 0)) return 0;
  return (high - low) / low;
}

}  // namespace runner::compare
