// perf.metadata (docs/formats.md, "perf.metadata"; version 1): the JSON
// document beside perf.pipedata that says, per pid, which module artifacts
// (<key>.symbols.map, <key>.unwind_data) apply at which load bias, plus the
// debug info of each module, copies of the benchmark URIs and markers, and
// the runner's own section (how the profile was taken, what was dropped).
// Written by the agent after a run, read by the report (and bench/).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/base.hpp"
#include "format/execution_timestamps.hpp"

namespace runner::format {

// mapped_process_module_symbols entry: {"perf_map_key", "load_bias"}.
struct SymbolsRef {
  std::string key;
  uint64_t load_bias = 0;
  bool operator==(const SymbolsRef&) const = default;
};

// mapped_process_debug_info_by_pid entry: {"debug_info_key", "load_bias"}.
struct DebugInfoRef {
  std::string key;
  uint64_t load_bias = 0;
  bool operator==(const DebugInfoRef&) const = default;
};

// mapped_process_unwind_data_by_pid entry: {"unwind_data_key", "timestamp",
// "avma_range": {"start", "end"}, "base_avma"}.
struct UnwindRef {
  std::string key;
  std::optional<uint64_t> timestamp;
  uint64_t start = 0, end = 0, base_avma = 0;
  bool operator==(const UnwindRef&) const = default;
};

// ignored_modules_by_pid entry: [path, start, end] (an interpreter's range).
struct IgnoredModule {
  std::string path;
  uint64_t start = 0, end = 0;
  bool operator==(const IgnoredModule&) const = default;
};

// debug_info.<key>.debug_infos entry.
struct DebugInfoEntry {
  uint64_t addr = 0, size = 0;
  std::string name, file;
  std::optional<uint32_t> line;
  bool operator==(const DebugInfoEntry&) const = default;
};

// debug_info.<key>: {"object_path", "addr_bounds": [min, max], "load_bias":
// 0, "debug_infos": [...]}.
struct ModuleDebugInfo {
  std::string object_path;
  uint64_t addr_min = 0, addr_max = 0;
  std::vector<DebugInfoEntry> entries;
  bool operator==(const ModuleDebugInfo&) const = default;
};

// runner.<event...>: present when the run was sampled.
// One CPU's ring buffer: the samples it gave and those the kernel lost.
struct SamplerCpu {
  uint32_t cpu = 0;
  uint64_t samples = 0, lost_samples = 0;
  bool operator==(const SamplerCpu&) const = default;
};

struct SamplerSection {
  std::string event;
  uint32_t frequency = 0;
  std::string call_graph;  // "dwarf" or "fp"
  uint32_t stack_size = 0;
  bool tracking_event = false;
  uint64_t mmap_size_per_cpu = 0, samples = 0, lost_records = 0,
           lost_samples = 0, bytes_written = 0, drain_passes = 0,
           window_drain_passes = 0, drain_cpu_us = 0;
  // DWARF stack copies: samples whose copy reached the initial stack area
  // (argv, environment), the bytes of it blanked, copies blanked whole (the
  // process's area unknown), samples not written (copy not found).
  uint64_t stacks_blanked = 0, stack_bytes_blanked = 0, stacks_dropped = 0,
           samples_dropped = 0;
  // The bytes of stack the kernel copied and those written (cut to the
  // program's stack); the threads that drained the buffers.
  uint64_t stack_bytes_copied = 0, stack_bytes_written = 0, drain_threads = 0;
  std::vector<SamplerCpu> per_cpu;
  std::optional<std::string> write_error;
  uint64_t ring_buffers_bytes = 0;
  bool operator==(const SamplerSection&) const = default;
};

// runner.fifo: the FIFO server's counters.
struct FifoCounters {
  uint64_t commands = 0, malformed_frames = 0, oversized_frames = 0,
           unexpected_commands = 0, rejected_versions = 0, duplicate_starts = 0,
           unmatched_stops = 0, dropped_replies = 0, write_errors = 0,
           resyncs = 0, discarded_bytes = 0, truncated_frames = 0,
           stale_reply_bytes = 0;
  bool operator==(const FifoCounters&) const = default;
};

// The "runner" section (ours, not CodSpeed's).
struct RunnerSection {
  std::string version;
  bool profiled = false;
  std::optional<SamplerSection> sampler;
  std::optional<uint64_t> max_rss_kib;
  std::string pid_filter;  // "tracked" or "all"
  std::vector<int32_t> announced_pids;
  // Absent in a file that has none (then no pid filter applies).
  std::optional<std::vector<int32_t>> tracked_pids;
  std::map<std::string, uint64_t> skipped_mappings;
  uint64_t backfilled_mappings = 0, unsampled_pids_forgotten = 0;
  std::map<std::string, uint64_t> module_errors;
  uint64_t artifacts_not_written = 0;
  FifoCounters fifo;
  bool operator==(const RunnerSection&) const = default;
};

template <typename T>
using ByPid = std::map<int32_t, std::vector<T>>;

struct PerfMetadata {
  static constexpr uint32_t kVersion = 1;
  uint32_t version = kVersion;
  std::string integration_name, integration_version;
  ByPid<IgnoredModule> ignored_modules_by_pid;
  std::map<std::string, ModuleDebugInfo> debug_info;  // by module key
  ByPid<DebugInfoRef> mapped_process_debug_info_by_pid;
  ByPid<UnwindRef> mapped_process_unwind_data_by_pid;
  ByPid<SymbolsRef> mapped_process_module_symbols;
  // Module key -> recorded path, in key index order.
  std::vector<std::pair<std::string, std::string>> path_key_to_path;
  ExecutionTimestamps timestamps;  // uri_by_ts and markers
  RunnerSection runner;
  bool operator==(const PerfMetadata&) const = default;
};

// The JSON text, members in the order of PerfMetadata above; empty per-pid
// lists and empty optional sections are left out. Invalid UTF-8 in a path is
// written as U+FFFD rather than losing the whole file.
std::string write_perf_metadata(const PerfMetadata& metadata);

struct PerfMetadataRead {
  PerfMetadata metadata;
  // "perf.metadata: <key path>: <cause>: ignored", one per top-level key.
  std::vector<std::string> warnings;
  // The same for the uri_by_ts/markers copies (used when
  // ExecutionTimestamps.msgpack is missing or unreadable).
  std::vector<std::string> timestamps_warnings;
};

struct PerfMetadataReadOptions {
  // debug_info and mapped_process_debug_info_by_pid (the largest part of the
  // file): false skips them before they are even lexed.
  bool debug_info = true;
};

// Error when the text is not a JSON object ("perf.metadata is not valid
// JSON: not JSON (at byte 12)", "...: nested deeper than 128 levels",
// "perf.metadata is not a JSON object"); bytes that are not UTF-8 read as
// U+FFFD. Otherwise every well-formed value is read and each malformed one
// is skipped and noted (the members the report uses) or skipped silently
// (the others).
base::Result<PerfMetadataRead> read_perf_metadata(
    std::string_view text, PerfMetadataReadOptions options = {});

}  // namespace runner::format
