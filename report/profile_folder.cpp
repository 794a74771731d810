#include "report/profile_folder.hpp"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cstdint>
#include <filesystem>

#include "base/base.hpp"
#include "format/format.hpp"

namespace runner::report {
namespace {

// The metadata of the folder, its warnings added to `warnings`; empty when
// it is missing or unreadable (then every frame stays unknown).
std::optional<format::PerfMetadataRead> read_metadata(
    const format::ProfileLayout& layout, std::vector<std::string>& warnings) {
  auto text = base::read_file(layout.metadata());
  if (!text) {
    // Missing, or refused (a link, a FIFO, a device, over the size cap).
    warnings.push_back(
        (text.error().code() == ENOENT
             ? "no " + std::string(format::ProfileLayout::kMetadata)
             : text.error().what()) +
        std::string(": frames cannot be symbolized or unwound"));
    return std::nullopt;
  }
  // The report needs no per-symbol debug info (the largest part of the
  // file): the reader skips it before lexing it.
  auto read = format::read_perf_metadata(*text, {.debug_info = false});
  if (!read) {
    warnings.push_back(read.error().message() + ": ignored");
    return std::nullopt;
  }
  for (auto& w : read->warnings) warnings.push_back(std::move(w));
  return std::move(*read);
}

// Benchmark windows come from ExecutionTimestamps.msgpack, else from the
// copies in the metadata.
format::ExecutionTimestamps read_timestamps(
    const format::ProfileLayout& layout,
    const std::optional<format::PerfMetadataRead>& meta,
    std::vector<std::string>& warnings) {
  std::vector<std::string> problems;
  if (auto bytes = base::read_file(layout.execution_timestamps())) {
    auto read = format::read_execution_timestamps(*bytes, problems);
    if (!read) {
      warnings.push_back(read.error().message() +
                         ": using the copy in perf.metadata");
    } else if (*read) {
      for (auto& w : problems) warnings.push_back(std::move(w));
      return std::move(**read);
    }
  }
  if (!meta) return {};
  for (const auto& w : meta->timestamps_warnings) warnings.push_back(w);
  return meta->metadata.timestamps;
}

// SampleStart..SampleEnd windows with their rounds, named after the URI
// announced at their end.
std::vector<Window> windows_of(const format::ExecutionTimestamps& timestamps) {
  std::vector<Window> windows;
  bool open_window = false;
  // A RoundStart waiting for its RoundEnd (has_round_start = false: none).
  uint64_t round_start = 0;
  bool has_round_start = false;
  for (const format::Marker& marker : timestamps.markers) {
    const std::string& kind = marker.kind;
    const uint64_t ts = marker.timestamp;
    if (kind == "SampleStart") {
      if (open_window) continue;
      windows.push_back(Window{ts, UINT64_MAX, "", "", {}});
      open_window = true;
    } else if (kind == "SampleEnd" && open_window) {
      windows.back().end = ts;
      open_window = false;
    } else if (kind == "RoundStart" || kind == "BenchmarkStart") {
      round_start = ts;
      has_round_start = true;
    } else if ((kind == "RoundEnd" || kind == "BenchmarkEnd") &&
               has_round_start && !windows.empty()) {
      windows.back().rounds.push_back({round_start, ts});
      has_round_start = false;
    }
  }
  // A window's URI is the first announced (in list order) at or after its
  // end: the first whose running maximum of timestamps reaches the end.
  std::vector<uint64_t> latest;
  for (const auto& [ts, uri] : timestamps.uri_by_ts)
    latest.push_back(latest.empty() ? ts : std::max(latest.back(), ts));
  for (size_t i = 0; i < windows.size(); ++i) {
    Window& w = windows[i];
    auto it = std::lower_bound(latest.begin(), latest.end(), w.end);
    if (w.end != UINT64_MAX && it != latest.end())
      w.uri =
          timestamps.uri_by_ts[static_cast<size_t>(it - latest.begin())].second;
    if (w.uri.empty()) {
      w.name = "window " + std::to_string(i + 1) +
               (w.end == UINT64_MAX ? " (never stopped)" : " (no URI)");
    } else {
      w.name = w.uri;
    }
  }
  return windows;
}

}  // namespace

ModuleSymbols::ModuleSymbols(std::vector<symbols::Symbol> symbols) {
  std::stable_sort(symbols.begin(), symbols.end(),
                   [](const symbols::Symbol& a, const symbols::Symbol& b) {
                     return a.addr < b.addr;
                   });
  for (auto& s : symbols) {
    if (s.size == 0) continue;
    // Aliases at one address: .symbols.map lists the one perf would pick
    // first (symbols/ orders them by binding), keep that one.
    if (!symbols_.empty() && symbols_.back().addr == s.addr) continue;
    symbols_.push_back(std::move(s));
  }
  if (!symbols_.empty()) {
    min_ = symbols_.front().addr;
    for (const auto& s : symbols_)
      max_end_ =
          std::max(max_end_,
                   s.size > UINT64_MAX - s.addr ? UINT64_MAX : s.addr + s.size);
  }
}

const symbols::Symbol* ModuleSymbols::find(uint64_t addr) const {
  auto it = std::upper_bound(
      symbols_.begin(), symbols_.end(), addr,
      [](uint64_t a, const symbols::Symbol& s) { return a < s.addr; });
  // Walk back a little: an enclosing symbol may start before a smaller one.
  for (int step = 0; step < 16 && it != symbols_.begin(); ++step) {
    --it;
    // addr >= it->addr here: no overflow, also for a symbol ending past
    // 2^64 (a corrupt map may hold one).
    if (addr - it->addr < it->size) return &*it;
  }
  return nullptr;
}

base::Result<ProfileFolder> ProfileFolder::open(const std::string& folder) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(folder, ec))
    return base::Error("not a profile folder: " + folder, ENOENT);
  ProfileFolder pf;
  pf.path_ = folder;

  const format::ProfileLayout layout(folder);
  std::optional<format::PerfMetadataRead> meta =
      read_metadata(layout, pf.warnings_);
  if (meta) pf.use_metadata(std::move(meta->metadata));
  pf.windows_ = windows_of(read_timestamps(layout, meta, pf.warnings_));
  return pf;
}

void ProfileFolder::use_metadata(format::PerfMetadata meta) {
  has_metadata_ = true;
  for (auto& [pid, refs] : meta.mapped_process_module_symbols)
    pids_[pid].symbols = std::move(refs);
  for (auto& [pid, refs] : meta.mapped_process_unwind_data_by_pid) {
    std::sort(refs.begin(), refs.end(),
              [](const UnwindRef& a, const UnwindRef& b) {
                return a.start < b.start;
              });
    pids_[pid].unwind = std::move(refs);
  }
  for (auto& [key, path] : meta.path_key_to_path)
    key_to_path_[key] = std::move(path);
  if (meta.runner.pid_filter == "tracked" && meta.runner.tracked_pids) {
    filter_pids_ = true;
    tracked_pids_.insert(meta.runner.tracked_pids->begin(),
                         meta.runner.tracked_pids->end());
  }
}

const PidModules* ProfileFolder::modules(int32_t pid) const {
  auto it = pids_.find(pid);
  return it == pids_.end() ? nullptr : &it->second;
}

std::string ProfileFolder::key_path(const std::string& key) const {
  auto it = key_to_path_.find(key);
  if (it != key_to_path_.end()) return it->second;
  return format::ProfileLayout::key_file_name(key);
}

void ProfileFolder::warn(std::string text) {
  std::lock_guard<std::mutex> lock(*loading_);
  warnings_.push_back(std::move(text));
}

void ProfileFolder::warn_once(const std::string& key, const std::string& text) {
  if (warned_.insert(key).second) warnings_.push_back(text);
}

const ModuleSymbols* ProfileFolder::symbols(const std::string& key) {
  std::lock_guard<std::mutex> lock(*loading_);
  auto it = symbols_.find(key);
  if (it != symbols_.end()) return it->second.get();
  std::unique_ptr<ModuleSymbols> table;
  const std::string file = format::ProfileLayout::symbols_map_name(key);
  auto text = base::read_file(format::ProfileLayout(path_).symbols_map(key));
  if (!text) {
    warn_once(key + ".symbols", file + ": " + text.error().what());
  } else if (auto parsed = format::parse_symbols_map(*text); !parsed) {
    warn_once(key + ".symbols", file + ": " + parsed.error().what());
  } else {
    table = std::make_unique<ModuleSymbols>(std::move(*parsed));
  }
  return (symbols_[key] = std::move(table)).get();
}

UnwindModule* ProfileFolder::unwind(const std::string& key) {
  std::lock_guard<std::mutex> lock(*loading_);
  auto it = unwind_.find(key);
  if (it != unwind_.end()) return it->second.get();
  std::unique_ptr<UnwindModule> module;
  const std::string file = format::ProfileLayout::unwind_data_name(key);
  auto region = base::read_file(format::ProfileLayout(path_).unwind_data(key));
  if (!region) {
    warn_once(key + ".unwind", file + ": " + region.error().what());
  } else {
    auto data = format::decode_unwind_data(std::span<const uint8_t>(
        reinterpret_cast<const uint8_t*>(region->data()), region->size()));
    if (!data) {
      warn_once(key + ".unwind", file + ": " + data.error().what());
    } else {
      std::optional<std::vector<uint8_t>> hdr = std::move(data->eh_frame_hdr);
      uint64_t hdr_svma =
          data->eh_frame_hdr_svma ? data->eh_frame_hdr_svma->start : 0;
      auto eh =
          EhFrame::create(std::move(data->eh_frame), data->eh_frame_svma.start,
                          std::move(hdr), hdr_svma);
      if (!eh) {
        warn_once(key + ".unwind", file + ": " + eh.error().what());
      } else {
        module = std::make_unique<UnwindModule>();
        module->eh_frame = std::make_unique<EhFrame>(std::move(*eh));
        module->base_svma = data->base_svma;
      }
    }
  }
  return (unwind_[key] = std::move(module)).get();
}

const JitNames* ProfileFolder::jit_names(int32_t pid) {
  std::lock_guard<std::mutex> lock(*loading_);
  auto it = jit_names_.find(pid);
  if (it != jit_names_.end()) return it->second.get();
  const format::ProfileLayout layout(path_);
  auto map = base::read_file(layout.perf_map(pid));
  auto timeline = base::read_file(layout.jit_timeline(pid));
  std::unique_ptr<JitNames> names;
  if (map || timeline) {
    size_t bad = 0;
    names = std::make_unique<JitNames>(
        map ? format::parse_perf_map(*map)
            : std::vector<format::PerfMapEntry>{},
        timeline ? format::parse_jit_timeline(*timeline, &bad)
                 : std::vector<format::TimedJitEntry>{});
    if (bad != 0)
      warnings_.push_back(layout.jit_timeline(pid) + ": " +
                          std::to_string(bad) + " malformed line(s) skipped");
    if (names->dropped() != 0)
      warnings_.push_back("JIT names of pid " + std::to_string(pid) + ": " +
                          std::to_string(names->dropped()) +
                          " overlapping entries dropped (too many)");
  }
  return (jit_names_[pid] = std::move(names)).get();
}

}  // namespace runner::report
