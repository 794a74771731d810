// compare: `runner compare`, a regression verdict per benchmark between two
// sides (BASE, HEAD), each one or more profile folders (repeated runs are
// pooled, and their run-to-run spread reported), or in paired mode two
// commands timed round by round in ABBA order, or in interleaved mode the
// two benchmarks of one `runner exec --interleave` folder.
//
//   samples (samples.hpp): per benchmark URI, the best data of each side:
//     results JSON round arrays > ExecutionTimestamps markers > summary
//   verdict (verdict.hpp, stats.hpp): the test, effect size and confidence
//     interval per benchmark; multiple-comparison correction; verdicts
//   profiles (report's façade): per benchmark with samples on both sides,
//     the differential flamegraph and the top functions by self-share change
//   outputs: compare.json (format::write_compare_report), compare.md and
//     text (render.hpp), <benchmark>.diff.svg, in the compare folder
//
// The report (format::CompareReport) is the only thing passed between these
// stages; each stage owns what it reads and hands back values.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "format/format.hpp"

namespace runner::compare {

enum class OutputFormat { kText, kMarkdown, kJson };

struct CompareOptions {
  // Profile folders of each side (paired mode: exactly one command each,
  // run through /bin/sh -c).
  std::vector<std::string> base, head;
  std::string out_dir;  // "" : <first HEAD folder>/compare (paired: none)
  OutputFormat format = OutputFormat::kText;
  format::CompareSettings settings;  // settings.paired: the paired mode
  unsigned top = 10;                 // functions per benchmark
  uint64_t pairs = 20;               // paired mode: measured pairs
  uint64_t warmup_pairs = 1;         // paired mode: pairs not measured
  // One folder per side: per benchmark URI, the median time per iteration
  // of each of the base branch's last stored runs (the store's history,
  // `runner compare --store`); their spread is the between-run noise of
  // the verdict (docs/compare.md). Empty: not estimated.
  std::map<std::string, std::vector<double>> history_medians_ns;
  // Where the history came from, printable ("10 runs of a push to 'main'
  // from s3://..."); shown once in the report.
  std::string history_description;
  // The interleaved mode: base and head are the same one folder, written by
  // `runner exec --interleave`; its first benchmark is the BASE, its second
  // the HEAD, compared pair by pair (compare/interleaved.hpp).
  bool interleaved = false;
  // Exit 3 when a benchmark is inconclusive and none regressed.
  bool fail_on_inconclusive = false;
  // When set, called with the finished report before it is printed (the
  // agent's --verdict-file reads the verdicts from it).
  std::function<void(const format::CompareReport&)> on_report;
};

// Runs the comparison, writes the compare folder, prints `options.format`
// on `out`. Returns 0 when no benchmark regressed, 1 when one did, 3 when
// none did, one is inconclusive and options.fail_on_inconclusive is set, 2
// on bad input (one line on `err`: missing folder, no results, unreadable
// JSON), 130 when the paired mode was interrupted.
int run_compare(const CompareOptions& options, std::ostream& out,
                std::ostream& err);

// One benchmark's counts over one whole run, per iteration, as `runner
// compare --metric` takes a run's value when its rounds share a window
// (samples.hpp): the task-clock and, unless multiplexed, the instructions
// of its windows divided by the iterations they held. Absent when the
// folder has no runner.counters.json, the counter was not counted, or the
// benchmark had no window or no iteration count.
struct RunCounts {
  std::string uri;
  std::optional<double> cpu_ns_per_iter, instructions_per_iter;
};

// Every benchmark of the folder's results with its counts (an unreadable
// folder: none); for the store's records.
std::vector<RunCounts> run_counts(const std::string& folder);

}  // namespace runner::compare
