// Unwinder: from a sample to its return addresses (leaf first), using only
// the profile folder: the CFI of .unwind_data (DWARF mode, registers and
// stack copy of the sample) or the kernel's frame-pointer call chain.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "perfdata/perfdata.hpp"
#include "report/cfi.hpp"
#include "report/profile_folder.hpp"

namespace runner::report {

enum class StackEnd {
  kComplete,   // reached the outermost frame (undefined return address)
  kTruncated,  // the stack copy ended before the outermost frame
  kUnknown,    // a frame in code without unwind information or a valid
               // frame pointer
};

struct UnwoundStack {
  std::vector<uint64_t> addrs;  // leaf first; return addresses after it
  StackEnd end = StackEnd::kComplete;
  // Frames after the leaf whose address is an exact pc, not a return
  // address: the callers of signal frames, interrupted there (rare, so
  // usually empty). Symbolized at the address itself, like the leaf.
  std::vector<uint32_t> interrupted;
  // DWARF mode: frames left through their frame pointer because their code
  // has no CFI (JIT code, hand-written assembly); their callers came from
  // [rbp + 8]. Empty in frame-pointer mode, where every frame is.
  std::vector<uint32_t> frame_pointer;
  bool exact_pc(size_t i) const {
    return i == 0 || std::find(interrupted.begin(), interrupted.end(), i) !=
                         interrupted.end();
  }
};

inline constexpr size_t kMaxFrames = 256;

// The executable mapping of a process (`modules` of ProfileFolder) holding
// `addr`, or nullptr; the symbolizer finds an address's module through it.
const UnwindRef* find_range(const PidModules* modules, uint64_t addr);

class Unwinder {
 public:
  explicit Unwinder(ProfileFolder& folder) : folder_(folder) {}
  // DWARF mode (regs + `stack`, the sample's stack copy: SampleRecord::stack
  // or PipedataReader::last_stack()) when the sample has them, else the
  // frame-pointer call chain. In DWARF mode a frame whose code has no CFI is
  // left through its frame pointer when that looks valid (framehop's rule).
  UnwoundStack unwind(const perfdata::SampleRecord& sample,
                      std::span<const uint8_t> stack);

 private:
  UnwoundStack unwind_dwarf(const perfdata::SampleRecord& sample,
                            std::span<const uint8_t> stack);
  // Where a DWARF walk is: the module and row of the last frame, kept
  // because consecutive frames mostly share them.
  struct Walk {
    const PidModules* modules = nullptr;
    const UnwindRef* range = nullptr;
    UnwindModule* module = nullptr;
    const UnwindRow* row = nullptr;
    const UnwindModule* row_module = nullptr;
    uint64_t row_svma = 0;
  };
  // The CFI row of `lookup` (an address of the walk's process), or nullptr
  // when no module or FDE covers it.
  const UnwindRow* row_at(Walk& walk, uint64_t lookup);
  // The loaded module of a range (ProfileFolder::unwind looks up by key
  // string; ranges are stable, so their modules are cached by address).
  UnwindModule* module_for(const UnwindRef* range);
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
  std::unordered_map<const UnwindRef*, UnwindModule*> modules_;
};

}  // namespace runner::report
