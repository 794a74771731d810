// `runner history` (see history_command.hpp).
#include "agent/history_command.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "base/base.hpp"
#include "compare/compare.hpp"
#include "report/report.hpp"

namespace runner::agent {
namespace {

using history::History;

// Runs of the noise estimate of a change point's comparison: the stored
// runs before it (the level it left).
constexpr size_t kNoiseRuns = 10;

// The output folder, created when missing: a folder only we control
// (base::prepare_private_directory), so that nobody plants a symlink among
// the files and folders written there.
base::Status prepare_out_dir(const std::string& dir) {
  return base::prepare_private_directory(dir);
}

// A change point's two runs: the last before the step, the first of it.
struct Straddle {
  size_t before = 0, after = 0;  // indexes in History::runs
  auto operator<=>(const Straddle&) const = default;
};

// The newest `count` distinct pairs of runs around change points.
std::vector<Straddle> newest_straddles(const History& h, size_t count) {
  std::set<Straddle> all;
  for (const auto& s : h.series)
    for (const auto& c : s.changes)
      all.insert(
          {s.points.at(c.step.start - 1).run, s.points.at(c.step.start).run});
  std::vector<Straddle> out(all.begin(), all.end());
  std::sort(out.begin(), out.end(), [](const Straddle& a, const Straddle& b) {
    return a.after > b.after;
  });
  if (out.size() > count) out.resize(count);
  return out;
}

// Per benchmark URI, the medians of the runs before `before` (at most
// kNoiseRuns, it included): the noise `runner compare --store` would use.
std::map<std::string, std::vector<double>> noise_medians(
    const upload::BranchRuns& runs, size_t before) {
  std::map<std::string, std::vector<double>> out;
  const size_t first = before + 1 > kNoiseRuns ? before + 1 - kNoiseRuns : 0;
  for (size_t i = first; i <= before; ++i)
    for (const auto& m : runs.runs[i].record.benchmark_medians)
      out[m.uri].push_back(m.median_ns);
  return out;
}

// The runs fetched from the store, each once: index in History::runs ->
// its folder in the store cache.
class FetchedRuns {
 public:
  FetchedRuns(upload::StoreHistory& store, const upload::BranchRuns& runs)
      : store_(&store), runs_(&runs) {}
  base::Result<std::string> folder(size_t run) {
    if (auto it = folders_.find(run); it != folders_.end()) return it->second;
    auto folder = store_->fetch(runs_->runs.at(run));
    if (folder) folders_[run] = *folder;
    return folder;
  }
  const std::map<size_t, std::string>& all() const { return folders_; }

 private:
  upload::StoreHistory* store_;
  const upload::BranchRuns* runs_;
  std::map<size_t, std::string> folders_;
};

struct PairResult {
  std::string folder;  // relative to the output folder
  std::map<std::string, std::pair<std::string, std::string>> by_uri;
};

// `runner compare` of the two runs into <out>/changes/<before>_<after>/.
base::Result<PairResult> compare_pair(FetchedRuns& fetched,
                                      const upload::BranchRuns& runs,
                                      const Straddle& pair,
                                      const std::string& out_dir,
                                      double threshold, format::Metric metric) {
  auto base_folder = fetched.folder(pair.before);
  if (!base_folder) return base_folder.error();
  auto head_folder = fetched.folder(pair.after);
  if (!head_folder) return head_folder.error();
  PairResult result;
  result.folder = "changes/" + runs.runs[pair.before].record.run_id + "_" +
                  runs.runs[pair.after].record.run_id;
  compare::CompareOptions options;
  options.base = {*base_folder};
  options.head = {*head_folder};
  options.out_dir = out_dir + "/" + result.folder;
  if (auto made = base::make_directories(options.out_dir); !made)
    return made.error();
  // The stored runs' medians are wall times: the noise of wall time only.
  if (metric == format::Metric::kWall) {
    options.history_medians_ns = noise_medians(runs, pair.before);
    options.history_description = "the stored runs before the change";
  }
  options.format = compare::OutputFormat::kJson;
  // The smallest change reported as a change point counts here too.
  options.settings.threshold = threshold;
  options.settings.metric = metric;
  options.on_report = [&](const format::CompareReport& report) {
    for (const auto& b : report.benchmarks)
      result.by_uri[b.uri] = {std::string(format::verdict_name(b.verdict)),
                              b.diff_flamegraph};
  };
  std::ostringstream out, err;
  const int code = compare::run_compare(options, out, err);
  if (code == 2) return base::Error("runner compare: " + err.str());
  return result;
}

// The result of one pair into the changes it straddles.
void link_changes(History& h, const Straddle& pair, const PairResult& result) {
  for (auto& s : h.series)
    for (auto& c : s.changes) {
      if (s.points[c.step.start - 1].run != pair.before ||
          s.points[c.step.start].run != pair.after)
        continue;
      c.compare_link = result.folder + "/compare.md";
      auto it = result.by_uri.find(s.uri);
      if (it == result.by_uri.end()) continue;
      c.verdict = it->second.first;
      if (!it->second.second.empty())
        c.diff_link = result.folder + "/" + it->second.second;
    }
}

// The comparisons of the newest change points, into their Changes.
void add_comparisons(History& h, FetchedRuns& fetched,
                     const upload::BranchRuns& runs,
                     const HistoryOptions& options) {
  for (const Straddle& pair : newest_straddles(h, options.compares)) {
    auto result = compare_pair(fetched, runs, pair, options.out_dir,
                               options.detect.min_change, options.metric);
    if (result) {
      link_changes(h, pair, *result);
      continue;
    }
    h.warnings.push_back("the change at commit " +
                         h.runs[pair.after].commit.substr(0, 12) +
                         " was not compared: " + result.error().what());
  }
}

std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

// The flamegraphs of every fetched run (and of the newest run) into
// <out>/runs/<run id>/, linked from its Run.
void add_reports(History& h, FetchedRuns& fetched,
                 const HistoryOptions& options) {
  if (options.compares == 0 || h.runs.empty()) return;
  if (auto newest = fetched.folder(h.runs.size() - 1); !newest)
    h.warnings.push_back("the newest run was not fetched: " +
                         newest.error().what());
  for (const auto& [run, folder] : fetched.all()) {
    struct stat st {};
    const std::string pipedata = format::ProfileLayout(folder).pipedata();
    if (::stat(pipedata.c_str(), &st) != 0) continue;  // results only
    report::ReportOptions report;
    report.folder = folder;
    report.out_dir = options.out_dir + "/runs/" + h.runs[run].run_id;
    std::ostringstream out, err;
    auto result = report::run_report(report, out, err);
    if (result && result->exit_code == 0)
      h.runs[run].report_link = "runs/" + h.runs[run].run_id + "/";
    else
      h.warnings.push_back(
          "no flamegraphs of run " + h.runs[run].run_id + ": " +
          first_line(result ? err.str() : result.error().what()));
  }
}

// The outputs of a history, each made once: written to the output folder
// and printed from there.
struct Outputs {
  std::string json, markdown;
};

Outputs render(const History& h) {
  std::ostringstream markdown;
  history::write_markdown(h, markdown);
  return {history::write_json(h), markdown.str()};
}

// history.json, history.md and index.html into the output folder.
std::vector<std::string> write_outputs(const History& h, const Outputs& o,
                                       const std::string& dir) {
  const std::pair<std::string, std::string> files[] = {
      {"history.json", o.json},
      {"history.md", o.markdown},
      {"index.html", history::write_page(h)}};
  std::vector<std::string> errors;
  for (const auto& [name, text] : files) {
    const std::string path = dir + "/" + name;
    if (auto s = base::write_file_atomic(path, text); !s)
      errors.push_back(base::write_error(path, s.error()));
  }
  return errors;
}

void print(const History& h, const Outputs& o, const HistoryOptions& options) {
  switch (options.format) {
    case history::OutputFormat::kText:
      history::write_text(h, std::cout);
      break;
    case history::OutputFormat::kMarkdown:
      std::cout << o.markdown;
      break;
    case history::OutputFormat::kJson:
      std::cout << o.json;
      break;
    case history::OutputFormat::kHtml:
      std::cout << options.out_dir << "/index.html\n";
      break;
  }
  std::cout.flush();
}

History history_of(const upload::BranchRuns& runs,
                   const upload::StoreHistory& store,
                   const HistoryOptions& options) {
  std::vector<format::StoreRecord> records;
  for (const auto& r : runs.runs) records.push_back(r.record);
  History h = history::build_history(records, options.detect, options.metric);
  h.store = store.store_name();
  h.owner = store.facts().owner;
  h.repository = store.facts().repository;
  h.branch = store.branch();
  h.skipped_records = runs.skipped;
  if (runs.not_read > 0)
    h.warnings.push_back(
        "the time budget ran out: " + std::to_string(runs.not_read) +
        " older records were not read");
  return h;
}

}  // namespace

int history_command(const HistoryOptions& options) {
  upload::HistoryQuery query = options.query;
  if (query.checkout.empty()) query.checkout = ".";
  auto store = upload::StoreHistory::open(query, upload::current_environment(),
                                          std::cerr);
  if (!store) {
    std::fprintf(stderr, "runner history: %s\n", store.error().what().c_str());
    return 2;
  }
  auto runs = store->runs();
  if (!runs) {
    std::fprintf(stderr, "runner history: %s\n", runs.error().what().c_str());
    return 2;
  }
  if (runs->runs.empty()) {
    std::fprintf(stderr,
                 "runner history: no run of a push to '%s' in %s (%zu "
                 "records listed, %zu skipped)\n",
                 upload::printable(store->branch()).c_str(),
                 store->store_name().c_str(), runs->listed, runs->skipped);
    return 2;
  }
  History h = history_of(*runs, *store, options);
  if (h.series.empty()) {
    std::fprintf(stderr,
                 "runner history: none of the %zu runs of '%s' recorded %s "
                 "per iteration\n",
                 h.runs.size(), upload::printable(store->branch()).c_str(),
                 h.metric.c_str());
    return 2;
  }
  if (auto s = prepare_out_dir(options.out_dir); !s) {
    std::fprintf(stderr, "runner history: %s\n", s.error().what().c_str());
    return 2;
  }
  FetchedRuns fetched(*store, *runs);
  add_comparisons(h, fetched, *runs, options);
  add_reports(h, fetched, options);
  const Outputs outputs = render(h);
  const auto errors = write_outputs(h, outputs, options.out_dir);
  for (const auto& e : errors)
    std::fprintf(stderr, "runner history: %s\n", e.c_str());
  print(h, outputs, options);
  std::fprintf(stderr,
               "runner history: %zu runs of '%s' (%zu records from the "
               "cache, %zu skipped), %zu benchmarks, written to %s/\n",
               h.runs.size(), upload::printable(h.branch).c_str(),
               runs->from_cache, runs->skipped, h.series.size(),
               options.out_dir.c_str());
  return errors.empty() && runs->not_read == 0 ? 0 : 1;
}

}  // namespace runner::agent
