// DWARF expression evaluator of the unwinder (report/ internal): the CFI
// subset (literals, registers, stack operations, arithmetic, comparisons,
// branches, deref) over one frame's registers and the sample's stack copy.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <span>

#include "report/arch_x86_64.hpp"

namespace runner::report {

// Memory available to the unwinder: the sample's user stack copy, which
// starts at the sampled RSP.
struct StackMemory {
  uint64_t base = 0;
  std::span<const uint8_t> bytes;
  // False when [addr, addr + 8) is not inside the copy. Inline: every
  // unwinding step reads through it.
  bool read_u64(uint64_t addr, uint64_t* out) const {
    if (addr < base || addr - base > bytes.size() ||
        bytes.size() - (addr - base) < 8)
      return false;
    std::memcpy(out, bytes.data() + (addr - base), 8);
    return true;
  }
};

enum class EvalStatus { kOk, kMemoryOutside, kUnsupported };

// Evaluates a DWARF expression of a frame whose registers are `regs`.
// `initial` is pushed first when set (DW_CFA_expression / val_expression
// push the CFA).
EvalStatus evaluate_expression(std::span<const uint8_t> expr,
                               const RegState& regs, const StackMemory& mem,
                               std::optional<uint64_t> initial,
                               uint64_t* result);

}  // namespace runner::report
