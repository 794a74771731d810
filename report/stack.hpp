// Unwinder and Symbolizer: from a sample to a list of frame names, using
// only the profile folder (CFI of .unwind_data, .symbols.map + load biases,
// perf-<pid>.map).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "profiler/pipedata_reader.hpp"
#include "report/profile_folder.hpp"

namespace runner::report {

enum class StackEnd {
  kComplete,   // reached the outermost frame (undefined return address)
  kTruncated,  // the stack copy ended before the outermost frame
  kUnknown,    // a frame in code without unwind information
};

struct UnwoundStack {
  std::vector<uint64_t> addrs;  // leaf first; return addresses after it
  StackEnd end = StackEnd::kComplete;
};

inline constexpr size_t kMaxFrames = 256;

class Unwinder {
 public:
  explicit Unwinder(ProfileFolder& folder) : folder_(folder) {}
  // DWARF mode (regs + stack copy) when the sample has them, else the
  // frame-pointer call chain.
  UnwoundStack unwind(const profiler::SampleRecord& sample);

 private:
  UnwoundStack unwind_dwarf(const profiler::SampleRecord& sample);
  const UnwindRow* row_for(UnwindModule* module, uint64_t svma);

  ProfileFolder& folder_;
  // Rows by (module, SVMA): return addresses repeat across samples, and
  // running the CIE + FDE program is the costly part of a step.
  struct RowKeyHash {
    size_t operator()(const std::pair<const UnwindModule*, uint64_t>& k) const {
      return std::hash<uint64_t>()(k.second * 31 +
                                   reinterpret_cast<uintptr_t>(k.first));
    }
  };
  std::unordered_map<std::pair<const UnwindModule*, uint64_t>,
                     std::optional<UnwindRow>, RowKeyHash>
      rows_;
};

struct FrameInfo {
  std::string name;  // display name
  std::string dso;   // module path ("" when unknown)
  bool resolved = false;
};

class Symbolizer {
 public:
  Symbolizer(ProfileFolder& folder, bool demangle)
      : folder_(folder), demangle_(demangle) {}
  // Frame id of `addr` in `pid`; non-leaf frames are looked up at addr - 1
  // (the call instruction), like perf does.
  uint32_t resolve(int32_t pid, uint64_t addr, bool leaf);
  const FrameInfo& frame(uint32_t id) const { return frames_[id]; }
  size_t distinct_frames() const { return frames_.size(); }

 private:
  FrameInfo lookup(int32_t pid, uint64_t addr);
  std::string display_name(const std::string& raw);
  uint32_t intern(FrameInfo info);

  ProfileFolder& folder_;
  bool demangle_;
  std::map<std::tuple<int32_t, uint64_t>, uint32_t> cache_;
  std::map<std::pair<std::string, std::string>, uint32_t> ids_;
  std::map<std::string, std::string> demangled_;
  std::vector<FrameInfo> frames_;
};

// Demangles like perf (C++ and Rust, no parameter lists); raw names that are
// not mangled come back unchanged.
std::string demangle_symbol(const std::string& raw);

}  // namespace runner::report
