#include "report/unwinder.hpp"

#include <algorithm>
#include <array>

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

}  // namespace

const UnwindRef* find_range(const PidModules* modules, uint64_t addr) {
  if (modules == nullptr) return nullptr;
  const auto& list = modules->unwind;
  auto it = std::upper_bound(
      list.begin(), list.end(), addr,
      [](uint64_t a, const UnwindRef& r) { return a < r.start; });
  // Executable mappings of one process rarely overlap: look at the closest
  // few that start below the address.
  for (int step = 0; step < 8 && it != list.begin(); ++step) {
    --it;
    if (addr >= it->start && addr < it->end) return &*it;
  }
  return nullptr;
}

UnwoundStack Unwinder::unwind(const profiler::SampleRecord& sample,
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

UnwoundStack Unwinder::unwind_dwarf(const profiler::SampleRecord& sample,
                                    std::span<const uint8_t> stack) {
  UnwoundStack out;
  RegState regs = registers_from_sample(sample.regs_mask, sample.regs);
  if (!regs.has(kDwarfRa) || !regs.has(kDwarfRsp)) {
    if (sample.ip != 0) out.addrs.push_back(sample.ip);
    out.end = StackEnd::kUnknown;
    return out;
  }
  const StackMemory mem{regs.value[kDwarfRsp], stack};
  const PidModules* modules = folder_.modules(static_cast<int32_t>(sample.pid));
  uint64_t ip = regs.value[kDwarfRa];
  out.addrs.push_back(ip);
  const UnwindRef* range = nullptr;
  UnwindModule* module = nullptr;
  const UnwindRow* row = nullptr;
  const UnwindModule* row_module = nullptr;
  uint64_t row_svma = 0;
  // The caller of a signal frame (CIE augmentation 'S') was interrupted at
  // `ip`, not called: its ip is an exact pc, looked up as is like the leaf's
  // (ip - 1 may be another function, or bytes no FDE covers).
  bool exact_pc = true;
  while (out.addrs.size() < kMaxFrames) {
    uint64_t lookup = exact_pc ? ip : ip - 1;
    // Consecutive frames are mostly in the same module (and recursion
    // repeats the same return address): check the last ones first.
    if (range == nullptr || lookup < range->start || lookup >= range->end) {
      range = find_range(modules, lookup);
      module = module_for(range);
    }
    if (module == nullptr) {
      out.end = StackEnd::kUnknown;
      return out;
    }
    uint64_t svma = lookup - range->base_avma + module->base_svma;
    if (row == nullptr || row_module != module || svma != row_svma) {
      row = row_for(module, svma);
      row_module = module;
      row_svma = svma;
    }
    if (row == nullptr) {
      out.end = StackEnd::kUnknown;
      return out;
    }
    std::span<const uint8_t> cfi_bytes = module->eh_frame->bytes();
    uint64_t cfa = 0;
    bool outside = false;
    if (row->cfa.kind == CfaRule::Kind::kRegOffset) {
      if (row->cfa.reg >= kDwarfRegCount || !regs.has(row->cfa.reg)) {
        out.end = StackEnd::kUnknown;
        return out;
      }
      cfa = regs.value[row->cfa.reg] + static_cast<uint64_t>(row->cfa.offset);
    } else if (row->cfa.kind == CfaRule::Kind::kExpression) {
      EvalStatus st = EvalStatus::kUnsupported;
      if (static_cast<size_t>(row->cfa.expr_offset) + row->cfa.expr_size <=
          cfi_bytes.size())
        st = evaluate_expression(
            cfi_bytes.subspan(row->cfa.expr_offset, row->cfa.expr_size), regs,
            mem, std::nullopt, &cfa);
      if (st != EvalStatus::kOk) {
        out.end = st == EvalStatus::kMemoryOutside ? StackEnd::kTruncated
                                                   : StackEnd::kUnknown;
        return out;
      }
    } else {
      out.end = StackEnd::kUnknown;
      return out;
    }
    const RegRule& ra_rule = row->regs[kDwarfRa];
    if (ra_rule.kind == RegRule::Kind::kUndefined) {
      out.end = StackEnd::kComplete;  // the outermost frame (_start, clone)
      return out;
    }
    if (ra_rule.kind == RegRule::Kind::kSameValue) {
      out.end = StackEnd::kUnknown;  // would loop on the same address
      return out;
    }
    RegState caller;
    for (int r = 0; r < kDwarfRegCount; ++r) {
      if (r == kDwarfRsp) continue;
      if (!apply_rule(row->regs[static_cast<size_t>(r)], r, cfa, regs, mem,
                      cfi_bytes, caller, &outside) &&
          r == kDwarfRa) {
        out.end = outside ? StackEnd::kTruncated : StackEnd::kUnknown;
        return out;
      }
    }
    caller.set(kDwarfRsp, cfa);
    if (!caller.has(kDwarfRa) || caller.value[kDwarfRa] == 0) {
      out.end = StackEnd::kComplete;
      return out;
    }
    // The stack grows down: a caller's CFA is above the callee's SP. Anything
    // else is a corrupt frame, not progress.
    if (cfa <= regs.value[kDwarfRsp] && out.addrs.size() > 1) {
      out.end = StackEnd::kUnknown;
      return out;
    }
    regs = caller;
    exact_pc = row->signal_frame;
    ip = regs.value[kDwarfRa];
    if (exact_pc)
      out.interrupted.push_back(static_cast<uint32_t>(out.addrs.size()));
    out.addrs.push_back(ip);
  }
  out.end = StackEnd::kTruncated;  // frame limit
  return out;
}

}  // namespace runner::report
