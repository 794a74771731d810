#include "compare/samples.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>

#include "compare/compare.hpp"
#include "compare/stats.hpp"

namespace runner::compare {
namespace {

namespace fs = std::filesystem;
using format::SampleSource;

constexpr uint64_t kMaxResultsFile = uint64_t{64} << 20;
constexpr uint64_t kMaxTimestampsFile = uint64_t{256} << 20;
// A window holding more wall time than its measured rounds by this share,
// with no warmup reported, gets a warning.
constexpr double kUnexplainedWindowShare = 0.10;

// What one folder says about one benchmark.
struct FolderBenchmark {
  std::string folder, uri, name;
  std::vector<format::BenchmarkResult> results;  // entries of results/*.json
  std::vector<uint64_t> marker_rounds_ns;        // round durations
  // The chosen data: raw per-iteration times (source kRounds or kMarkers)
  // or the summary.
  std::vector<double> times_ns;
  std::optional<format::BenchmarkStats> summary;
  SampleSource source = SampleSource::kSummary;
  // runner.counters.json: the windows this URI took, and what they give.
  std::vector<format::CounterWindow> windows;
  FolderCounters counters;
};

// A folder's benchmarks by URI, in order of first appearance.
struct FolderData {
  std::vector<FolderBenchmark> benchmarks;
  std::map<std::string, size_t> index;
  // runner.counters.json's counters; nullopt without a readable file.
  std::optional<std::vector<format::CounterInfo>> counters;

  FolderBenchmark& get(const std::string& uri) {
    auto [it, added] = index.emplace(uri, benchmarks.size());
    if (added) {
      benchmarks.emplace_back();
      benchmarks.back().uri = uri;
    }
    return benchmarks[it->second];
  }
};

// The last "::" part of a URI: the name of a benchmark known only from
// markers.
std::string name_from_uri(const std::string& uri) {
  size_t at = uri.rfind("::");
  return at == std::string::npos ? uri : uri.substr(at + 2);
}

base::Status check_directory(const std::string& folder) {
  struct stat st {};
  if (::stat(folder.c_str(), &st) != 0)
    return errno == ENOENT ? base::Error("no such directory")
                           : base::errno_error("stat");
  if (!S_ISDIR(st.st_mode)) return base::Error("not a directory");
  return {};
}

// The regular files results/*.json, by name; none when results/ is absent.
// Other entries named *.json (symbolic links, FIFOs, ...) are not read, and
// said so in `warnings`.
base::Result<std::vector<std::string>> results_files(
    const format::ProfileLayout& layout, std::vector<std::string>& warnings) {
  std::vector<std::string> files;
  std::error_code ec;
  auto status = fs::symlink_status(layout.results_dir(), ec);
  if (ec || status.type() == fs::file_type::not_found) return files;
  if (status.type() != fs::file_type::directory)
    return base::Error("results is not a directory");
  for (fs::directory_iterator it(layout.results_dir(), ec), end;
       !ec && it != end; it.increment(ec)) {
    const fs::path& path = it->path();
    if (path.extension() != ".json") continue;
    if (it->is_regular_file(ec) && !it->is_symlink(ec))
      files.push_back(path.filename().string());
    else
      warnings.push_back(path.string() + ": not a regular file: not read");
  }
  if (ec) return base::Error("results: " + ec.message());
  std::sort(files.begin(), files.end());
  return files;
}

// Every benchmark of results/*.json into `data`; the number of files read.
base::Result<size_t> read_results(const format::ProfileLayout& layout,
                                  FolderData& data,
                                  std::vector<std::string>& warnings) {
  auto files = results_files(layout, warnings);
  if (!files) return std::move(files.error());
  for (const std::string& file : *files) {
    const std::string rel =
        std::string(format::ProfileLayout::kResultsDir) + "/" + file;
    base::ReadOptions options;
    options.max_size = kMaxResultsFile;
    RUNNER_ASSIGN_OR_RETURN(
        std::string text, base::read_file(layout.folder() + "/" + rel, options),
        rel);
    RUNNER_ASSIGN_OR_RETURN(format::WalltimeResults results,
                            format::read_walltime_results(text), rel);
    for (auto& result : results.benchmarks) {
      FolderBenchmark& b = data.get(result.uri);
      if (b.name.empty()) b.name = result.name;
      b.results.push_back(std::move(result));
    }
  }
  return files->size();
}

// ExecutionTimestamps.msgpack when present and readable (else a warning).
std::optional<format::ExecutionTimestamps> read_timestamps(
    const format::ProfileLayout& layout, std::vector<std::string>& warnings) {
  base::ReadOptions options;
  options.max_size = kMaxTimestampsFile;
  auto bytes = base::read_file(layout.execution_timestamps(), options);
  if (!bytes) {
    if (bytes.error().code() != ENOENT)
      warnings.push_back(bytes.error().what() + ": markers not used");
    return std::nullopt;
  }
  std::vector<std::string> notes;
  auto decoded = format::read_execution_timestamps(*bytes, notes);
  for (auto& note : notes) warnings.push_back(layout.folder() + ": " + note);
  if (!decoded) {
    warnings.push_back(layout.folder() + ": " + decoded.error().what() +
                       ": markers not used");
    return std::nullopt;
  }
  if (!decoded->has_value()) return format::ExecutionTimestamps{};
  return std::move(**decoded);
}

bool is_round_start(const std::string& kind) {
  return kind == "RoundStart" || kind == "BenchmarkStart";
}
bool is_round_end(const std::string& kind) {
  return kind == "RoundEnd" || kind == "BenchmarkEnd";
}

// Start/End pairs in arrival order (an End without its Start, or before
// it, is skipped).
std::vector<std::pair<uint64_t, uint64_t>> round_intervals(
    const std::vector<format::Marker>& markers) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  bool open = false;
  uint64_t start = 0;
  for (const auto& marker : markers) {
    if (is_round_start(marker.kind)) {
      open = true;
      start = marker.timestamp;
    }
    if (!is_round_end(marker.kind)) continue;
    if (open && start <= marker.timestamp)
      out.emplace_back(start, marker.timestamp);
    open = false;
  }
  return out;
}

using UriList = std::vector<std::pair<uint64_t, std::string>>;

UriList uris_in_time_order(const format::ExecutionTimestamps& ts) {
  UriList uris = ts.uri_by_ts;
  std::stable_sort(uris.begin(), uris.end(), [](const auto& a, const auto& b) {
    return a.first < b.first;
  });
  return uris;
}

// The index in `uris` (time order) of the URI an interval [start, end]
// belongs to: the first announced at or after its end, when the interval
// started after the URI before it. One binary search.
std::optional<size_t> owner_of(const UriList& uris, uint64_t start,
                               uint64_t end) {
  auto it = std::lower_bound(
      uris.begin(), uris.end(), end,
      [](const auto& uri, uint64_t when) { return uri.first < when; });
  if (it == uris.end()) return std::nullopt;
  const auto k = static_cast<size_t>(it - uris.begin());
  const uint64_t previous = k == 0 ? 0 : uris[k - 1].first;
  if (start < previous) return std::nullopt;
  return k;
}

// Each URI's rounds: the pairs after the previous URI's timestamp (in time
// order) and not after its own, in arrival order. A round belongs to one
// URI at most: the first whose span holds it (a round of no length at a
// URI's very timestamp is that URI's, not also the next one's). One binary
// search per round: O((URIs + rounds) log URIs).
void assign_marker_rounds(const format::ExecutionTimestamps& ts,
                          FolderData& data) {
  const UriList uris = uris_in_time_order(ts);
  std::vector<std::vector<uint64_t>> rounds_of(uris.size());
  for (const auto& [start, end] : round_intervals(ts.markers)) {
    if (auto k = owner_of(uris, start, end))
      rounds_of[*k].push_back(end - start);
  }
  for (size_t k = 0; k < uris.size(); ++k) {
    const std::string& uri = uris[k].second;
    const auto& rounds = rounds_of[k];
    if (rounds.empty() && !data.index.contains(uri)) continue;
    auto& target = data.get(uri).marker_rounds_ns;
    target.insert(target.end(), rounds.begin(), rounds.end());
  }
}

// runner.counters.json when present and readable (else a warning).
std::optional<format::RunCounters> read_counters(
    const format::ProfileLayout& layout, std::vector<std::string>& warnings) {
  base::ReadOptions options;
  options.max_size = format::kMaxRunCountersBytes;
  auto text = base::read_file(layout.run_counters(), options);
  if (!text) {
    if (text.error().code() != ENOENT)
      warnings.push_back(text.error().what() + ": CPU time not used");
    return std::nullopt;
  }
  auto counters = format::read_run_counters(*text);
  if (!counters) {
    warnings.push_back(layout.folder() + ": " + counters.error().what() +
                       ": CPU time not used");
    return std::nullopt;
  }
  return std::move(*counters);
}

// Each window to the benchmark whose URI follows it (as rounds); windows of
// URIs without results or markers are left out.
void assign_windows(const format::ExecutionTimestamps& ts,
                    const format::RunCounters& counters, FolderData& data) {
  const UriList uris = uris_in_time_order(ts);
  for (const format::CounterWindow& w : counters.windows) {
    auto k = owner_of(uris, w.start_ns, w.stop_ns);
    if (!k) continue;
    auto it = data.index.find(uris[*k].second);
    if (it != data.index.end())
      data.benchmarks[it->second].windows.push_back(w);
  }
}

// The per-iteration times of a results entry's round arrays; nullopt when
// it has none. format::read_walltime_results only hands over arrays of equal
// length without a round of 0 iterations.
std::optional<std::vector<double>> round_times(
    const format::BenchmarkResult& result) {
  const auto& times = result.times_per_round_ns;
  const auto& iters = result.iters_per_round;
  if (times.empty()) return std::nullopt;
  std::vector<double> out;
  for (size_t i = 0; i < times.size(); ++i)
    out.push_back(static_cast<double>(times[i]) /
                  static_cast<double>(iters[i]));
  return out;
}

// (1) the round arrays of every results entry of the benchmark.
bool choose_rounds(FolderBenchmark& b) {
  if (b.results.empty()) return false;
  std::vector<double> all;
  for (const auto& result : b.results) {
    auto times = round_times(result);
    if (!times) return false;
    all.insert(all.end(), times->begin(), times->end());
  }
  b.times_ns = std::move(all);
  b.source = SampleSource::kRounds;
  return true;
}

// (2) the markers: per round when the benchmark has no results, per
// iteration when its one results entry agrees on the round count.
bool choose_markers(FolderBenchmark& b, const std::string& where,
                    std::vector<std::string>& warnings) {
  if (b.marker_rounds_ns.empty()) return false;
  double divisor = 1;
  if (!b.results.empty()) {
    const auto& stats = b.results.front().stats;
    if (b.results.size() != 1 || stats.iter_per_round == 0 ||
        stats.rounds != b.marker_rounds_ns.size()) {
      warnings.push_back(
          where + ": " + std::to_string(b.marker_rounds_ns.size()) +
          " marker rounds do not match the results (" +
          std::to_string(stats.rounds) + " rounds): using the summary stats");
      return false;
    }
    divisor = static_cast<double>(stats.iter_per_round);
  }
  for (uint64_t ns : b.marker_rounds_ns)
    b.times_ns.push_back(static_cast<double>(ns) / divisor);
  b.source = SampleSource::kMarkers;
  return true;
}

void choose_data(FolderBenchmark& b, const std::string& folder,
                 std::vector<std::string>& warnings) {
  const std::string where = folder + ": " + b.uri;
  if (choose_rounds(b)) return;
  if (choose_markers(b, where, warnings)) return;
  std::vector<format::BenchmarkStats> parts;
  for (const auto& result : b.results) parts.push_back(result.stats);
  b.summary = pool_summaries(parts);
  b.source = SampleSource::kSummary;
}

// The iterations a benchmark's results say were measured, their wall time,
// and the warmup iterations they report (doubles: a hostile file's product
// of rounds and iter_per_round cannot wrap).
struct Iterations {
  double measured = 0, measured_wall_ns = 0, warmup = 0;
};

std::optional<Iterations> iterations_of(const FolderBenchmark& b) {
  Iterations it;
  for (const auto& r : b.results) {
    if (!r.iters_per_round.empty()) {
      for (size_t i = 0; i < r.iters_per_round.size(); ++i) {
        it.measured += static_cast<double>(r.iters_per_round[i]);
        it.measured_wall_ns += static_cast<double>(r.times_per_round_ns[i]);
      }
    } else {
      if (r.stats.iter_per_round == 0) return std::nullopt;
      it.measured += static_cast<double>(r.stats.rounds) *
                     static_cast<double>(r.stats.iter_per_round);
      it.measured_wall_ns += r.stats.total_time * 1e9;
    }
    it.warmup += static_cast<double>(r.stats.warmup_iters);
  }
  if (b.results.empty() || !(it.measured > 0)) return std::nullopt;
  return it;
}

// The windows' sums of one counter; nullopt unless every window has it.
std::optional<double> window_sum(
    const std::vector<format::CounterWindow>& windows,
    std::optional<format::CounterDelta> format::CounterWindow::*counter,
    bool& multiplexed) {
  double sum = 0;
  for (const auto& w : windows) {
    const auto& delta = w.*counter;
    if (!delta) return std::nullopt;
    sum += static_cast<double>(delta->value);
    multiplexed = multiplexed || delta->multiplexed();
  }
  return sum;
}

// How many warmup iterations the windows held (see samples.hpp): all the
// reported ones when the windows' unmeasured wall time holds at least half
// of them at the measured pace, else none; warns about unmeasured time no
// reported warmup explains.
double warmup_inside(const FolderBenchmark& b, const Iterations& it,
                     const std::string& where,
                     std::vector<std::string>& warnings) {
  double window_wall = 0;
  for (const auto& w : b.windows)
    window_wall += static_cast<double>(w.stop_ns - w.start_ns);
  const double unmeasured = window_wall - it.measured_wall_ns;
  const double pace = it.measured_wall_ns / it.measured;
  if (it.warmup > 0 && pace > 0 && unmeasured >= 0.5 * it.warmup * pace)
    return it.warmup;
  if (window_wall > 0 && unmeasured > kUnexplainedWindowShare * window_wall &&
      (it.warmup == 0 || pace <= 0)) {
    warnings.push_back(
        where + ": " +
        std::to_string(static_cast<int>(100 * unmeasured / window_wall)) +
        "% of its benchmark windows is outside the measured rounds and no "
        "warmup iterations are reported: its CPU time per iteration "
        "includes that time");
  }
  return 0;
}

void count_cpu(FolderBenchmark& b, const std::string& where,
               std::vector<std::string>& warnings) {
  FolderCounters& c = b.counters;
  c.windows = b.windows.size();
  if (b.windows.empty()) return;
  const auto it = iterations_of(b);
  if (!it) {
    warnings.push_back(where +
                       ": no iteration count in the results: no CPU time "
                       "per iteration");
    return;
  }
  const double iterations =
      it->measured + warmup_inside(b, *it, where, warnings);
  c.iterations = static_cast<uint64_t>(iterations);
  c.warmup_iterations = static_cast<uint64_t>(iterations - it->measured);
  bool task_multiplexed = false;
  if (auto ns = window_sum(b.windows, &format::CounterWindow::task_clock,
                           task_multiplexed)) {
    c.task_clock_ns = static_cast<uint64_t>(*ns);
    c.cpu_ns_per_iter = *ns / iterations;
  }
  if (auto n = window_sum(b.windows, &format::CounterWindow::instructions,
                          c.multiplexed))
    c.instructions_per_iter = *n / iterations;
  if (auto n =
          window_sum(b.windows, &format::CounterWindow::cycles, c.multiplexed))
    c.cycles_per_iter = *n / iterations;
  if (c.multiplexed)
    warnings.push_back(where +
                       ": instructions or cycles were multiplexed (counted "
                       "part of a window only): raw counts, not scaled");
}

// Every benchmark's FolderCounters from the folder's runner.counters.json.
void count_folder(FolderData& data, const format::RunCounters& counters,
                  const std::string& folder,
                  std::vector<std::string>& warnings) {
  bool user_only = false;
  for (const auto& info : counters.counters)
    if (info.counted && info.user_only &&
        info.name != format::kTaskClockCounter)
      user_only = true;
  if (counters.lost_windows > 0)
    warnings.push_back(folder + ": " + std::to_string(counters.lost_windows) +
                       " benchmark window(s) have no counts (" +
                       counters.lost_reason + ")");
  for (auto& b : data.benchmarks) {
    b.counters.counters_file = true;
    b.counters.user_only = user_only;
    b.counters.lost_windows = counters.lost_windows;
    count_cpu(b, folder + ": " + b.uri, warnings);
  }
}

// `cpu_warnings` gets what concerns runner.counters.json alone.
base::Result<FolderData> load_folder(const std::string& folder,
                                     std::vector<std::string>& warnings,
                                     std::vector<std::string>& cpu_warnings) {
  if (auto status = check_directory(folder); !status)
    return std::move(status.error());
  format::ProfileLayout layout(folder);
  FolderData data;
  const size_t warned = warnings.size();
  auto files = read_results(layout, data, warnings);
  if (!files) return std::move(files.error());
  auto timestamps = read_timestamps(layout, warnings);
  if (timestamps) assign_marker_rounds(*timestamps, data);
  auto counters = read_counters(layout, cpu_warnings);
  if (counters && !timestamps)
    cpu_warnings.push_back(folder +
                           ": runner.counters.json without "
                           "ExecutionTimestamps.msgpack: windows not assigned");
  if (data.benchmarks.empty()) {
    // The first thing skipped in this folder says why, if anything was.
    const std::string skipped =
        warnings.size() > warned ? "; " + warnings[warned] : "";
    return base::Error(
        (*files > 0 || timestamps
             ? "no results (no benchmark in results/*.json, no rounds in "
               "ExecutionTimestamps.msgpack"
             : "no results (no results/*.json, no "
               "ExecutionTimestamps.msgpack") +
        skipped + ")");
  }
  for (auto& b : data.benchmarks) {
    b.folder = folder;
    if (b.name.empty()) b.name = name_from_uri(b.uri);
    choose_data(b, folder, warnings);
  }
  if (counters) data.counters = counters->counters;
  if (counters && timestamps) {
    assign_windows(*timestamps, *counters, data);
    count_folder(data, *counters, folder, cpu_warnings);
  }
  return data;
}

// --metric other than wall: the folder has runner.counters.json and it
// counted the metric's counter (else why not).
base::Result<FolderData> check_metric(FolderData data, format::Metric metric) {
  if (metric == format::Metric::kWall) return data;
  const std::string option =
      "--metric " + std::string(format::metric_name(metric)) + ": ";
  if (!data.counters)
    return base::Error(option +
                       "no readable runner.counters.json (the runner counts "
                       "CPU time and instructions into it during the run)");
  const std::string_view name = metric == format::Metric::kInstructions
                                    ? format::kInstructionsCounter
                                    : format::kTaskClockCounter;
  for (const format::CounterInfo& info : *data.counters) {
    if (info.name != name) continue;
    if (info.counted) return data;
    const std::string why = " was not counted in this run (";
    return base::Error(option + std::string(name) + why + info.absent_reason +
                       ")");
  }
  return base::Error(option + std::string(name) +
                     " is not in runner.counters.json");
}

// A folder's median per iteration: its markers' median, else its results'
// as `runner upload --store` records them for the history
// (format::median_per_iteration_ns), so that a run and the stored runs it
// is held against are measured alike.
double folder_median(const FolderBenchmark& b) {
  if (b.source == SampleSource::kMarkers) return stats::median(b.times_ns);
  const auto medians = format::median_per_iteration_ns(b.results);
  return medians.empty() ? std::nan("") : medians.front().second;
}

// Pools one URI's data of several folders: raw rounds when every folder has
// them, else the summaries (raw folders summarized).
SideSamples pool_folders(const std::vector<const FolderBenchmark*>& parts,
                         const std::string& side, const std::string& uri,
                         std::vector<std::string>& warnings) {
  SideSamples out;
  out.folders = parts.size();
  bool all_raw = std::all_of(parts.begin(), parts.end(),
                             [](const auto* b) { return !b->summary; });
  if (all_raw) {
    out.source = SampleSource::kRounds;
    for (const auto* b : parts) {
      out.times_ns.insert(out.times_ns.end(), b->times_ns.begin(),
                          b->times_ns.end());
      if (b->source == SampleSource::kMarkers)
        out.source = SampleSource::kMarkers;
    }
    return out;
  }
  std::vector<format::BenchmarkStats> summaries;
  for (const auto* b : parts)
    summaries.push_back(b->summary ? *b->summary : summarize(b->times_ns));
  if (std::any_of(parts.begin(), parts.end(),
                  [](const auto* b) { return !b->summary; }))
    warnings.push_back(side + " " + uri +
                       ": some folders have only summary stats: all pooled "
                       "as summaries");
  out.summary = pool_summaries(summaries);
  out.source = SampleSource::kSummary;
  return out;
}

// --metric: the counter of one window.
const std::optional<format::CounterDelta>& window_count(
    const format::CounterWindow& w, format::Metric metric) {
  return metric == format::Metric::kInstructions ? w.instructions
                                                 : w.task_clock;
}

// The metric per iteration of each measured round, when each had its own
// window (one results entry with round arrays, as many windows as rounds,
// none holding warmup, each with the counter, instructions counted the
// whole window); else nullopt.
std::optional<std::vector<double>> window_rounds(const FolderBenchmark& b,
                                                 format::Metric metric) {
  if (b.source != SampleSource::kRounds || b.results.size() != 1 ||
      b.counters.warmup_iterations > 0)
    return std::nullopt;
  const std::vector<uint64_t>& iters = b.results.front().iters_per_round;
  if (iters.empty() || b.windows.size() != iters.size()) return std::nullopt;
  std::vector<double> out;
  for (size_t i = 0; i < iters.size(); ++i) {
    const auto& count = window_count(b.windows[i], metric);
    if (!count || count->multiplexed()) return std::nullopt;
    out.push_back(static_cast<double>(count->value) /
                  static_cast<double>(iters[i]));
  }
  return out;
}

std::string metric_words(format::Metric metric) {
  return metric == format::Metric::kInstructions ? "instructions" : "CPU time";
}

// The metric's per-run value of one folder, or why there is none.
base::Result<double> run_value(const FolderBenchmark& b,
                               format::Metric metric) {
  const FolderCounters& c = b.counters;
  const std::string where = "folder '" + b.folder + "': " + b.uri + ": ";
  if (metric == format::Metric::kInstructions && c.multiplexed)
    return base::Error(where +
                       "instructions were multiplexed (counted part of a "
                       "window only, the PMU being shared): partial counts");
  const auto& value = metric == format::Metric::kInstructions
                          ? c.instructions_per_iter
                          : c.cpu_ns_per_iter;
  if (value) return *value;
  return base::Error(where + "no " + metric_words(metric) + " per iteration (" +
                     (c.windows == 0 ? "no benchmark window"
                                     : "no iteration count or no count") +
                     ")");
}

// One URI's metric samples over several folders: per round when every
// folder has a window per round, else one value per folder.
SideSamples pool_metric(const std::vector<const FolderBenchmark*>& parts,
                        const std::string& side, format::Metric metric) {
  SideSamples out;
  out.folders = parts.size();
  std::vector<std::vector<double>> rounds;
  for (const auto* b : parts)
    if (auto r = window_rounds(*b, metric)) rounds.push_back(std::move(*r));
  if (rounds.size() == parts.size()) {
    out.source = SampleSource::kRounds;
    for (const auto& r : rounds) {
      out.times_ns.insert(out.times_ns.end(), r.begin(), r.end());
      out.folder_medians_ns.push_back(stats::median(r));
    }
  } else {
    out.source = SampleSource::kRuns;
    for (const auto* b : parts) {
      auto value = run_value(*b, metric);
      if (!value) {
        out.unavailable = side + " " + value.error().what();
        out.folder_medians_ns.clear();
        break;
      }
      out.folder_medians_ns.push_back(*value);
    }
  }
  for (const auto* b : parts)
    out.user_only = out.user_only || b->counters.user_only;
  return out;
}

LoadedSide pool_side(const std::vector<FolderData>& folders,
                     const std::string& side, format::Metric metric,
                     std::vector<std::string> warnings) {
  LoadedSide out;
  std::map<std::string, std::vector<const FolderBenchmark*>> by_uri;
  std::vector<std::string> order;
  for (const auto& folder : folders)
    for (const auto& b : folder.benchmarks) {
      auto& parts = by_uri[b.uri];
      if (parts.empty()) order.push_back(b.uri);
      parts.push_back(&b);
    }
  for (const std::string& uri : order) {
    const auto& parts = by_uri[uri];
    BenchmarkSamples samples;
    samples.uri = uri;
    samples.name = parts.front()->name;
    if (metric == format::Metric::kWall) {
      samples.samples = pool_folders(parts, side, uri, warnings);
      for (const auto* b : parts)
        samples.samples.folder_medians_ns.push_back(folder_median(*b));
    } else {
      samples.samples = pool_metric(parts, side, metric);
    }
    samples.folder_medians_ns = samples.samples.folder_medians_ns;
    for (const auto* b : parts) samples.folder_counters.push_back(b->counters);
    out.benchmarks.push_back(std::move(samples));
  }
  out.warnings = std::move(warnings);
  return out;
}

}  // namespace

base::Result<LoadedSide> load_side(std::string_view side,
                                   const std::vector<std::string>& folders,
                                   format::Metric metric) {
  std::vector<std::string> warnings, cpu_warnings;
  std::vector<FolderData> data;
  for (const std::string& folder : folders) {
    auto loaded = load_folder(folder, warnings, cpu_warnings);
    if (loaded) loaded = check_metric(std::move(*loaded), metric);
    if (!loaded)
      return base::Error(std::string(side) + " folder '" + folder +
                         "': " + loaded.error().what());
    data.push_back(std::move(*loaded));
  }
  LoadedSide out =
      pool_side(data, std::string(side), metric, std::move(warnings));
  out.counter_warnings = std::move(cpu_warnings);
  return out;
}

format::BenchmarkStats pool_summaries(
    const std::vector<format::BenchmarkStats>& parts) {
  if (parts.empty()) return {};
  if (parts.size() == 1) return parts.front();
  format::BenchmarkStats out = parts.front();
  double n = 0, weighted = 0;
  std::vector<double> medians, q1s, q3s;
  for (const auto& p : parts) {
    n += static_cast<double>(p.rounds);
    weighted += static_cast<double>(p.rounds) * p.mean_ns;
    medians.push_back(p.median_ns);
    q1s.push_back(p.q1_ns);
    q3s.push_back(p.q3_ns);
  }
  out.mean_ns = n > 0 ? weighted / n : 0;
  double ss = 0;
  out.rounds = out.iqr_outlier_rounds = out.stdev_outlier_rounds = 0;
  out.total_time = 0;
  for (const auto& p : parts) {
    double ni = static_cast<double>(p.rounds);
    if (ni > 1) ss += (ni - 1) * p.stdev_ns * p.stdev_ns;
    ss += ni * (p.mean_ns - out.mean_ns) * (p.mean_ns - out.mean_ns);
    out.rounds += p.rounds;
    out.total_time += p.total_time;
    out.iqr_outlier_rounds += p.iqr_outlier_rounds;
    out.stdev_outlier_rounds += p.stdev_outlier_rounds;
    out.min_ns = std::min(out.min_ns, p.min_ns);
    out.max_ns = std::max(out.max_ns, p.max_ns);
    if (p.iter_per_round != out.iter_per_round) out.iter_per_round = 0;
  }
  out.stdev_ns = n > 1 ? std::sqrt(ss / (n - 1)) : 0;
  out.median_ns = stats::median(medians);
  out.q1_ns = stats::median(q1s);
  out.q3_ns = stats::median(q3s);
  return out;
}

format::BenchmarkStats summarize(const std::vector<double>& times_ns) {
  format::BenchmarkStats out;
  if (times_ns.empty()) return out;
  out.mean_ns = stats::mean(times_ns);
  out.stdev_ns = stats::stdev(times_ns);
  const auto [min, max] = std::minmax_element(times_ns.begin(), times_ns.end());
  out.min_ns = *min;
  out.max_ns = *max;
  out.q1_ns = stats::quantile(times_ns, 0.25);
  out.median_ns = stats::quantile(times_ns, 0.5);
  out.q3_ns = stats::quantile(times_ns, 0.75);
  out.rounds = times_ns.size();
  return out;
}

std::vector<RunCounts> run_counts(const std::string& folder) {
  std::vector<std::string> warnings, cpu_warnings;
  auto data = load_folder(folder, warnings, cpu_warnings);
  std::vector<RunCounts> out;
  if (!data) return out;
  for (const FolderBenchmark& b : data->benchmarks) {
    RunCounts counts{b.uri, b.counters.cpu_ns_per_iter, {}};
    if (!b.counters.multiplexed)
      counts.instructions_per_iter = b.counters.instructions_per_iter;
    out.push_back(std::move(counts));
  }
  return out;
}

}  // namespace runner::compare
