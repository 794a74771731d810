// The report's outputs, behind one interface. The pipeline (report.cpp)
// hands every Output what it asked for:
//   - add_sample: each sample read, unwound, in time order within each
//     round of perf.pipedata, not attributed (perf-script lists them all);
//   - add_benchmark: each benchmark once every sample is read: its samples
//     attributed (windows, rounds), symbolized and folded by frame names;
//   - finish: once, with the report's totals; writes what is left.
// Outputs that write files do so under ReportDir::path; each failed write is
// appended to `errors` as "cannot write <path>: <cause>" (the report then
// fails; base::write_error). The pipeline owns the data it hands over; an
// output keeps copies.
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "base/base.hpp"
#include "perfdata/perfdata.hpp"
#include "report/flamegraph.hpp"
#include "report/report.hpp"
#include "report/unwinder.hpp"

namespace runner::report {

class Symbolizer;

struct FunctionCount {
  std::string function;
  uint64_t samples = 0;
};

struct BenchmarkProfile {
  size_t index = 0;  // order of first appearance in the timestamps
  std::string name, uri;
  BenchmarkSummary summary;
  // Folded by frame names (root first), sorted by names: the samples in the
  // benchmark's rounds, and the harness's (in its window, outside rounds).
  std::vector<FoldedStack> stacks, harness_stacks;
  // The functions with the most samples as the leaf / anywhere in the stack.
  std::vector<FunctionCount> top_self, top_total;
};

struct SampleView {
  const perfdata::SampleRecord& sample;  // scalar fields only
  std::string_view comm;                 // thread name, ":<tid>" if unknown
  std::string_view event;
  const UnwoundStack& stack;
};

struct ReportTotals {
  std::string folder;
  uint64_t samples_read = 0, samples_shown = 0;
  uint64_t outside_windows = 0, filtered_pids = 0, lost = 0;
  std::vector<std::string> warnings;
};

// <folder>/report, created before the file outputs are made; `created` is
// false when that failed (the file outputs then write nothing).
struct ReportDir {
  std::string path;
  bool created = false;
};

class Output {
 public:
  virtual ~Output() = default;
  virtual void add_sample(const SampleView& /*sample*/) {}
  virtual void add_benchmark(const BenchmarkProfile& /*benchmark*/) {}
  virtual void finish(const ReportTotals& /*totals*/,
                      std::vector<std::string>& /*errors*/) {}
  // What the output writes into the report directory ("summary.json",
  // "*.svg"), for the terminal's closing line; "" for none.
  virtual std::string files() const { return ""; }
};

// "<index>_<sanitized name>": the stem of a benchmark's files (".harness"
// appended for its harness part).
std::string benchmark_stem(const BenchmarkProfile& benchmark);
// Writes `data` to `path` atomically; a failure is appended to `errors`.
void write_output_file(const std::string& path, const std::string& data,
                       std::vector<std::string>& errors);
// "12.34": `part` of `whole` in percent with two decimals.
std::string percent(uint64_t part, uint64_t whole);

// The .folded text of `stacks`: "a;b;c count" per stack (';' in a name
// written as ':').
std::string folded_text(const std::vector<FoldedStack>& stacks);

// <stem>.folded per benchmark (and <stem>.harness.folded): "a;b;c count".
std::unique_ptr<Output> make_folded_output(const ReportDir& dir);
// <stem>.svg (and <stem>.harness.svg): render_flamegraph of the stacks.
std::unique_ptr<Output> make_flamegraph_output(const ReportDir& dir);
// summary.json: totals, and per benchmark its counts, top functions and
// the names of the .folded/.svg files the two outputs above write for it.
std::unique_ptr<Output> make_summary_json_output(const ReportDir& dir);
// `perf script`'s text, to `out`, for every sample read.
std::unique_ptr<Output> make_perf_script_output(std::ostream& out,
                                                Symbolizer& symbolizer);
// profile.speedscope.json: the speedscope file format, one sampled profile
// per benchmark over one shared frame table.
std::unique_ptr<Output> make_speedscope_output(const ReportDir& dir);

}  // namespace runner::report
