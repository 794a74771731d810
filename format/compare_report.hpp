// compare.json: what `runner compare` found, per benchmark matched by URI
// between BASE and HEAD (README "runner compare" documents every member).
// Computed by compare/, rendered as text and markdown by compare/, written
// and read here only. Relative numbers are fractions: change = head/base - 1
// of the central estimate (+0.10 = 10% slower), ci_low/ci_high its 95%
// confidence bounds on the same scale; times are nanoseconds per iteration.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/base.hpp"

namespace runner::format {

enum class Verdict { kRegression, kImprovement, kUnchanged, kInconclusive };
// The test behind a verdict: Mann-Whitney U on raw rounds, Welch's t on
// summary stats (mean, stdev, rounds), Wilcoxon signed-rank on paired
// rounds; kNone when no test could run (inconclusive).
enum class CompareTest {
  kNone,
  kMannWhitneyU,
  kWelchT,
  kWilcoxonSignedRank,
  kMedianQuartiles
};
// What a comparison compares per iteration (runner compare --metric): the
// wall time of the rounds, or the benchmark's CPU time (task-clock, user +
// kernel of its process tree) or instructions, counted by the runner per
// benchmark window (runner.counters.json). The members named *_ns of the
// report hold the metric's value (instructions for kInstructions).
enum class Metric { kWall, kCpu, kInstructions };
// Control of false alarms across the benchmarks of one comparison.
enum class Correction { kHolm, kBenjaminiHochberg, kNone };
// Where a side's numbers come from, best first: per-round arrays of the
// results JSON, RoundStart/RoundEnd markers of ExecutionTimestamps.msgpack,
// the results JSON's summary stats, rounds timed by the paired mode, or
// one value per run (--metric cpu/instructions without a window per
// round: each run's counts over its iterations).
enum class SampleSource { kRounds, kMarkers, kSummary, kPaired, kRuns };
// Which variance a benchmark's interval is built from (docs/compare.md):
// the rounds' (several runs whose run-level interval is narrower, or paired
// mode, whose rounds are separate runs), the spread between the runs given
// (several folders per side), the spread between the store's stored runs
// of the base branch (one run per side), or the rounds' alone with the
// run-to-run noise not estimated (one run per side, no store history).
enum class NoiseSource { kRounds, kRuns, kHistory, kNotEstimated };

// "regression", "improvement", "unchanged", "inconclusive".
std::string_view verdict_name(Verdict verdict);
// "none", "mann-whitney-u", "welch-t", "wilcoxon-signed-rank".
std::string_view test_name(CompareTest test);
// "wall", "cpu", "instructions".
std::string_view metric_name(Metric metric);
// "holm", "benjamini-hochberg", "none".
std::string_view correction_name(Correction correction);
// "rounds", "markers", "summary", "paired", "runs".
std::string_view source_name(SampleSource source);
// "rounds", "runs", "history", "not-estimated".
std::string_view noise_source_name(NoiseSource source);

// One side of one benchmark.
struct CompareSideStats {
  // Per iteration. q1_ns: the lower quartile, where a change of the code
  // shows as well as at the median, while a disturbed run (other jobs,
  // throttling) mostly slows the other rounds.
  std::optional<double> median_ns, q1_ns, mean_ns, stdev_ns;
  uint64_t rounds = 0;   // rounds the test used (pooled over folders)
  uint64_t folders = 0;  // folders (runs) pooled on this side
  SampleSource source = SampleSource::kSummary;
  bool operator==(const CompareSideStats&) const = default;
};

// A function's share of the benchmark's samples as the leaf (self time),
// in BASE and HEAD, as fractions of each side's samples.
struct FunctionShareChange {
  std::string function;
  double base_share = 0, head_share = 0;  // change = head_share - base_share
  bool operator==(const FunctionShareChange&) const = default;
};

// The run-level estimate of one benchmark: runs (profile folders) as the
// unit of replication, on the log scale of each run's median time per
// iteration. From several runs per side (Welch's t on the logs), or, with
// one run per side, from the between-run variance of the store's history.
struct RunLevelStats {
  uint64_t base_runs = 0, head_runs = 0;  // runs per side
  uint64_t history_runs = 0;  // stored runs whose spread was used (0: none)
  // The between-run standard deviation of log(median) used (pooled over
  // the sides, or the history's).
  double log_stdev = 0;
  double change = 0, ci_low = 0, ci_high = 0;  // as the benchmark's
  double p_value = 1;                          // before the correction
  bool operator==(const RunLevelStats&) const = default;
};

struct BenchmarkComparison {
  std::string uri, name;
  Verdict verdict = Verdict::kInconclusive;
  // One line saying why ("3 rounds in base, need 6", "p = 0.41 >= 0.05",
  // "+2.1% is within the 5% threshold").
  std::string reason;
  std::optional<double> change, ci_low, ci_high;
  std::optional<double> p_value;      // after the correction
  std::optional<double> p_value_raw;  // the test's own
  CompareTest test = CompareTest::kNone;
  // The smallest |change| this data would call a regression or an
  // improvement 4 times out of 5 (docs/compare.md); null without interval.
  std::optional<double> detectable_change;
  // Which variance the interval is built from; `runs` when a run-level
  // estimate was made (the wider interval of the two decides, and p is the
  // larger of the two).
  NoiseSource noise = NoiseSource::kNotEstimated;
  std::optional<RunLevelStats> runs;
  CompareSideStats base, head;
  // By |head_share - base_share|, largest first (at most --top).
  std::vector<FunctionShareChange> top_functions;
  std::string diff_flamegraph;  // file name in the compare folder, "" none
  bool operator==(const BenchmarkComparison&) const = default;
};

// What one side was made of: profile folders, or (paired mode) a command.
struct CompareSide {
  std::vector<std::string> folders;
  std::string command;  // paired mode only
  uint64_t benchmarks = 0;
  bool operator==(const CompareSide&) const = default;
};

struct BenchmarkRef {
  std::string uri, name;
  bool operator==(const BenchmarkRef&) const = default;
};

// Run-to-run spread of one benchmark on one side given several folders
// (repeated runs of one commit): each folder's median and
// spread = (max - min) / min of those medians.
struct NoiseEntry {
  std::string side;  // "base" or "head"
  std::string uri, name;
  std::vector<double> medians_ns;  // one per folder, in the order given
  double spread = 0;
  bool operator==(const NoiseEntry&) const = default;
};

struct CompareSettings {
  double alpha = 0.05;       // significance level, after the correction
  double threshold = 0.05;   // smallest |change| that counts
  double confidence = 0.95;  // of ci_low/ci_high
  Correction correction = Correction::kHolm;
  uint64_t min_rounds = 6;  // fewer on a side: inconclusive
  bool paired = false;
  Metric metric = Metric::kWall;
  bool operator==(const CompareSettings&) const = default;
};

struct CompareReport {
  CompareSide base, head;
  CompareSettings settings;
  // Regressions first, then improvements, unchanged, inconclusive; by
  // |change| within each.
  std::vector<BenchmarkComparison> benchmarks;
  std::vector<BenchmarkRef> added, removed;  // only in HEAD / only in BASE
  std::vector<NoiseEntry> noise;
  // Where the between-run noise of one-run-per-side comparisons came from
  // (the base branch's stored runs, `compare --store`); "" when none.
  std::string history;
  std::vector<std::string> warnings;
  bool operator==(const CompareReport&) const = default;
};

// The comparison's overall verdict, as `runner compare`'s exit code decides
// it: regression when a benchmark regressed (exit 1), else inconclusive when
// one is inconclusive (exit 3 with --fail-on-inconclusive) or no benchmark
// was on both sides, else improvement when one improved, else unchanged
// (every benchmark unchanged).
Verdict overall_verdict(const std::vector<BenchmarkComparison>& benchmarks);

// Pretty-printed JSON (2 spaces, trailing newline); absent numbers are null.
// The first member is "verdict": overall_verdict(benchmarks), always on the
// document's second line as `  "verdict": "<name>",` so that a shell script
// (packaging/ci/runner-ci) reads it without a JSON parser; then the members
// of `report` and "summary": {"regressions", "improvements", "unchanged",
// "inconclusive"} counted from `benchmarks`.
std::string write_compare_report(const CompareReport& report);
// Reads what write_compare_report wrote (summary is recomputed, not read;
// a "verdict" other than the benchmarks' overall verdict is an error).
// Errors name the member: "compare.json: benchmarks[2]: verdict 'worse' is
// not one of regression, improvement, unchanged, inconclusive"; or the
// document: "compare.json: not JSON (at byte 9)", "compare.json: nested
// deeper than 128 levels". Bytes that are not UTF-8 read as U+FFFD.
base::Result<CompareReport> read_compare_report(std::string_view text);

}  // namespace runner::format
