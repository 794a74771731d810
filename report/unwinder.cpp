#include "report/unwinder.hpp"

#include <algorithm>
#include <array>
#include <bit>

#include "base/base.hpp"
#include "report/dwarf_expr.hpp"

namespace runner::report {
namespace {

// PERF_CONTEXT_* markers are the top 4095 values of the u64 range.
constexpr uint64_t kPerfContextMax = static_cast<uint64_t>(-4095);

bool apply_rule(const RegRule& rule, int reg, uint64_t cfa,
                const RegState& regs, const StackMemory& mem,
                std::span<const uint8_t> cfi_bytes, RegState& out,
                bool* memory_outside) {
  uint64_t value = 0;
  switch (rule.kind) {
    case RegRule::Kind::kSameValue:
      if (regs.has(reg)) out.set(reg, regs.value[static_cast<size_t>(reg)]);
      return true;
    case RegRule::Kind::kUndefined:
      return true;
    case RegRule::Kind::kOffset: {
      const uint64_t slot = cfa + static_cast<uint64_t>(rule.offset);
      if (!mem.read_u64(slot, &value)) {
        // A save slot below the stack pointer has been popped: in an
        // epilogue (between `pop %rbp` and `ret`, where GCC's CFI still
        // says "saved at CFA-16") the register already holds the caller's
        // value. perf's libdw unwinder stops there instead.
        if (slot < mem.base && regs.has(reg)) {
          out.set(reg, regs.value[static_cast<size_t>(reg)]);
          return true;
        }
        *memory_outside = true;
        return false;
      }
      out.set(reg, value);
      return true;
    }
    case RegRule::Kind::kValOffset:
      out.set(reg, cfa + static_cast<uint64_t>(rule.offset));
      return true;
    case RegRule::Kind::kRegister:
      if (rule.reg < kDwarfRegCount && regs.has(rule.reg))
        out.set(reg, regs.value[rule.reg]);
      return true;
    case RegRule::Kind::kExpression:
    case RegRule::Kind::kValExpression: {
      if (static_cast<size_t>(rule.expr_offset) + rule.expr_size >
          cfi_bytes.size())
        return false;
      EvalStatus st = evaluate_expression(
          cfi_bytes.subspan(rule.expr_offset, rule.expr_size), regs, mem, cfa,
          &value);
      if (st == EvalStatus::kMemoryOutside) *memory_outside = true;
      if (st != EvalStatus::kOk) return false;
      if (rule.kind == RegRule::Kind::kValExpression) {
        out.set(reg, value);
        return true;
      }
      uint64_t saved = 0;
      if (!mem.read_u64(value, &saved)) {
        *memory_outside = true;
        return false;
      }
      out.set(reg, saved);
      return true;
    }
  }
  return false;
}

// The CFA of a frame whose registers are `regs`, or how the walk ends.
std::optional<StackEnd> frame_cfa(const UnwindRow& row,
                                  std::span<const uint8_t> cfi_bytes,
                                  const RegState& regs, const StackMemory& mem,
                                  uint64_t* cfa) {
  if (row.cfa.kind == CfaRule::Kind::kRegOffset) {
    if (row.cfa.reg >= kDwarfRegCount || !regs.has(row.cfa.reg))
      return StackEnd::kUnknown;
    *cfa = regs.value[row.cfa.reg] + static_cast<uint64_t>(row.cfa.offset);
    return std::nullopt;
  }
  if (row.cfa.kind != CfaRule::Kind::kExpression) return StackEnd::kUnknown;
  EvalStatus st = EvalStatus::kUnsupported;
  if (static_cast<size_t>(row.cfa.expr_offset) + row.cfa.expr_size <=
      cfi_bytes.size())
    st = evaluate_expression(
        cfi_bytes.subspan(row.cfa.expr_offset, row.cfa.expr_size), regs, mem,
        std::nullopt, cfa);
  if (st == EvalStatus::kOk) return std::nullopt;
  return st == EvalStatus::kMemoryOutside ? StackEnd::kTruncated
                                          : StackEnd::kUnknown;
}

// rbx, rbp, r12-r15 (System V psABI: preserved across calls) and the
// return address column.
constexpr uint32_t kCalleeSaved = (1u << kDwarfRbx) | (1u << kDwarfRbp) |
                                  (1u << 12) | (1u << 13) | (1u << 14) |
                                  (1u << 15) | (1u << kDwarfRa);

// One step up the stack: the caller's registers from the callee's `regs`
// and its `row`, or how the walk ends. `past_leaf`: the callee is not the
// sampled frame.
std::optional<StackEnd> caller_registers(const UnwindRow& row,
                                         std::span<const uint8_t> cfi_bytes,
                                         const RegState& regs,
                                         const StackMemory& mem, bool past_leaf,
                                         RegState* caller) {
  uint64_t cfa = 0;
  if (auto end = frame_cfa(row, cfi_bytes, regs, mem, &cfa)) return end;
  const RegRule& ra_rule = row.regs[kDwarfRa];
  if (ra_rule.kind == RegRule::Kind::kUndefined)
    return StackEnd::kComplete;  // the outermost frame (_start, clone)
  if (ra_rule.kind == RegRule::Kind::kSameValue)
    return StackEnd::kUnknown;  // would loop on the same address
  bool outside = false;
  // A call leaves only the callee-saved registers (and the return address)
  // meaningful in the caller: the others' rules are skipped, saving most of
  // a step's work, except past a signal frame, whose caller was interrupted
  // with every register live.
  constexpr uint32_t kAll = (1u << kDwarfRegCount) - 1;
  const uint32_t wanted =
      (row.signal_frame ? kAll : kCalleeSaved) & ~(1u << kDwarfRsp);
  for (uint32_t left = wanted; left != 0; left &= left - 1) {
    const int r = std::countr_zero(left);
    if (!apply_rule(row.regs[static_cast<size_t>(r)], r, cfa, regs, mem,
                    cfi_bytes, *caller, &outside) &&
        r == kDwarfRa)
      return outside ? StackEnd::kTruncated : StackEnd::kUnknown;
  }
  caller->set(kDwarfRsp, cfa);
  if (!caller->has(kDwarfRa) || caller->value[kDwarfRa] == 0)
    return StackEnd::kComplete;
  // The stack grows down: a caller's CFA is above the callee's SP. Anything
  // else is a corrupt frame, not progress.
  if (cfa <= regs.value[kDwarfRsp] && past_leaf) return StackEnd::kUnknown;
  return std::nullopt;
}

// Above the stack pointer, a frame pointer this far beyond the copy is taken
// for garbage rather than for a stack the copy cut short.
constexpr uint64_t kMaxStackDepth = 64ull << 20;

// One step up through a frame without CFI (JIT code, hand-written assembly,
// a module without .eh_frame), by its frame pointer: the caller's frame
// pointer is saved at [rbp], its return address at [rbp + 8], and its stack
// pointer is rbp + 16. The frame pointer must look valid: aligned, at or
// above the stack pointer (so each step moves up the stack), inside the
// copy. The callee-saved registers keep their values, as the ABI has it.
std::optional<StackEnd> frame_pointer_step(const RegState& regs,
                                           const StackMemory& mem,
                                           RegState* caller) {
  if (!regs.has(kDwarfRbp)) return StackEnd::kUnknown;
  const uint64_t fp = regs.value[kDwarfRbp];
  if (fp == 0 || fp % 8 != 0 || fp < regs.value[kDwarfRsp])
    return StackEnd::kUnknown;
  uint64_t saved_fp = 0, ra = 0;
  if (!mem.read_u64(fp, &saved_fp) || !mem.read_u64(fp + 8, &ra))
    return fp - mem.base < kMaxStackDepth ? StackEnd::kTruncated
                                          : StackEnd::kUnknown;
  if (ra == 0) return StackEnd::kComplete;
  caller->value = regs.value;
  caller->valid = regs.valid & kCalleeSaved;
  caller->set(kDwarfRsp, fp + 16);
  caller->set(kDwarfRbp, saved_fp);
  caller->set(kDwarfRa, ra);
  return std::nullopt;
}

}  // namespace

const UnwindRef* find_range(const PidModules* modules, uint64_t addr) {
  if (modules == nullptr) return nullptr;
  return base::find_containing(modules->unwind, addr);
}

UnwoundStack Unwinder::unwind(const perfdata::SampleRecord& sample,
                              std::span<const uint8_t> stack) {
  if (sample.regs_abi != 0 && !sample.regs.empty() && sample.regs_mask != 0)
    return unwind_dwarf(sample, stack);
  UnwoundStack out;
  for (uint64_t ip : sample.callchain) {
    if (ip >= kPerfContextMax) continue;
    out.addrs.push_back(ip);
    if (out.addrs.size() >= kMaxFrames) break;
  }
  if (out.addrs.empty() && sample.ip != 0) out.addrs.push_back(sample.ip);
  out.end = StackEnd::kComplete;
  return out;
}

const UnwindRow* Unwinder::row_for(UnwindModule* module, uint64_t svma) {
  auto key = std::make_pair(static_cast<const UnwindModule*>(module), svma);
  auto it = rows_.find(key);
  if (it == rows_.end()) {
    auto row = module->eh_frame->find_row(svma);
    it = rows_.emplace(key, row ? std::optional<UnwindRow>(*row) : std::nullopt)
             .first;
  }
  return it->second ? &*it->second : nullptr;
}

UnwindModule* Unwinder::module_for(const UnwindRef* range) {
  if (range == nullptr) return nullptr;
  auto it = modules_.find(range);
  if (it == modules_.end())
    it = modules_.emplace(range, folder_.unwind(range->key)).first;
  return it->second;
}

const UnwindRow* Unwinder::row_at(Walk& walk, uint64_t lookup) {
  // Consecutive frames are mostly in the same module (and recursion
  // repeats the same return address): check the last ones first.
  if (walk.range == nullptr || lookup < walk.range->start ||
      lookup >= walk.range->end) {
    walk.range = find_range(walk.modules, lookup);
    walk.module = module_for(walk.range);
  }
  if (walk.module == nullptr) return nullptr;
  const uint64_t svma = lookup - walk.range->base_avma + walk.module->base_svma;
  if (walk.row == nullptr || walk.row_module != walk.module ||
      svma != walk.row_svma) {
    walk.row = row_for(walk.module, svma);
    walk.row_module = walk.module;
    walk.row_svma = svma;
  }
  return walk.row;
}

UnwoundStack Unwinder::unwind_dwarf(const perfdata::SampleRecord& sample,
                                    std::span<const uint8_t> stack) {
  UnwoundStack out;
  out.addrs.reserve(32);  // one allocation for most stacks
  RegState regs = registers_from_sample(sample.regs_mask, sample.regs);
  if (!regs.has(kDwarfRa) || !regs.has(kDwarfRsp)) {
    if (sample.ip != 0) out.addrs.push_back(sample.ip);
    out.end = StackEnd::kUnknown;
    return out;
  }
  const StackMemory mem{regs.value[kDwarfRsp], stack};
  Walk walk;
  walk.modules = folder_.modules(static_cast<int32_t>(sample.pid));
  uint64_t ip = regs.value[kDwarfRa];
  out.addrs.push_back(ip);
  // The caller of a signal frame (CIE augmentation 'S') was interrupted at
  // `ip`, not called: its ip is an exact pc, looked up as is like the leaf's
  // (ip - 1 may be another function, or bytes no FDE covers).
  bool exact_pc = true;
  // Two register sets, swapped at each step: only `valid` is reset (the
  // values it does not cover are never read).
  RegState next;
  RegState* callee = &regs;
  RegState* caller = &next;
  while (out.addrs.size() < kMaxFrames) {
    const UnwindRow* row = row_at(walk, exact_pc ? ip : ip - 1);
    caller->valid = 0;
    std::optional<StackEnd> end;
    if (row != nullptr) {
      end = caller_registers(*row, walk.module->eh_frame->bytes(), *callee, mem,
                             out.addrs.size() > 1, caller);
    } else {
      // No CFI for this code: its frame pointer, when it looks valid.
      end = frame_pointer_step(*callee, mem, caller);
      if (!end)
        out.frame_pointer.push_back(
            static_cast<uint32_t>(out.addrs.size() - 1));
    }
    if (end) {
      out.end = *end;
      return out;
    }
    std::swap(callee, caller);
    exact_pc = row != nullptr && row->signal_frame;
    ip = callee->value[kDwarfRa];
    if (exact_pc)
      out.interrupted.push_back(static_cast<uint32_t>(out.addrs.size()));
    out.addrs.push_back(ip);
  }
  out.end = StackEnd::kTruncated;  // frame limit
  return out;
}

}  // namespace runner::report
