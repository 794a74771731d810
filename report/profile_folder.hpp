// ProfileFolder: the artifacts of one profile folder, loaded on demand.
// Missing or corrupt artifacts are warnings: the affected frames become
// unknown, everything else is still reported. The loaders (symbols, unwind,
// jit_names) may be called from several threads (the report's unwinding
// pool and its main thread): they load under one lock, and what they
// return is never modified afterwards. warn() may be called from any
// thread; warnings() is read once the others are done.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/base.hpp"
#include "format/format.hpp"
#include "report/cfi.hpp"
#include "report/jit_names.hpp"
#include "symbols/symbols.hpp"

namespace runner::report {

// Entries of perf.metadata's per-pid lists.
using SymbolsRef = format::SymbolsRef;
using UnwindRef = format::UnwindRef;

struct PidModules {
  std::vector<SymbolsRef> symbols;
  std::vector<UnwindRef> unwind;  // sorted by start
};

// Sorted symbols of one module with perf-like alias resolution.
class ModuleSymbols {
 public:
  explicit ModuleSymbols(std::vector<symbols::Symbol> symbols);
  // The symbol containing `addr` (raw ELF address), or nullptr.
  const symbols::Symbol* find(uint64_t addr) const;
  // Every symbol, sorted by address (one per address).
  const std::vector<symbols::Symbol>& entries() const { return symbols_; }
  uint64_t min_addr() const { return min_; }
  uint64_t max_end() const { return max_end_; }

 private:
  std::vector<symbols::Symbol> symbols_;  // sorted, aliases collapsed
  uint64_t min_ = 0, max_end_ = 0;
};

struct UnwindModule {
  std::unique_ptr<EhFrame> eh_frame;
  uint64_t base_svma = 0;
};

struct Window {
  uint64_t start = 0, end = UINT64_MAX;
  std::string name, uri;
  std::vector<std::pair<uint64_t, uint64_t>> rounds;
};

class ProfileFolder {
 public:
  static base::Result<ProfileFolder> open(const std::string& folder);

  const std::string& path() const { return path_; }
  const std::map<int32_t, PidModules>& pids() const { return pids_; }
  const PidModules* modules(int32_t pid) const;
  // Module path recorded for a key (for display: basename).
  std::string key_path(const std::string& key) const;
  const ModuleSymbols* symbols(const std::string& key);
  UnwindModule* unwind(const std::string& key);
  // The pid's JIT names (perf-<pid>.map and jit-<pid>.timeline), nullptr
  // when it has neither.
  const JitNames* jit_names(int32_t pid);
  const std::vector<Window>& windows() const { return windows_; }
  // Empty when every pid is shown (exec-harness runs, or no filter known).
  const std::set<int32_t>& tracked_pids() const { return tracked_pids_; }
  bool filter_pids() const { return filter_pids_; }
  bool has_metadata() const { return has_metadata_; }
  std::vector<std::string>& warnings() { return warnings_; }
  // Adds a warning; any thread.
  void warn(std::string text);

 private:
  ProfileFolder() = default;
  void warn_once(const std::string& key, const std::string& text);
  void use_metadata(format::PerfMetadata meta);

  std::string path_;
  bool has_metadata_ = false;
  std::map<int32_t, PidModules> pids_;
  std::map<std::string, std::string> key_to_path_;
  std::map<std::string, std::unique_ptr<ModuleSymbols>> symbols_;
  std::map<std::string, std::unique_ptr<UnwindModule>> unwind_;
  std::map<int32_t, std::unique_ptr<JitNames>> jit_names_;
  std::vector<Window> windows_;
  std::set<int32_t> tracked_pids_;
  bool filter_pids_ = false;
  std::unique_ptr<std::mutex> loading_ = std::make_unique<std::mutex>();
  std::set<std::string> warned_;
  std::vector<std::string> warnings_;
};

}  // namespace runner::report
