#include "report/dwarf_expr.hpp"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "report/cfi_cursor.hpp"

namespace runner::report {
namespace {

// DW_OP_* opcodes of the CFI subset (DWARF 5, section 7.7.1).
enum Op : uint8_t {
  kAddr = 0x03,
  kDeref = 0x06,
  kConst1u = 0x08,
  kConst1s = 0x09,
  kConst2u = 0x0a,
  kConst2s = 0x0b,
  kConst4u = 0x0c,
  kConst4s = 0x0d,
  kConst8u = 0x0e,
  kConst8s = 0x0f,
  kConstu = 0x10,
  kConsts = 0x11,
  kDup = 0x12,
  kDrop = 0x13,
  kOver = 0x14,
  kPick = 0x15,
  kSwap = 0x16,
  kRot = 0x17,
  kAbs = 0x19,
  kAnd = 0x1a,
  kDiv = 0x1b,
  kMinus = 0x1c,
  kMod = 0x1d,
  kMul = 0x1e,
  kNeg = 0x1f,
  kNot = 0x20,
  kOr = 0x21,
  kPlus = 0x22,
  kPlusUconst = 0x23,
  kShl = 0x24,
  kShr = 0x25,
  kShra = 0x26,
  kXor = 0x27,
  kBra = 0x28,
  kEq = 0x29,
  kGe = 0x2a,
  kGt = 0x2b,
  kLe = 0x2c,
  kLt = 0x2d,
  kNe = 0x2e,
  kSkip = 0x2f,
  kLit0 = 0x30,
  kLit31 = 0x4f,
  kBreg0 = 0x70,
  kBreg31 = 0x8f,
  kBregx = 0x92,
  kNop = 0x96,
};

constexpr int kMaxSteps = 1000;   // looping branches
constexpr size_t kMaxDepth = 64;  // of the value stack

// One evaluation: a value stack over the expression's bytes. Each opcode
// group is one member; each returns kOk to go on.
class Machine {
 public:
  Machine(std::span<const uint8_t> expr, const RegState& regs,
          const StackMemory& mem)
      : expr_(expr), regs_(regs), mem_(mem), cursor_(expr, 0) {
    stack_.reserve(8);
  }

  EvalStatus run(std::optional<uint64_t> initial, uint64_t* result) {
    if (initial) stack_.push_back(*initial);
    int steps = 0;
    while (!cursor_.at_end()) {
      if (++steps > kMaxSteps) return EvalStatus::kUnsupported;
      const EvalStatus st = step(cursor_.u8());
      if (st != EvalStatus::kOk) return st;
      if (!cursor_.ok() || stack_.size() > kMaxDepth)
        return EvalStatus::kUnsupported;
    }
    if (stack_.empty()) return EvalStatus::kUnsupported;
    *result = stack_.back();
    return EvalStatus::kOk;
  }

 private:
  EvalStatus step(uint8_t op) {
    if (op >= kLit0 && op <= kLit31) return push(op - kLit0);
    if (op >= kBreg0 && op <= kBreg31) return breg(op - kBreg0);
    switch (op) {
      case kAddr:
      case kConst1u:
      case kConst1s:
      case kConst2u:
      case kConst2s:
      case kConst4u:
      case kConst4s:
      case kConst8u:
      case kConst8s:
      case kConstu:
      case kConsts:
        return push(constant(op));
      case kDup:
      case kDrop:
      case kOver:
      case kPick:
      case kSwap:
      case kRot:
        return stack_op(op);
      case kDeref:
      case kAbs:
      case kNeg:
      case kNot:
      case kPlusUconst:
        return unary(op);
      case kAnd:
      case kDiv:
      case kMinus:
      case kMod:
      case kMul:
      case kOr:
      case kPlus:
      case kShl:
      case kShr:
      case kShra:
      case kXor:
      case kEq:
      case kGe:
      case kGt:
      case kLe:
      case kLt:
      case kNe:
        return binary(op);
      case kBra:
      case kSkip:
        return branch(op);
      case kBregx: {
        const uint64_t reg = cursor_.uleb128();
        return reg >= kDwarfRegCount ? EvalStatus::kUnsupported
                                     : breg(static_cast<int>(reg));
      }
      case kNop:
        return EvalStatus::kOk;
      default:
        return EvalStatus::kUnsupported;
    }
  }

  EvalStatus push(uint64_t v) {
    stack_.push_back(v);
    return EvalStatus::kOk;
  }

  bool pop(uint64_t* v) {
    if (stack_.empty()) return false;
    *v = stack_.back();
    stack_.pop_back();
    return true;
  }

  // breg<n> / bregx: register + signed offset (the offset is read even when
  // the register is unknown, as the operand belongs to the opcode).
  EvalStatus breg(int reg) {
    const int64_t off = cursor_.sleb128();
    if (reg >= kDwarfRegCount || !regs_.has(reg))
      return EvalStatus::kUnsupported;
    return push(regs_.value[static_cast<size_t>(reg)] +
                static_cast<uint64_t>(off));
  }

  uint64_t constant(uint8_t op) {
    auto sext = [](int64_t v) { return static_cast<uint64_t>(v); };
    switch (op) {
      case kConst1u:
        return cursor_.u8();
      case kConst1s:
        return sext(cursor_.fixed<int8_t>());
      case kConst2u:
        return cursor_.fixed<uint16_t>();
      case kConst2s:
        return sext(cursor_.fixed<int16_t>());
      case kConst4u:
        return cursor_.fixed<uint32_t>();
      case kConst4s:
        return sext(cursor_.fixed<int32_t>());
      case kConstu:
        return cursor_.uleb128();
      case kConsts:
        return sext(cursor_.sleb128());
      default:
        return cursor_.fixed<uint64_t>();  // addr, const8u/s
    }
  }

  EvalStatus stack_op(uint8_t op) {
    const size_t n = stack_.size();
    uint64_t ignored = 0;
    switch (op) {
      case kDup:
        return n < 1 ? EvalStatus::kUnsupported : push(stack_.back());
      case kDrop:
        return pop(&ignored) ? EvalStatus::kOk : EvalStatus::kUnsupported;
      case kOver:
        return n < 2 ? EvalStatus::kUnsupported : push(stack_[n - 2]);
      case kPick: {
        const uint8_t idx = cursor_.u8();
        return idx >= n ? EvalStatus::kUnsupported : push(stack_[n - 1 - idx]);
      }
      case kSwap:
        if (n < 2) return EvalStatus::kUnsupported;
        std::swap(stack_[n - 1], stack_[n - 2]);
        return EvalStatus::kOk;
      default:  // rot
        if (n < 3) return EvalStatus::kUnsupported;
        std::rotate(stack_.end() - 3, stack_.end() - 1, stack_.end());
        return EvalStatus::kOk;
    }
  }

  EvalStatus unary(uint8_t op) {
    uint64_t a = 0, b = 0;
    if (!pop(&a)) return EvalStatus::kUnsupported;
    switch (op) {
      case kDeref:
        if (!mem_.read_u64(a, &b)) return EvalStatus::kMemoryOutside;
        return push(b);
      case kAbs:
        return push(static_cast<int64_t>(a) < 0 ? -a : a);
      case kNeg:
        return push(-a);
      case kNot:
        return push(~a);
      default:
        return push(a + cursor_.uleb128());  // plus_uconst
    }
  }

  EvalStatus binary(uint8_t op) {
    uint64_t a = 0, b = 0;
    if (!pop(&b) || !pop(&a)) return EvalStatus::kUnsupported;
    const int64_t sa = static_cast<int64_t>(a), sb = static_cast<int64_t>(b);
    switch (op) {
      case kAnd:
        return push(a & b);
      case kDiv:
        if (b == 0) return EvalStatus::kUnsupported;
        return push(static_cast<uint64_t>(sa / sb));
      case kMinus:
        return push(a - b);
      case kMod:
        if (b == 0) return EvalStatus::kUnsupported;
        return push(a % b);
      case kMul:
        return push(a * b);
      case kOr:
        return push(a | b);
      case kPlus:
        return push(a + b);
      case kShl:
        return push(b >= 64 ? 0 : a << b);
      case kShr:
        return push(b >= 64 ? 0 : a >> b);
      case kShra:
        return push(
            static_cast<uint64_t>(b >= 64 ? (sa < 0 ? -1 : 0) : sa >> b));
      case kXor:
        return push(a ^ b);
      // Comparisons are signed (DWARF 5, section 2.5.1.5).
      case kEq:
        return push(sa == sb);
      case kGe:
        return push(sa >= sb);
      case kGt:
        return push(sa > sb);
      case kLe:
        return push(sa <= sb);
      case kLt:
        return push(sa < sb);
      default:
        return push(sa != sb);  // ne
    }
  }

  // bra (pops the condition) and skip: a signed 2-byte offset from the
  // next opcode, which must stay inside the expression.
  EvalStatus branch(uint8_t op) {
    const int16_t off = cursor_.fixed<int16_t>();
    uint64_t condition = 1;
    if (op == kBra && !pop(&condition)) return EvalStatus::kUnsupported;
    if (condition == 0) return EvalStatus::kOk;
    const int64_t to = static_cast<int64_t>(cursor_.pos()) + off;
    if (to < 0 || static_cast<size_t>(to) > expr_.size())
      return EvalStatus::kUnsupported;
    cursor_.seek(static_cast<size_t>(to));
    return EvalStatus::kOk;
  }

  std::span<const uint8_t> expr_;
  const RegState& regs_;
  const StackMemory& mem_;
  cfi_detail::Cursor cursor_;
  std::vector<uint64_t> stack_;
};

}  // namespace

EvalStatus evaluate_expression(std::span<const uint8_t> expr,
                               const RegState& regs, const StackMemory& mem,
                               std::optional<uint64_t> initial,
                               uint64_t* result) {
  return Machine(expr, regs, mem).run(initial, result);
}

}  // namespace runner::report
