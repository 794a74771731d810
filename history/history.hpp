// history: `runner history`, every benchmark's trend over the stored runs
// of a branch, its change points, and the outputs that show them.
//
//   build (build.cpp): the store's records of pushes to one branch (read,
//     checked and handed over by the caller, oldest first) ──> one Series
//     per benchmark URI: per run its median per iteration and, where the
//     record has it, the 95% interval of that median
//   change points (change_points.hpp): steps in each series' level, each
//     with where it starts, its size and a 95% interval
//   outputs: text and markdown (render.cpp), history.json (json.cpp), a
//     self-contained page, index.html (page.cpp)
//
// The caller (the agent) owns the store: it reads the records, fetches the
// runs that straddle a change point, compares them with `runner compare`
// and fills in each Change's links. History is a value passed between these
// stages; nothing here does I/O but the writers' streams.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "format/format.hpp"
#include "history/change_points.hpp"

namespace runner::history {

// One stored run of the branch.
struct Run {
  std::string run_id;
  std::string commit;      // full SHA
  std::string created_at;  // ISO 8601 UTC
  uint64_t created_unix_ms = 0;
  std::string ci_run_url;  // "" outside CI
  // Relative to the output folder: the run's flamegraphs (the folder of
  // its `runner report`), "" when the run was not fetched.
  std::string report_link;
};

// One benchmark in one run.
struct Point {
  size_t run = 0;                   // index in History::runs
  double value = 0;                 // median per iteration (ns)
  std::optional<double> low, high;  // its 95% interval, when recorded
};

// A step in a series' level (change_points.hpp), with what the agent
// learnt by comparing the two stored runs around it.
struct Change {
  Step step;  // step.start indexes Series::points
  // `runner compare` of the last run before the step against the first
  // run of it: its verdict ("regression", "improvement", "unchanged",
  // "inconclusive"; "" when not compared) and, relative to the output
  // folder, its compare folder and this benchmark's differential
  // flamegraph ("" when not made).
  std::string verdict;
  std::string compare_link;
  std::string diff_link;
};

struct Series {
  std::string uri;
  std::string name;             // the URI's last "::" part
  std::vector<Point> points;    // oldest first
  std::vector<Change> changes;  // oldest first
};

struct History {
  std::string store;  // "s3://bucket/prefix", printable
  std::string owner, repository, branch;
  std::string metric = "wall";
  std::vector<Run> runs;       // oldest first
  std::vector<Series> series;  // by URI
  size_t skipped_records = 0;  // not used: unreadable, not a push, bad values
  std::vector<std::string> warnings;
};

// The series of `records` (oldest first, each already checked as a push
// to the branch with valid medians) in `metric`: wall, the median time per
// iteration with its interval; cpu, the CPU time per iteration; or
// instructions per iteration (the last two over the whole run, no
// interval). A run without the metric for a benchmark (records of older
// runners, a counter not counted) gives no point but stays in runs. The
// change points are found with `settings`.
History build_history(std::span<const format::StoreRecord> records,
                      const DetectSettings& settings,
                      format::Metric metric = format::Metric::kWall);

enum class OutputFormat { kText, kMarkdown, kJson, kHtml };

// Text for a terminal: one line per benchmark with its latest value, its
// trend and its latest change point, then each change point.
void write_text(const History& history, std::ostream& out);
// The same as a GitHub-flavoured markdown table (a step summary).
void write_markdown(const History& history, std::ostream& out);
// history.json (docs/history.md describes it).
std::string write_json(const History& history);
// index.html: the whole page, scripts and styles inline, data embedded;
// opens without network access (docs/history.md).
std::string write_page(const History& history);

}  // namespace runner::history
