#include "finalize/finalize.hpp"

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include "base/base.hpp"
#include "config.h"
#include "finalize/jit_artifacts.hpp"
#include "format/format.hpp"
#include "profiler/profiler.hpp"
#include "symbols/symbols.hpp"

namespace runner::finalize {
namespace {

constexpr const char* kLog = "agent";
// Exited processes without a sample whose mappings (and per-pid metadata)
// are kept; about 12 KiB each through finalization.
constexpr size_t kUnsampledExitedKept = 256;

bool is_interpreter(const std::string& path) {
  std::string base = std::filesystem::path(path).filename().string();
  return base.rfind("python", 0) == 0 || base.rfind("libpython", 0) == 0 ||
         base == "node";
}

// Copies /tmp/perf-<pid>.map (the JIT convention names /tmp whatever TMPDIR
// says) of each pid into the folder. /tmp is shared: only a regular file
// owned by the process's uid is read (O_NOFOLLOW|O_NONBLOCK, size-capped), so
// another user's file, a link to /etc/shadow or a FIFO is refused with a
// warning. Failed writes are added to `write_failures`.
// The names of each pid's jitdump (`jit_lines`) are appended to its copy.
// Returns the copies' contents, by pid.
std::map<int32_t, std::string> copy_perf_maps(
    const format::ProfileLayout& layout, const std::set<int32_t>& pids,
    const std::map<int32_t, uint32_t>& uids,
    const std::map<int32_t, std::string>& jit_lines,
    std::vector<std::string>& write_failures) {
  std::map<int32_t, std::string> copies;
  for (int32_t pid : pids) {
    std::string src = format::ProfileLayout::jit_perf_map(pid);
    base::ReadOptions read_options;
    auto uid = uids.find(pid);
    // A pid never snapshotted was started by the benchmark, i.e. by us.
    read_options.owner = uid != uids.end() ? uid->second : ::geteuid();
    auto text = base::read_file(src, read_options);
    if (!text && text.error().code() != ENOENT)  // most processes have none
      RUNNER_LOG(kLog, kWarning) << "perf map of pid " << pid
                                 << " not copied: " << text.error().what();
    std::string out = text ? std::move(*text) : std::string();
    if (auto jit = jit_lines.find(pid); jit != jit_lines.end()) {
      if (!out.empty() && out.back() != '\n') out += '\n';
      out += jit->second;
    }
    if (out.empty()) continue;
    if (auto st = base::write_file_atomic(layout.perf_map(pid), out); !st)
      write_failures.push_back(src + ": " + st.error().what());
    copies.emplace(pid, std::move(out));
  }
  return copies;
}

// Writes jit-<pid>.timeline for each pid whose jitdump gave times.
void write_jit_timelines(const format::ProfileLayout& layout,
                         const JitArtifacts& jit,
                         std::vector<std::string>& write_failures) {
  for (const auto& [pid, entries] : jit.timeline_by_pid) {
    const std::string path = layout.jit_timeline(pid);
    if (auto st =
            base::write_file_atomic(path, format::format_jit_timeline(entries));
        !st)
      write_failures.push_back(path + ": " + st.error().what());
  }
}

// Warns about each artifact that could not be written (the first few in
// full) and turns them into the error that makes the run fail.
base::Status report_write_failures(const std::vector<std::string>& failures) {
  constexpr size_t kShown = 10;
  if (failures.empty()) return {};
  for (size_t i = 0; i < failures.size() && i < kShown; ++i)
    RUNNER_LOG(kLog, kWarning) << "artifact not written for " << failures[i];
  if (failures.size() > kShown)
    RUNNER_LOG(kLog, kWarning) << "... and " << failures.size() - kShown
                               << " more artifact(s) not written";
  return base::Error(
      std::to_string(failures.size()) +
      " artifact file(s) could not be written (first: " + failures.front() +
      "); the profile is incomplete, what was written is kept");
}

// Copies this process's vDSO into a temporary file. The vDSO is the same
// image in every process of a kernel, so benchmark samples in it (e.g.
// clock_gettime) get symbols and unwind data from this copy.
std::optional<std::string> dump_own_vdso() {
  auto maps = base::read_file("/proc/self/maps");
  if (!maps) return std::nullopt;
  std::vector<format::MapsLine> lines = format::parse_maps(*maps);
  auto vdso = std::find_if(lines.begin(), lines.end(),
                           [](const auto& l) { return l.path == "[vdso]"; });
  if (vdso == lines.end()) return std::nullopt;
  const uint64_t start = vdso->start, end = vdso->end;
  if (end <= start || end - start > (1u << 20)) return std::nullopt;
  auto file = base::create_temp_file("runner-vdso.");
  if (!file) return std::nullopt;
  const auto* bytes =
      reinterpret_cast<const char*>(static_cast<uintptr_t>(start));
  size_t size = static_cast<size_t>(end - start);
  if (!base::write_all(file->fd.get(), std::string_view(bytes, size))) {
    ::unlink(file->path.c_str());
    return std::nullopt;
  }
  return file->path;
}

// HEADER_BUILD_ID records for every file with artifacts, at the end of
// perf.pipedata: `perf buildid-list` and `perf buildid-cache` see which
// build of each file was profiled. (perf script only checks them for files
// it has not loaded before reaching them, so they do not protect a perf
// script of a rebuilt binary; the runner's own report never needs them.)
void append_build_ids(const std::string& pipedata,
                      const symbols::ArtifactSet& artifacts) {
  auto writer = profiler::PipedataWriter::append(pipedata);
  if (!writer) {
    RUNNER_LOG(kLog, kWarning)
        << "adding build-ids to perf.pipedata: " << writer.error().what();
    return;
  }
  uint64_t written = 0;
  for (const symbols::ModuleInfo& module : artifacts.modules) {
    // Real files only: perf finds [vdso] and friends by itself.
    if (module.build_id.empty() || module.path.empty() || module.path[0] != '/')
      continue;
    writer->write_build_id(module.build_id, module.path);
    ++written;
  }
  if (auto st = writer->close(); !st) {
    RUNNER_LOG(kLog, kWarning)
        << "adding build-ids to perf.pipedata: " << st.error().what();
    return;
  }
  RUNNER_LOG(kLog, kDebug) << written << " build-id records added";
}

// ---- ExecutionTimestamps.msgpack and perf.metadata --------------------------

format::ExecutionTimestamps execution_timestamps(const fifo::RunData& run) {
  format::ExecutionTimestamps out;
  out.uri_by_ts = run.uri_by_ts;
  out.markers.reserve(run.markers.size());
  for (const auto& m : run.markers)
    out.markers.push_back({fifo::marker_name(m.type), m.timestamp});
  return out;
}

// What the mapping replay left for the artifacts and the metadata.
struct Mappings {
  std::vector<perfdata::TrackedMapping> tracked;
  std::set<int32_t> tracked_pids;
  std::map<int32_t, uint32_t> uids;  // of the snapshotted processes
  perfdata::TrackingStats stats;
};

// The runtimes' dumps and logs in the benchmark's folders, once read (see
// remove_runtime_files): looked for in the runner's working directory (the
// benchmark's) and the dumps' directories.
void remove_runtime_leftovers(const FinalizeInput& input,
                              const Mappings& mappings, JitArtifacts& jit) {
  std::vector<std::string> dirs;
  std::error_code ec;
  if (auto cwd = std::filesystem::current_path(ec); !ec)
    dirs.push_back(cwd.string());
  if (size_t n = remove_runtime_files(mappings.tracked, mappings.uids, dirs,
                                      input.run_started_realtime_ns))
    jit.counts["runtime_files_removed"] = n;
}

// The side-band records of perf.pipedata into the tracker: those the
// sampler kept while it wrote the file, which cost what they weigh, else
// the file's, read whole.
void replay_side_band(const FinalizeInput& input,
                      const format::ProfileLayout& layout,
                      perfdata::MappingTracker& tracker) {
  const auto& kept = input.side_band;
  if (kept && kept->usable()) {
    RUNNER_LOG(kLog, kDebug)
        << "mappings: replaying the sampler's side-band records ("
        << kept->stream.size() << " bytes, " << kept->samples.size()
        << " sample marks), not perf.pipedata";
    if (auto st = tracker.replay_records(*kept); !st)
      RUNNER_LOG(kLog, kWarning)
          << "replaying the side-band records: " << st.error().what()
          << " (using what was read)";
    return;
  }
  RUNNER_LOG(kLog, kDebug) << "mappings: reading perf.pipedata ("
                           << (kept ? kept->incomplete
                                    : std::string("no side-band records"))
                           << ")";
  if (auto st = tracker.replay_file(layout.pipedata()); !st) {
    RUNNER_LOG(kLog, kWarning) << "reading perf.pipedata: " << st.error().what()
                               << " (using what was read)";
  }
}

// Replays the side-band records of perf.pipedata, then backfills from the
// /proc snapshots: every executable mapping of the benchmark's processes.
Mappings replay_mappings(FinalizeInput& input,
                         const format::ProfileLayout& layout,
                         const std::optional<std::string>& vdso) {
  const fifo::RunData& run = input.run;
  const bool exec_harness = run.integration->first == "exec-harness";
  perfdata::MappingTracker tracker(exec_harness
                                       ? perfdata::PidFilterMode::kAll
                                       : perfdata::PidFilterMode::kTracked,
                                   run.bench_pids);
  // Processes without samples need no mappings: beyond the most recent
  // kUnsampledExitedKept of them they are forgotten, so that memory follows
  // the live processes, not every process the benchmark forked.
  tracker.set_unsampled_exited_limit(kUnsampledExitedKept);
  if (vdso) tracker.set_vdso_image(*vdso);
  if (input.profiled) replay_side_band(input, layout, tracker);
  Mappings out;
  for (const auto& snapshot : input.snapshots)
    if (snapshot.uid) out.uids.emplace(snapshot.pid, *snapshot.uid);
  tracker.backfill(std::move(input.snapshots));
  out.tracked = tracker.mappings();
  out.tracked_pids = tracker.tracked_pids();
  out.stats = tracker.stats();
  return out;
}

// The finalize cache's folder and cap: $XDG_CACHE_HOME/runner/finalize (or
// ~/.cache/runner/finalize), at most RUNNER_CACHE_MAX_MB MiB (default 512; 0
// or --no-cache: no cache).
void set_cache_options(bool use_cache, symbols::ArtifactOptions& options) {
  if (!use_cache) return;
  uint64_t max_bytes = symbols::kDefaultCacheMaxBytes;
  if (const char* mb = std::getenv("RUNNER_CACHE_MAX_MB")) {
    std::optional<uint64_t> parsed = format::parse_dec(mb);
    if (parsed && *parsed <= (uint64_t{1} << 40)) {
      max_bytes = *parsed << 20;
    } else {
      RUNNER_LOG(kLog, kWarning) << "RUNNER_CACHE_MAX_MB='" << mb
                                 << "' is not a number of MiB: using 512";
    }
  }
  options.cache_max_bytes = max_bytes;
  if (max_bytes != 0) options.cache_dir = base::cache_directory("finalize");
}

// <key>.symbols.map and <key>.unwind_data of every mapped module (and its
// debug info); failures are logged, what was built is returned.
symbols::ArtifactSet build_module_artifacts(
    const std::vector<perfdata::TrackedMapping>& tracked,
    const format::ProfileLayout& layout, bool use_cache) {
  std::vector<symbols::ModuleMapping> modules;
  modules.reserve(tracked.size());
  for (const auto& m : tracked) {
    if (is_jitdump_mapping(m)) continue;  // not an ELF: jit_artifacts.cpp
    symbols::ModuleMapping mm;
    mm.pid = m.pid;
    mm.path = m.path;
    mm.open_path = m.open_path.empty() ? m.path : m.open_path;
    mm.start = m.start;
    mm.end = m.end;
    mm.pgoff = m.pgoff;
    mm.dev_major = m.dev_major;
    mm.dev_minor = m.dev_minor;
    mm.inode = m.inode;
    modules.push_back(std::move(mm));
  }
  symbols::ArtifactOptions artifact_options;
  artifact_options.out_dir = layout.folder();
  set_cache_options(use_cache, artifact_options);
  symbols::ArtifactSet artifacts;
  if (auto built = symbols::build_artifacts(modules, artifact_options)) {
    artifacts = std::move(*built);
  } else {
    RUNNER_LOG(kLog, kError)
        << "building symbol artifacts: " << built.error().what();
  }
  for (const auto& [reason, count] : artifacts.errors) {
    auto example = artifacts.error_examples.find(reason);
    RUNNER_LOG(kLog, kDebug)
        << count << " module(s) with fewer artifacts (" << reason << ")"
        << (example != artifacts.error_examples.end()
                ? ", e.g. " + example->second
                : std::string());
  }
  return artifacts;
}

// The per-pid lists of perf.metadata: symbols, debug info and unwind data of
// each module a pid mapped, and the ranges of interpreters (ignored). A
// module mapped twice at one load bias (text split by mprotect) lists its
// symbols and debug info once; every mapping keeps its unwind range.
void add_pid_modules(const symbols::ArtifactSet& artifacts,
                     format::PerfMetadata& meta) {
  std::map<std::string, const symbols::ModuleInfo*> module_by_key;
  for (const auto& m : artifacts.modules) module_by_key[m.key] = &m;
  for (const auto& [pid, entries] : artifacts.by_pid) {
    std::set<std::pair<std::string, uint64_t>> seen;
    for (const symbols::PidModule& e : entries) {
      if (e.has_unwind)
        meta.mapped_process_unwind_data_by_pid[pid].push_back(
            {e.key, e.timestamp, e.avma_range.start, e.avma_range.end,
             e.base_avma});
      if (!seen.insert({e.key, e.load_bias}).second) continue;
      if (e.has_symbols) {
        meta.mapped_process_module_symbols[pid].push_back({e.key, e.load_bias});
        auto mod = module_by_key.find(e.key);
        if (is_interpreter(e.path) && mod != module_by_key.end()) {
          meta.ignored_modules_by_pid[pid].push_back(
              {e.path, mod->second->symbols_min + e.load_bias,
               mod->second->symbols_max_end + e.load_bias});
        }
      }
      if (e.has_debug_info)
        meta.mapped_process_debug_info_by_pid[pid].push_back(
            {e.key, e.load_bias});
    }
  }
}

// debug_info: file:line of each symbol, by module key (moved out).
void add_debug_info(symbols::ArtifactSet& artifacts,
                    format::PerfMetadata& meta) {
  for (auto& [key, info] : artifacts.debug_info) {
    format::ModuleDebugInfo& out = meta.debug_info[key];
    out.object_path = std::move(info.object_path);
    out.addr_min = info.addr_min;
    out.addr_max = info.addr_max;
    out.entries.reserve(info.entries.size());
    for (auto& d : info.entries)
      out.entries.push_back(
          {d.addr, d.size, std::move(d.name), std::move(d.file), d.line});
  }
}

format::SamplerSection sampler_section(const profiler::SamplerOptions& options,
                                       const profiler::SamplerStats& s) {
  format::SamplerSection out;
  out.event = s.event_name;
  out.frequency = options.frequency;
  out.call_graph =
      options.call_graph == profiler::CallGraphMode::kDwarf ? "dwarf" : "fp";
  out.stack_size = options.stack_size;
  out.tracking_event = options.tracking_event;
  out.mmap_size_per_cpu = s.mmap_size_per_cpu;
  out.samples = s.samples;
  out.lost_records = s.lost_records;
  out.lost_samples = s.lost_samples;
  out.bytes_written = s.bytes_written;
  out.drain_passes = s.drain_passes;
  out.window_drain_passes = s.window_drain_passes;
  out.drain_cpu_us = s.drain_cpu_ns / 1000;
  out.stacks_blanked = s.blanking.samples_blanked;
  out.stack_bytes_blanked = s.blanking.bytes_blanked;
  out.stacks_dropped = s.blanking.stacks_dropped;
  out.samples_dropped = s.blanking.samples_dropped;
  out.stack_bytes_copied = s.blanking.copied_bytes;
  out.stack_bytes_written = s.blanking.kept_bytes;
  out.drain_threads = s.drain_threads;
  for (const profiler::CpuSamples& cpu : s.per_cpu)
    out.per_cpu.push_back(
        {static_cast<uint32_t>(cpu.cpu), cpu.samples, cpu.lost_samples});
  if (s.write_failed) out.write_error = s.write_error;
  out.ring_buffers_bytes =
      s.mmap_size_per_cpu * std::max<uint64_t>(1, s.nr_cpus);
  return out;
}

format::FifoCounters fifo_counters(const fifo::RunData& run) {
  const auto& c = run.counters;
  return {c.commands,          c.malformed_frames,
          c.oversized_frames,  c.unexpected_commands,
          c.rejected_versions, c.duplicate_starts,
          c.unmatched_stops,   c.dropped_replies,
          c.write_errors,      c.resyncs,
          c.discarded_bytes,   c.truncated_frames,
          c.stale_reply_bytes};
}

// Our own section: how the profile was taken and what was dropped.
format::RunnerSection runner_section(const FinalizeInput& input,
                                     const Mappings& mappings,
                                     const symbols::ArtifactSet& artifacts,
                                     size_t write_failures) {
  format::RunnerSection out;
  out.version = RUNNER_VERSION;
  out.profiled = input.profiled;
  if (input.sampler_stats)
    out.sampler = sampler_section(input.sampler_options, *input.sampler_stats);
  // The runner's own peak resident memory (ring buffers included).
  struct rusage usage {};
  if (::getrusage(RUSAGE_SELF, &usage) == 0)
    out.max_rss_kib = static_cast<uint64_t>(usage.ru_maxrss);
  const bool exec_harness = input.run.integration->first == "exec-harness";
  out.pid_filter = exec_harness ? "all" : "tracked";
  out.announced_pids = input.run.bench_pids;
  out.tracked_pids = std::vector<int32_t>(mappings.tracked_pids.begin(),
                                          mappings.tracked_pids.end());
  out.skipped_mappings = mappings.stats.skipped;
  out.backfilled_mappings = mappings.stats.backfilled;
  out.unsampled_pids_forgotten = mappings.stats.unsampled_forgotten;
  out.module_errors = artifacts.errors;
  out.artifacts_not_written = write_failures;
  out.fifo = fifo_counters(input.run);
  return out;
}

// The JIT code's keys, ranges and lines, after the ELF modules'.
void add_jit_artifacts(JitArtifacts& jit, format::PerfMetadata& meta) {
  for (auto& [pid, refs] : jit.unwind_by_pid) {
    auto& list = meta.mapped_process_unwind_data_by_pid[pid];
    list.insert(list.end(), refs.begin(), refs.end());
  }
  for (auto& [pid, refs] : jit.debug_info_by_pid) {
    auto& list = meta.mapped_process_debug_info_by_pid[pid];
    list.insert(list.end(), refs.begin(), refs.end());
  }
  for (auto& [key, info] : jit.debug_info)
    meta.debug_info.emplace(key, std::move(info));
  for (auto& entry : jit.keys) meta.path_key_to_path.push_back(entry);
  // What went wrong with dumps counts with the modules' errors.
  for (const char* error :
       {"jitdump_unreadable", "jitdump_malformed", "jitdump_truncated"})
    if (auto it = jit.counts.find(error); it != jit.counts.end())
      meta.runner.module_errors[error] += it->second;
  if (jit.counts.count("jitdump_read") == 0) return;
  std::string cut;
  if (uint64_t n = jit.counts["jitdump_truncated"]; n != 0)
    cut = "; " + std::to_string(n) +
          " ends inside a record (its process stopped before writing its "
          "last " +
          std::to_string(jit.counts["jitdump_bytes_cut"]) +
          " bytes: their code is named from the perf map, if any)";
  RUNNER_LOG(kLog, kInfo) << "JIT code: " << jit.counts["jit_bodies"]
                          << " bodies (" << jit.counts["jit_bodies_with_cfi"]
                          << " with CFI) from " << jit.counts["jitdump_read"]
                          << " jitdump(s)" << cut;
}

format::PerfMetadata perf_metadata(const FinalizeInput& input,
                                   const Mappings& mappings,
                                   symbols::ArtifactSet& artifacts,
                                   JitArtifacts& jit, size_t write_failures) {
  format::PerfMetadata meta;
  meta.integration_name = input.run.integration->first;
  meta.integration_version = input.run.integration->second;
  add_pid_modules(artifacts, meta);
  add_debug_info(artifacts, meta);
  for (const auto& m : artifacts.modules)
    meta.path_key_to_path.emplace_back(m.key, m.path);
  meta.timestamps = execution_timestamps(input.run);
  meta.runner = runner_section(input, mappings, artifacts, write_failures);
  add_jit_artifacts(jit, meta);
  return meta;
}

// Writes perf.metadata; the error of an artifact not written (if any) comes
// first, the metadata's own one is added to it.
base::Status write_metadata(const format::ProfileLayout& layout,
                            const format::PerfMetadata& meta,
                            base::Status artifacts_written) {
  auto st = base::write_file_atomic(layout.metadata(),
                                    format::write_perf_metadata(meta));
  if (!st) {
    st.error().context(format::ProfileLayout::kMetadata);
    if (!artifacts_written)
      st.error().context(artifacts_written.error().what() + ", and");
    return st;
  }
  return artifacts_written;
}

// Time spent in each phase of finalize_profile, for RUNNER_LOG=agent:debug.
class PhaseTimes {
 public:
  // Ends the running phase, named `name`; returns its time.
  uint64_t lap(const char* name) {
    const uint64_t now = base::monotonic_ns();
    const uint64_t ns = now - last_ns_;
    last_ns_ = now;
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%s%s %.1f ms", text_.empty() ? "" : ", ",
                  name, static_cast<double>(ns) / 1e6);
    text_ += buf;
    return ns;
  }
  uint64_t total_ns() const { return last_ns_ - start_ns_; }
  const std::string& text() const { return text_; }

 private:
  uint64_t start_ns_ = base::monotonic_ns();
  uint64_t last_ns_ = start_ns_;
  std::string text_;
};

// "runner: finalize: 7 files, 6 from cache, 38 ms (symbols 12 ms)": the
// whole of finalize_profile, and the part spent on the ELF files.
void print_finalize_summary(const symbols::ArtifactSet& artifacts,
                            uint64_t total_ns, uint64_t symbols_ns) {
  std::fprintf(stderr,
               "runner: finalize: %zu files, %zu from cache, %.1f ms "
               "(symbols %.1f ms)\n",
               artifacts.modules.size(), artifacts.cache_hits,
               static_cast<double>(total_ns) / 1e6,
               static_cast<double>(symbols_ns) / 1e6);
}

}  // namespace

std::string execution_timestamps_msgpack(const fifo::RunData& run) {
  return format::write_execution_timestamps(execution_timestamps(run));
}

base::Status finalize_profile(FinalizeInput input) {
  PhaseTimes times;
  const format::ProfileLayout layout(input.folder);
  RUNNER_RETURN_IF_ERROR(
      base::write_file_atomic(layout.execution_timestamps(),
                              execution_timestamps_msgpack(input.run)),
      format::ProfileLayout::kExecutionTimestamps);
  if (!input.run.integration) {
    RUNNER_LOG(kLog, kWarning)
        << "profiling was enabled, but the benchmark never announced an "
           "integration (SetIntegration): no benchmark was detected, so no "
           "perf.metadata is written (ExecutionTimestamps.msgpack is kept). "
           "Does the benchmark use a CodSpeed-compatible integration?";
    return {};
  }
  // The vDSO copy lives until the artifacts are built from it.
  std::optional<std::string> vdso = dump_own_vdso();
  Mappings mappings = replay_mappings(input, layout, vdso);
  times.lap("mappings");
  symbols::ArtifactSet artifacts =
      build_module_artifacts(mappings.tracked, layout, input.use_cache);
  const uint64_t symbols_ns = times.lap("symbols");
  if (vdso) ::unlink(vdso->c_str());
  JitArtifacts jit = build_jit_artifacts(
      layout, mappings.tracked, mappings.uids, artifacts.modules.size());
  std::vector<std::string> write_failures = artifacts.write_failures;
  const std::map<int32_t, std::string> perf_maps =
      copy_perf_maps(layout, mappings.tracked_pids, mappings.uids,
                     jit.perf_map_lines, write_failures);
  write_jit_timelines(layout, jit, write_failures);
  remove_runtime_leftovers(input, mappings, jit);
  add_cpython_trampolines(layout, mappings.tracked, artifacts.modules,
                          perf_maps, jit,
                          artifacts.modules.size() + jit.keys.size());
  write_failures.insert(write_failures.end(), jit.write_failures.begin(),
                        jit.write_failures.end());
  times.lap("jit and perf maps");
  if (input.profiled) append_build_ids(layout.pipedata(), artifacts);
  times.lap("build-ids");
  const format::PerfMetadata meta =
      perf_metadata(input, mappings, artifacts, jit, write_failures.size());
  base::Status written =
      write_metadata(layout, meta, report_write_failures(write_failures));
  times.lap("metadata");
  RUNNER_LOG(kLog, kDebug) << "finalize: " << times.text();
  print_finalize_summary(artifacts, times.total_ns(), symbols_ns);
  return written;
}

}  // namespace runner::finalize
