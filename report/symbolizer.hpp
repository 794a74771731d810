// Symbolizer: from an address of a process to frame names, using only the
// profile folder (.symbols.map + load biases, perf-<pid>.map and
// jit-<pid>.timeline: JitNames, which also says whose JIT code was at an
// address at the sample's time), and with
// --inline the DWARF of the original ELF files when they match.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "perfdata/perfdata.hpp"
#include "report/profile_folder.hpp"

namespace runner::report {

struct FrameInfo {
  std::string name;  // display name; inlined functions end in " (inlined)"
  std::string dso;   // module path ("" when unknown)
  bool resolved = false;
  bool inlined = false;  // an inlined function's frame (perf prints no dso)
};

class Symbolizer {
 public:
  // `inline_frames`: expand inlined functions through the DWARF of the
  // original ELF files, when they are on disk and are the profiled files.
  Symbolizer(ProfileFolder& folder, bool demangle, bool inline_frames = false)
      : folder_(folder), demangle_(demangle), inline_frames_(inline_frames) {}
  // Frame ids of `addr` in `pid`: the inlined functions containing it,
  // innermost first (only with inline expansion), then the function itself.
  // Return addresses (`leaf` false) are looked up at addr - 1 (the call
  // instruction), like perf does; a leaf or an interrupted frame
  // (UnwoundStack::exact_pc) at addr. `time` is the sample's (JIT code at a
  // reused address is named after the code there at that time). Valid
  // until the next resolve call.
  std::span<const uint32_t> resolve_frames(int32_t pid, uint64_t addr,
                                           bool leaf, uint64_t time);
  const FrameInfo& frame(uint32_t id) const { return frames_[id]; }
  size_t distinct_frames() const { return frames_.size(); }

 private:
  // Where lookup found a symbol: its module and raw ELF address.
  struct SymbolLocation {
    std::string key;
    uint64_t svma = 0;
  };
  struct FrameList {
    uint32_t first = 0, count = 0;  // in frame_lists_
  };

  FrameInfo lookup(int32_t pid, uint64_t addr, SymbolLocation* location);
  // The frame of a JIT entry, interned once per entry.
  std::span<const uint32_t> jit_frames(int32_t pid,
                                       const JitNames::Entry& entry);
  std::optional<uint64_t> load_bias_of(const PidModules& modules,
                                       const UnwindRef& range);
  // The module's inline resolver, opened (and checked against the folder's
  // symbols) on first use; nullptr when the module cannot be expanded, which
  // is warned about once.
  const symbols::InlineResolver* inline_resolver(const std::string& key);
  std::string display_name(const std::string& raw);
  uint32_t intern(FrameInfo info);

  ProfileFolder& folder_;
  bool demangle_;
  bool inline_frames_;
  struct AddressHash {
    size_t operator()(const std::pair<int32_t, uint64_t>& k) const {
      return std::hash<uint64_t>()(k.second * 0x9e3779b97f4a7c15ULL ^
                                   static_cast<uint32_t>(k.first));
    }
  };
  // Every address is resolved once per pid: frames repeat across samples.
  std::unordered_map<std::pair<int32_t, uint64_t>, FrameList, AddressHash>
      cache_;
  // In front of cache_: the last address seen per slot (no node to chase).
  struct Recent {
    int32_t pid = 0;
    uint64_t addr = 0;
    FrameList list;
    bool used = false;
  };
  static constexpr size_t kRecentSlots = 4096;
  std::vector<Recent> recent_ = std::vector<Recent>(kRecentSlots);
  std::vector<uint32_t> frame_lists_;
  std::unordered_map<const JitNames::Entry*, FrameList> jit_cache_;
  std::map<std::pair<std::string, std::string>, uint32_t> ids_;
  std::map<std::string, std::string> demangled_;
  std::vector<FrameInfo> frames_;
  std::map<std::string, std::optional<symbols::InlineResolver>>
      inline_resolvers_;  // by module key; nullopt: not expanded
};

// Demangles like perf (C++ and Rust, no parameter lists); raw names that are
// not mangled come back unchanged.
std::string demangle_symbol(const std::string& raw);

}  // namespace runner::report
