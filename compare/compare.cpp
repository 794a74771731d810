#include "compare/compare.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <map>
#include <set>

#include "base/base.hpp"
#include "compare/interleaved.hpp"
#include "compare/paired.hpp"
#include "compare/render.hpp"
#include "compare/samples.hpp"
#include "compare/verdict.hpp"
#include "report/report.hpp"

namespace runner::compare {
namespace {

using format::BenchmarkComparison;
using format::Verdict;

using Layout = format::ProfileLayout;
constexpr int kInterruptedExit = 130;
constexpr int kInconclusiveExit = 3;  // --fail-on-inconclusive

using StacksByUri = std::map<std::string, std::vector<report::FoldedStack>>;

BenchmarkComparison compare_one(const BenchmarkSamples& base,
                                const BenchmarkSamples& head,
                                const CompareOptions& options) {
  // The store's history holds wall times: no other metric's noise.
  std::span<const double> history;
  if (auto it = options.history_medians_ns.find(head.uri);
      it != options.history_medians_ns.end() &&
      options.settings.metric == format::Metric::kWall)
    history = it->second;
  BenchmarkComparison c =
      compare_benchmark(base.samples, head.samples, options.settings, history);
  c.uri = head.uri;
  c.name = head.name;
  return c;
}

int verdict_rank(Verdict verdict) {
  switch (verdict) {
    case Verdict::kRegression:
      return 0;
    case Verdict::kImprovement:
      return 1;
    case Verdict::kUnchanged:
      return 2;
    case Verdict::kInconclusive:
      break;
  }
  return 3;
}

// Regressions, improvements, unchanged, inconclusive; by |change| (largest
// first, none last), then by name.
void sort_benchmarks(std::vector<BenchmarkComparison>& benchmarks) {
  auto magnitude = [](const BenchmarkComparison& c) {
    return c.change && std::isfinite(*c.change) ? std::fabs(*c.change) : -1.0;
  };
  std::stable_sort(
      benchmarks.begin(), benchmarks.end(),
      [&](const BenchmarkComparison& a, const BenchmarkComparison& b) {
        int ra = verdict_rank(a.verdict), rb = verdict_rank(b.verdict);
        if (ra != rb) return ra < rb;
        double ma = magnitude(a), mb = magnitude(b);
        if (ma != mb) return ma > mb;
        return a.name < b.name;
      });
}

// The run-to-run spread of each benchmark found in several folders of a
// side.
void add_noise(const LoadedSide& side, const std::string& name,
               std::vector<format::NoiseEntry>& out) {
  for (const auto& b : side.benchmarks) {
    if (b.folder_medians_ns.size() < 2) continue;
    format::NoiseEntry entry;
    entry.side = name;
    entry.uri = b.uri;
    entry.name = b.name;
    entry.medians_ns = b.folder_medians_ns;
    entry.spread = relative_spread(b.folder_medians_ns);
    out.push_back(std::move(entry));
  }
}

// Matches by URI, compares, corrects and sorts.
format::CompareReport build_report(const CompareOptions& options,
                                   const LoadedSide& base,
                                   const LoadedSide& head) {
  format::CompareReport report;
  report.settings = options.settings;
  report.base.folders = options.base;
  report.base.benchmarks = base.benchmarks.size();
  report.head.folders = options.head;
  report.head.benchmarks = head.benchmarks.size();
  std::map<std::string, const BenchmarkSamples*> base_by_uri;
  for (const auto& b : base.benchmarks) base_by_uri[b.uri] = &b;
  std::set<std::string> matched;
  for (const auto& h : head.benchmarks) {
    auto it = base_by_uri.find(h.uri);
    if (it == base_by_uri.end()) {
      report.added.push_back({h.uri, h.name});
      continue;
    }
    matched.insert(h.uri);
    report.benchmarks.push_back(compare_one(*it->second, h, options));
  }
  for (const auto& b : base.benchmarks)
    if (!matched.contains(b.uri)) report.removed.push_back({b.uri, b.name});
  apply_verdicts(report.benchmarks, options.settings);
  sort_benchmarks(report.benchmarks);
  add_noise(base, "base", report.noise);
  add_noise(head, "head", report.noise);
  report.history = options.history_description;
  report.warnings = base.warnings;
  report.warnings.insert(report.warnings.end(), head.warnings.begin(),
                         head.warnings.end());
  return report;
}

// Every benchmark's stacks over the folders of a side (a folder without
// perf.pipedata has none; a profile that cannot be read is a warning).
StacksByUri load_stacks(const std::vector<std::string>& folders,
                        std::vector<std::string>& warnings) {
  StacksByUri out;
  for (const std::string& folder : folders) {
    if (::access(format::ProfileLayout(folder).pipedata().c_str(), F_OK) != 0)
      continue;
    auto loaded = report::load_benchmark_stacks(folder, warnings);
    if (!loaded) {
      warnings.push_back(folder +
                         ": profile not used: " + loaded.error().what());
      continue;
    }
    for (auto& benchmark : *loaded) {
      auto& stacks = out[benchmark.uri];
      stacks.insert(stacks.end(),
                    std::make_move_iterator(benchmark.stacks.begin()),
                    std::make_move_iterator(benchmark.stacks.end()));
    }
  }
  return out;
}

// A file name stem for a benchmark (ProfileLayout::file_stem), not hidden,
// unique in `used` ("-2", "-3", ... appended).
std::string unique_stem(const std::string& name, std::set<std::string>& used) {
  std::string stem = Layout::file_stem(name);
  if (stem.empty() || stem.front() == '.') stem.insert(0, "_");
  std::string candidate = stem;
  for (int n = 2; used.contains(candidate); ++n)
    candidate = stem + "-" + std::to_string(n);
  used.insert(candidate);
  return candidate;
}

// One benchmark's top functions, and its differential flamegraph when
// there is a folder to write it in; nothing when a side has no stacks.
void add_profile(BenchmarkComparison& c,
                 const std::vector<report::FoldedStack>& base,
                 const std::vector<report::FoldedStack>& head,
                 const CompareOptions& options, const std::string& out_dir,
                 std::set<std::string>& used,
                 std::vector<std::string>& errors) {
  if (base.empty() || head.empty()) return;
  c.top_functions = report::self_share_changes(base, head, options.top);
  if (out_dir.empty()) return;
  std::string file =
      unique_stem(c.name, used) + std::string(Layout::kCompareDiffSuffix);
  std::string path = out_dir + "/" + file;
  report::DiffContext context;
  context.headline = render_headline(c);
  // The change of time per iteration the verdict speaks of.
  if (c.change && *c.change > -1) context.time_ratio = 1 + *c.change;
  auto written = base::write_file_atomic(
      path, report::render_diff_flamegraph(c.name, base, head, context));
  if (written)
    c.diff_flamegraph = file;
  else
    errors.push_back(base::write_error(path, written.error()));
}

// Per benchmark with stacks on both sides: the top functions, and the
// differential flamegraph when there is a folder to write it in.
void add_profiles(format::CompareReport& report, const CompareOptions& options,
                  const std::string& out_dir,
                  std::vector<std::string>& errors) {
  StacksByUri base = load_stacks(options.base, report.warnings);
  if (base.empty()) return;
  StacksByUri head = load_stacks(options.head, report.warnings);
  std::set<std::string> used;
  for (auto& c : report.benchmarks) {
    auto b = base.find(c.uri), h = head.find(c.uri);
    if (b != base.end() && h != head.end())
      add_profile(c, b->second, h->second, options, out_dir, used, errors);
  }
}

// The compare folder: created if missing; a symlink, a non-directory or a
// folder of another user is refused.
std::string prepare_out_dir(const CompareOptions& options,
                            std::vector<std::string>& errors) {
  std::string dir = options.out_dir;
  if (dir.empty() && !options.settings.paired)
    dir = options.head.front() + "/" + std::string(Layout::kCompareDir);
  if (dir.empty()) return dir;
  auto prepared = base::prepare_private_directory(dir);
  if (prepared) return dir;
  errors.push_back("output folder: " + prepared.error().what());
  return "";
}

void write_outputs(const format::CompareReport& report,
                   const std::string& out_dir,
                   std::vector<std::string>& errors) {
  if (out_dir.empty()) return;
  for (const auto& [name, data] :
       {std::pair{Layout::kCompareJson, format::write_compare_report(report)},
        std::pair{Layout::kCompareMarkdown, render_markdown(report)}}) {
    std::string path = out_dir + "/" + std::string(name);
    auto written = base::write_file_atomic(path, data);
    if (!written) errors.push_back(base::write_error(path, written.error()));
  }
}

std::string render(const format::CompareReport& report, OutputFormat format) {
  switch (format) {
    case OutputFormat::kMarkdown:
      return render_markdown(report);
    case OutputFormat::kJson:
      return format::write_compare_report(report);
    case OutputFormat::kText:
      break;
  }
  return render_text(report);
}

// Prints the report, then the errors (one line each); the exit code.
int finish(const format::CompareReport& report, const CompareOptions& options,
           const std::vector<std::string>& errors, std::ostream& out,
           std::ostream& err) {
  if (options.on_report) options.on_report(report);
  out << render(report, options.format);
  out.flush();
  for (const std::string& error : errors)
    err << "runner compare: " << error << "\n";
  if (!errors.empty()) return 2;
  // The exit status says what compare.json's verdict says (with nothing
  // compared, that is inconclusive, but no benchmark is).
  const Verdict overall = format::overall_verdict(report.benchmarks);
  if (overall == Verdict::kRegression) return 1;
  if (options.fail_on_inconclusive && overall == Verdict::kInconclusive &&
      !report.benchmarks.empty())
    return kInconclusiveExit;
  return 0;
}

int run_paired_mode(const CompareOptions& options, std::ostream& out,
                    std::ostream& err) {
  auto report = run_paired(options, err);
  if (!report) {
    err << "runner compare: " << report.error().what() << "\n";
    // Interrupted (Ctrl-C, SIGTERM): 130, as a shell reports an interrupted
    // command; any other failure is bad input.
    return report.error().code() == EINTR ? kInterruptedExit : 2;
  }
  std::vector<std::string> errors;
  std::string out_dir = prepare_out_dir(options, errors);
  write_outputs(*report, out_dir, errors);
  return finish(*report, options, errors, out, err);
}

// --interleaved: the two benchmarks of one folder, A (BASE) and B (HEAD),
// compared pair by pair.
int run_interleaved_mode(const CompareOptions& options, std::ostream& out,
                         std::ostream& err) {
  const std::string& folder = options.head.front();
  auto pair = load_interleaved(folder, options.settings.metric);
  if (!pair) {
    err << "runner compare: " << pair.error().what() << "\n";
    return 2;
  }
  format::CompareReport report;
  report.settings = options.settings;
  report.settings.paired = true;
  report.base.folders = report.head.folders = {folder};
  report.base.command = pair->base.name;
  report.head.command = pair->head.name;
  report.base.benchmarks = report.head.benchmarks = 1;
  BenchmarkComparison c =
      compare_paired(pair->base.samples.times_ns, pair->head.samples.times_ns,
                     report.settings);
  c.uri = pair->head.uri;
  c.name = pair->head.name + " vs " + pair->base.name;
  c.base.folders = c.head.folders = 1;  // rounds of one run, not commands
  report.benchmarks.push_back(std::move(c));
  apply_verdicts(report.benchmarks, report.settings);
  report.warnings = std::move(pair->warnings);
  std::vector<std::string> errors;
  const std::string out_dir = prepare_out_dir(options, errors);
  StacksByUri stacks = load_stacks({folder}, report.warnings);
  std::set<std::string> used;
  add_profile(report.benchmarks.front(), stacks[pair->base.uri],
              stacks[pair->head.uri], options, out_dir, used, errors);
  write_outputs(report, out_dir, errors);
  return finish(report, options, errors, out, err);
}

}  // namespace

int run_compare(const CompareOptions& options, std::ostream& out,
                std::ostream& err) {
  if (options.base.empty() || options.head.empty()) {
    err << "runner compare: missing "
        << (options.base.empty() ? "BASE" : "HEAD") << "\n";
    return 2;
  }
  if (options.settings.paired) return run_paired_mode(options, out, err);
  if (options.interleaved) return run_interleaved_mode(options, out, err);
  auto base = load_side("base", options.base, options.settings.metric);
  if (!base) {
    err << "runner compare: " << base.error().what() << "\n";
    return 2;
  }
  auto head = load_side("head", options.head, options.settings.metric);
  if (!head) {
    err << "runner compare: " << head.error().what() << "\n";
    return 2;
  }
  format::CompareReport report = build_report(options, *base, *head);
  std::vector<std::string> errors;
  std::string out_dir = prepare_out_dir(options, errors);
  add_profiles(report, options, out_dir, errors);
  write_outputs(report, out_dir, errors);
  return finish(report, options, errors, out, err);
}

}  // namespace runner::compare
