#include "agent/finalize.hpp"

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include <msgpack.hpp>

#include "base/fs.hpp"
#include "base/log.hpp"
#include "base/unique_fd.hpp"
#include "config.h"
#include "format/format.hpp"
#include "profiler/pipedata_writer.hpp"

namespace runner::agent {
namespace {

constexpr const char* kLog = "agent";
// Exited processes without a sample whose mappings (and per-pid metadata)
// are kept; about 12 KiB each through finalization.
constexpr size_t kUnsampledExitedKept = 256;

using Json = nlohmann::ordered_json;

bool is_interpreter(const std::string& path) {
  std::string base = std::filesystem::path(path).filename().string();
  return base.rfind("python", 0) == 0 || base.rfind("libpython", 0) == 0 ||
         base == "node";
}

Json markers_json(const fifo::RunData& run) {
  Json markers = Json::array();
  for (const auto& m : run.markers) {
    Json entry = Json::object();
    entry[fifo::marker_name(m.type)] = m.timestamp;
    markers.push_back(std::move(entry));
  }
  return markers;
}

Json uri_by_ts_json(const fifo::RunData& run) {
  Json out = Json::array();
  for (const auto& [ts, uri] : run.uri_by_ts)
    out.push_back(Json::array({ts, uri}));
  return out;
}

// Copies /tmp/perf-<pid>.map (the JIT convention names /tmp whatever TMPDIR
// says) of each pid into the folder. /tmp is shared: only a regular file
// owned by the process's uid is read (O_NOFOLLOW|O_NONBLOCK, size-capped), so
// another user's file, a link to /etc/shadow or a FIFO is refused with a
// warning. Failed writes are added to `write_failures`.
void copy_perf_maps(const std::string& folder, const std::set<int32_t>& pids,
                    const std::map<int32_t, uint32_t>& uids,
                    std::vector<std::string>& write_failures) {
  for (int32_t pid : pids) {
    std::string src = "/tmp/perf-" + std::to_string(pid) + ".map";
    base::ReadOptions read_options;
    auto uid = uids.find(pid);
    // A pid never snapshotted was started by the benchmark, i.e. by us.
    read_options.owner = uid != uids.end() ? uid->second : ::geteuid();
    auto text = base::read_file(src, read_options);
    if (!text) {
      if (text.error().code() != ENOENT)  // most processes have none
        RUNNER_LOG(kLog, kWarning) << "perf map of pid " << pid
                                   << " not copied: " << text.error().what();
      continue;
    }
    std::string dst = folder + "/perf-" + std::to_string(pid) + ".map";
    if (auto st = base::write_file_atomic(dst, *text); !st)
      write_failures.push_back(src + ": " + st.error().what());
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

}  // namespace

namespace {

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

}  // namespace

std::string execution_timestamps_msgpack(const fifo::RunData& run) {
  msgpack::sbuffer buffer;
  msgpack::packer<msgpack::sbuffer> pk(&buffer);
  pk.pack_map(2);
  pk.pack(std::string("uri_by_ts"));
  pk.pack_array(static_cast<uint32_t>(run.uri_by_ts.size()));
  for (const auto& [ts, uri] : run.uri_by_ts) {
    pk.pack_array(2);
    pk.pack(ts);
    pk.pack(uri);
  }
  pk.pack(std::string("markers"));
  pk.pack_array(static_cast<uint32_t>(run.markers.size()));
  for (const auto& m : run.markers) {
    pk.pack_map(1);
    pk.pack(std::string(fifo::marker_name(m.type)));
    pk.pack(m.timestamp);
  }
  return std::string(buffer.data(), buffer.size());
}

base::Status finalize_profile(FinalizeInput input) {
  const std::string& folder = input.folder;
  const fifo::RunData& run = input.run;

  RUNNER_RETURN_IF_ERROR(
      base::write_file_atomic(folder + "/ExecutionTimestamps.msgpack",
                              execution_timestamps_msgpack(run)),
      "ExecutionTimestamps.msgpack");

  if (!run.integration) {
    RUNNER_LOG(kLog, kWarning)
        << "profiling was enabled, but the benchmark never announced an "
           "integration (SetIntegration): no benchmark was detected, so no "
           "perf.metadata is written (ExecutionTimestamps.msgpack is kept). "
           "Does the benchmark use a CodSpeed-compatible integration?";
    return {};
  }
  const bool exec_harness = run.integration->first == "exec-harness";

  // ---- mappings: replay side-band records, then backfill from /proc -------
  perfdata::MappingTracker tracker(exec_harness
                                       ? perfdata::PidFilterMode::kAll
                                       : perfdata::PidFilterMode::kTracked,
                                   run.bench_pids);
  const std::string pipedata = folder + "/perf.pipedata";
  // Processes without samples need no mappings: beyond the most recent
  // kUnsampledExitedKept of them they are forgotten, so that memory follows
  // the live processes, not every process the benchmark forked.
  tracker.set_unsampled_exited_limit(kUnsampledExitedKept);
  std::optional<std::string> vdso = dump_own_vdso();
  if (vdso) tracker.set_vdso_image(*vdso);
  if (input.profiled) {
    if (auto st = tracker.replay_file(pipedata); !st) {
      RUNNER_LOG(kLog, kWarning)
          << "reading perf.pipedata: " << st.error().what()
          << " (using what was read)";
    }
  }
  std::map<int32_t, uint32_t> uids;
  for (const auto& snapshot : input.snapshots)
    if (snapshot.uid) uids.emplace(snapshot.pid, *snapshot.uid);
  tracker.backfill(std::move(input.snapshots));
  std::vector<perfdata::TrackedMapping> tracked = tracker.mappings();
  std::set<int32_t> tracked_pids = tracker.tracked_pids();

  std::vector<symbols::ModuleMapping> modules;
  modules.reserve(tracked.size());
  for (const auto& m : tracked) {
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
  artifact_options.out_dir = folder;
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
  if (vdso) ::unlink(vdso->c_str());
  std::vector<std::string> write_failures = artifacts.write_failures;
  copy_perf_maps(folder, tracked_pids, uids, write_failures);
  if (input.profiled) append_build_ids(pipedata, artifacts);

  // ---- perf.metadata (spec §4.5 field order) --------------------------------
  Json meta = Json::object();
  meta["version"] = 1;
  meta["integration"] =
      Json::array({run.integration->first, run.integration->second});

  std::map<std::string, const symbols::ModuleInfo*> module_by_key;
  for (const auto& m : artifacts.modules) module_by_key[m.key] = &m;

  Json ignored_by_pid = Json::object();
  Json debug_by_pid = Json::object();
  Json unwind_by_pid = Json::object();
  Json symbols_by_pid = Json::object();
  for (const auto& [pid, entries] : artifacts.by_pid) {
    const std::string pid_key = std::to_string(pid);
    Json ignored = Json::array(), dbg = Json::array(), unw = Json::array(),
         sym = Json::array();
    for (const auto& e : entries) {
      if (e.has_symbols) {
        sym.push_back({{"perf_map_key", e.key}, {"load_bias", e.load_bias}});
        auto mod = module_by_key.find(e.key);
        if (is_interpreter(e.path) && mod != module_by_key.end()) {
          ignored.push_back(
              Json::array({e.path, mod->second->symbols_min + e.load_bias,
                           mod->second->symbols_max_end + e.load_bias}));
        }
      }
      if (e.has_debug_info)
        dbg.push_back({{"debug_info_key", e.key}, {"load_bias", e.load_bias}});
      if (e.has_unwind) {
        Json entry = Json::object();
        entry["unwind_data_key"] = e.key;
        entry["timestamp"] = e.timestamp ? Json(*e.timestamp) : Json(nullptr);
        entry["avma_range"] = {{"start", e.avma_range.start},
                               {"end", e.avma_range.end}};
        entry["base_avma"] = e.base_avma;
        unw.push_back(std::move(entry));
      }
    }
    if (!ignored.empty()) ignored_by_pid[pid_key] = std::move(ignored);
    if (!dbg.empty()) debug_by_pid[pid_key] = std::move(dbg);
    if (!unw.empty()) unwind_by_pid[pid_key] = std::move(unw);
    if (!sym.empty()) symbols_by_pid[pid_key] = std::move(sym);
  }
  if (!ignored_by_pid.empty()) meta["ignored_modules_by_pid"] = ignored_by_pid;
  if (!artifacts.debug_info.empty()) {
    Json debug_info = Json::object();
    for (const auto& [key, info] : artifacts.debug_info) {
      Json infos = Json::array();
      for (const auto& d : info.entries) {
        infos.push_back({{"addr", d.addr},
                         {"size", d.size},
                         {"name", d.name},
                         {"file", d.file},
                         {"line", d.line ? Json(*d.line) : Json(nullptr)}});
      }
      debug_info[key] = {
          {"object_path", info.object_path},
          {"addr_bounds", Json::array({info.addr_min, info.addr_max})},
          {"load_bias", 0},
          {"debug_infos", std::move(infos)}};
    }
    meta["debug_info"] = std::move(debug_info);
  }
  if (!debug_by_pid.empty())
    meta["mapped_process_debug_info_by_pid"] = std::move(debug_by_pid);
  meta["mapped_process_unwind_data_by_pid"] = std::move(unwind_by_pid);
  meta["mapped_process_module_symbols"] = std::move(symbols_by_pid);
  Json path_keys = Json::object();
  for (const auto& m : artifacts.modules) path_keys[m.key] = m.path;
  meta["path_key_to_path"] = std::move(path_keys);
  meta["uri_by_ts"] = uri_by_ts_json(run);
  meta["ignored_modules"] = Json::array();
  meta["markers"] = markers_json(run);

  // Our own section: how the profile was taken and what was dropped.
  Json runner = Json::object();
  runner["version"] = RUNNER_VERSION;
  runner["profiled"] = input.profiled;
  if (input.sampler_stats) {
    const auto& s = *input.sampler_stats;
    runner["event"] = s.event_name;
    runner["frequency"] = input.sampler_options.frequency;
    runner["call_graph"] =
        input.sampler_options.call_graph == profiler::CallGraphMode::kDwarf
            ? "dwarf"
            : "fp";
    runner["stack_size"] = input.sampler_options.stack_size;
    runner["tracking_event"] = input.sampler_options.tracking_event;
    runner["mmap_size_per_cpu"] = s.mmap_size_per_cpu;
    runner["samples"] = s.samples;
    runner["lost_records"] = s.lost_records;
    runner["lost_samples"] = s.lost_samples;
    runner["bytes_written"] = s.bytes_written;
    runner["drain_passes"] = s.drain_passes;
    runner["window_drain_passes"] = s.window_drain_passes;
    runner["drain_cpu_us"] = s.drain_cpu_ns / 1000;
    runner["write_error"] =
        s.write_failed ? Json(s.write_error) : Json(nullptr);
    runner["ring_buffers_bytes"] =
        s.mmap_size_per_cpu * std::max(1u, std::thread::hardware_concurrency());
  }
  // The runner's own peak resident memory (ring buffers included).
  struct rusage usage {};
  if (::getrusage(RUSAGE_SELF, &usage) == 0)
    runner["max_rss_kib"] = static_cast<uint64_t>(usage.ru_maxrss);
  runner["pid_filter"] = exec_harness ? "all" : "tracked";
  runner["announced_pids"] = run.bench_pids;
  runner["tracked_pids"] =
      Json(std::vector<int32_t>(tracked_pids.begin(), tracked_pids.end()));
  Json skipped = Json::object();
  for (const auto& [reason, count] : tracker.stats().skipped)
    skipped[reason] = count;
  runner["skipped_mappings"] = std::move(skipped);
  runner["backfilled_mappings"] = tracker.stats().backfilled;
  runner["unsampled_pids_forgotten"] = tracker.stats().unsampled_forgotten;
  Json errors = Json::object();
  for (const auto& [reason, count] : artifacts.errors) errors[reason] = count;
  runner["module_errors"] = std::move(errors);
  runner["artifacts_not_written"] = write_failures.size();
  const auto& c = run.counters;
  runner["fifo"] = {{"commands", c.commands},
                    {"malformed_frames", c.malformed_frames},
                    {"oversized_frames", c.oversized_frames},
                    {"unexpected_commands", c.unexpected_commands},
                    {"rejected_versions", c.rejected_versions},
                    {"duplicate_starts", c.duplicate_starts},
                    {"unmatched_stops", c.unmatched_stops},
                    {"dropped_replies", c.dropped_replies},
                    {"write_errors", c.write_errors},
                    {"resyncs", c.resyncs},
                    {"discarded_bytes", c.discarded_bytes},
                    {"truncated_frames", c.truncated_frames},
                    {"stale_reply_bytes", c.stale_reply_bytes}};
  meta["runner"] = std::move(runner);

  base::Status artifacts_written = report_write_failures(write_failures);
  // Paths are bytes, JSON is UTF-8: an invalid byte in a path is written as
  // U+FFFD rather than losing the whole file.
  auto st = base::write_file_atomic(
      folder + "/perf.metadata",
      meta.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  if (!st) {
    st.error().context("perf.metadata");
    if (!artifacts_written)
      st.error().context(artifacts_written.error().what() + ", and");
    return st;
  }
  return artifacts_written;
}

}  // namespace runner::agent
