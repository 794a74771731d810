// Oracle for report/cfi.cpp: for every FDE of libc, libstdc++ (both found
// in this process's link map), the runner binary and an -O2 test program
// (paths from meson), the row our EhFrame evaluates equals the row libdw
// evaluates (dwarf_cfi_addrframe on the same file's .eh_frame) at the start
// and at the last byte of every row: same row range, CFA rule, and rules of
// the return address and the callee-saved registers rbx, rbp, r12-r15.
//
// Both sides are turned into libdw's form of a rule (dwarf_frame_cfa,
// dwarf_frame_register): "same" (same_value), "undef" (undefined) or a list
// of DWARF operations, where a register saved at CFA+N reads
// DW_OP_call_frame_cfa, DW_OP_plus_uconst N and a value rule ends with
// DW_OP_stack_value. Our expressions are decoded from their bytes.
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <span>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "report/cfi.hpp"
#include "symbols/symbols.hpp"
#include "tests/support/skip.hpp"

using namespace runner::report;

namespace {

constexpr int kComparedRegs[] = {kDwarfRa, kDwarfRbx, kDwarfRbp, 12,
                                 13,       14,        15};

// The loaded object whose file name contains `needle` (dl_iterate_phdr:
// the real paths of this process, never a fixed one).
std::string loaded_object(const char* needle) {
  struct Search {
    const char* needle;
    std::string found;
  } search{needle, ""};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* arg) {
        auto* s = static_cast<Search*>(arg);
        const char* name = info->dlpi_name;
        if (name != nullptr && name[0] == '/' &&
            std::strstr(name, s->needle) != nullptr) {
          s->found = name;
          return 1;
        }
        return 0;
      },
      &search);
  return search.found;
}

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "%#llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string op_text(uint64_t atom, uint64_t number, uint64_t number2) {
  return hex(atom) + "(" + hex(number) + "," + hex(number2) + ")";
}

std::string ops_text(const Dwarf_Op* ops, size_t nops) {
  std::string out;
  for (size_t i = 0; i < nops; ++i)
    out += op_text(ops[i].atom, ops[i].number, ops[i].number2) + ";";
  return out;
}

// Our expression bytes as libdw's Dwarf_Op list would print (atom and the
// operands as libdw stores them), for the operations CFI uses.
class ExprDecoder {
 public:
  explicit ExprDecoder(std::span<const uint8_t> bytes) : bytes_(bytes) {}

  std::string decode() {
    std::string out;
    while (pos_ < bytes_.size() && ok_) {
      uint8_t atom = bytes_[pos_++];
      uint64_t n1 = 0, n2 = 0;
      if ((atom >= DW_OP_lit0 && atom <= DW_OP_lit31) ||
          (atom >= DW_OP_reg0 && atom <= DW_OP_reg31)) {
      } else if (atom >= DW_OP_breg0 && atom <= DW_OP_breg31) {
        n1 = static_cast<uint64_t>(sleb());
      } else {
        switch (atom) {
          case DW_OP_addr:
          case DW_OP_const8u:
          case DW_OP_const8s:
            n1 = fixed(8, false);
            break;
          case DW_OP_const1u:
          case DW_OP_pick:
          case DW_OP_deref_size:
            n1 = fixed(1, false);
            break;
          case DW_OP_const1s:
            n1 = fixed(1, true);
            break;
          case DW_OP_const2u:
          case DW_OP_bra:
          case DW_OP_skip:
            n1 = fixed(2, false);
            break;
          case DW_OP_const2s:
            n1 = fixed(2, true);
            break;
          case DW_OP_const4u:
            n1 = fixed(4, false);
            break;
          case DW_OP_const4s:
            n1 = fixed(4, true);
            break;
          case DW_OP_constu:
          case DW_OP_plus_uconst:
          case DW_OP_regx:
            n1 = uleb();
            break;
          case DW_OP_consts:
            n1 = static_cast<uint64_t>(sleb());
            break;
          case DW_OP_bregx:
            n1 = uleb();
            n2 = static_cast<uint64_t>(sleb());
            break;
          default:
            if (atom < DW_OP_deref || atom > DW_OP_nop) ok_ = false;
            break;  // no operand
        }
      }
      out += op_text(atom, n1, n2) + ";";
    }
    return ok_ ? out : out + "<undecodable>";
  }

 private:
  uint64_t fixed(size_t size, bool is_signed) {
    if (bytes_.size() - pos_ < size) {
      ok_ = false;
      return 0;
    }
    uint64_t v = 0;
    for (size_t i = 0; i < size; ++i)
      v |= uint64_t{bytes_[pos_ + i]} << (8 * i);
    pos_ += size;
    if (is_signed && size < 8 && (v >> (8 * size - 1)) & 1)
      v |= ~uint64_t{0} << (8 * size);
    return v;
  }
  uint64_t uleb() {
    uint64_t v = 0;
    unsigned shift = 0;
    while (pos_ < bytes_.size()) {
      uint8_t b = bytes_[pos_++];
      if (shift < 64) v |= uint64_t{b & 0x7fu} << shift;
      shift += 7;
      if ((b & 0x80) == 0) return v;
    }
    ok_ = false;
    return 0;
  }
  int64_t sleb() {
    uint64_t v = 0;
    unsigned shift = 0;
    while (pos_ < bytes_.size()) {
      uint8_t b = bytes_[pos_++];
      if (shift < 64) v |= uint64_t{b & 0x7fu} << shift;
      shift += 7;
      if ((b & 0x80) == 0) {
        if (shift < 64 && (b & 0x40)) v |= ~uint64_t{0} << shift;
        return static_cast<int64_t>(v);
      }
    }
    ok_ = false;
    return 0;
  }

  std::span<const uint8_t> bytes_;
  size_t pos_ = 0;
  bool ok_ = true;
};

std::string our_expr(const EhFrame& eh, uint32_t offset, uint32_t size) {
  auto bytes = eh.bytes();
  if (static_cast<size_t>(offset) + size > bytes.size()) return "<out>";
  return ExprDecoder(bytes.subspan(offset, size)).decode();
}

std::string our_cfa(const EhFrame& eh, const CfaRule& cfa) {
  switch (cfa.kind) {
    case CfaRule::Kind::kRegOffset:
      return op_text(DW_OP_bregx, cfa.reg, static_cast<uint64_t>(cfa.offset)) +
             ";";
    case CfaRule::Kind::kExpression:
      return our_expr(eh, cfa.expr_offset, cfa.expr_size);
    case CfaRule::Kind::kUndefined:
      return "undef";
  }
  return "?";
}

std::string our_reg(const EhFrame& eh, const RegRule& rule) {
  const std::string cfa = op_text(DW_OP_call_frame_cfa, 0, 0) + ";";
  const std::string value = op_text(DW_OP_stack_value, 0, 0) + ";";
  auto at_offset = [&](int64_t offset) {
    return offset == 0 ? cfa
                       : cfa +
                             op_text(DW_OP_plus_uconst,
                                     static_cast<uint64_t>(offset), 0) +
                             ";";
  };
  switch (rule.kind) {
    case RegRule::Kind::kSameValue:
      return "same";
    case RegRule::Kind::kUndefined:
      return "undef";
    case RegRule::Kind::kOffset:
      return at_offset(rule.offset);
    case RegRule::Kind::kValOffset:
      return at_offset(rule.offset) + value;
    case RegRule::Kind::kRegister:
      return op_text(DW_OP_regx, rule.reg, 0) + ";";
    case RegRule::Kind::kExpression:
      return cfa + our_expr(eh, rule.expr_offset, rule.expr_size);
    case RegRule::Kind::kValExpression:
      return cfa + our_expr(eh, rule.expr_offset, rule.expr_size) + value;
  }
  return "?";
}

// libdw's CFA as a list of operations (a reg+offset rule is one bregx;
// normalise bregN to bregx so that both forms compare).
std::string libdw_cfa(Dwarf_Frame* frame) {
  Dwarf_Op* ops = nullptr;
  size_t nops = 0;
  if (dwarf_frame_cfa(frame, &ops, &nops) != 0)
    return std::string("<error ") + dwarf_errmsg(-1) + ">";
  if (nops == 0) return "undef";
  if (nops == 1 && ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31)
    return op_text(DW_OP_bregx, ops[0].atom - DW_OP_breg0, ops[0].number) + ";";
  return ops_text(ops, nops);
}

std::string libdw_reg(Dwarf_Frame* frame, int reg) {
  Dwarf_Op mem[3];
  Dwarf_Op* ops = nullptr;
  size_t nops = 0;
  if (dwarf_frame_register(frame, reg, mem, &ops, &nops) != 0)
    return std::string("<error ") + dwarf_errmsg(-1) + ">";
  if (nops == 0) return ops == nullptr ? "same" : "undef";
  return ops_text(ops, nops);
}

struct Totals {
  size_t fdes = 0, rows = 0, points = 0, disagreements = 0;
  // Known libdw differences, counted (see compare_at).
  size_t libdw_rbx_default = 0, libdw_restore_state_start = 0;
  std::vector<std::string> listing;  // the first disagreements
};

void note(Totals* t, const std::string& what) {
  ++t->disagreements;
  if (t->listing.size() < 20) t->listing.push_back(what);
}

// Compares the rows at `pc`; returns the next row start (0: stop the FDE).
// `row_starts`: the starts of the FDE's rows before this one.
//
// Two differences are libdw's, and are counted instead of failing:
// - Its x86_64 ABI defaults (backends/x86_64_cfi.c) mark DWARF register 0
//   (rax) as same_value where the comment says %rbx (DWARF 3); rbx, which
//   the psABI makes callee-saved, is then "undefined" in every row that
//   does not mention it, and rax "same value". Accepted only in that shape:
//   ours same_value for rbx, libdw undefined, in a module where libdw shows
//   that default pair (rax same_value, rbx undefined) in the first row of
//   some FDE: `rbx_default`.
// - DW_CFA_restore_state copies the remembered row's start address along
//   with its rules, so libdw's row starts at an earlier row's start; the
//   rules and the end are the same. Accepted when libdw's start is the start
//   of an earlier row of the same FDE.
uint64_t compare_at(EhFrame& eh, Dwarf_CFI* cfi, uint64_t pc, uint64_t fde_end,
                    const std::set<uint64_t>& row_starts, bool rbx_default,
                    Totals* t) {
  ++t->points;
  auto ours = eh.find_row(pc);
  Dwarf_Frame* frame = nullptr;
  const bool libdw_ok = dwarf_cfi_addrframe(cfi, pc, &frame) == 0;
  const std::string where = "pc " + hex(pc) + ": ";
  if (!ours || !libdw_ok) {
    if (ours.has_value() != libdw_ok)
      note(t, where + "ours " + (ours ? "has a row" : ours.error().what()) +
                  ", libdw " + (libdw_ok ? "has a row" : dwarf_errmsg(-1)));
    std::free(frame);
    return 0;
  }
  Dwarf_Addr start = 0, end = 0;
  bool signal = false;
  dwarf_frame_info(frame, &start, &end, &signal);
  std::string diff;
  if (end == ours->end && start < ours->start && row_starts.count(start)) {
    ++t->libdw_restore_state_start;
  } else if (start != ours->start || end != ours->end) {
    diff += " range ours [" + hex(ours->start) + "," + hex(ours->end) +
            ") libdw [" + hex(start) + "," + hex(end) + ")";
  }
  if (signal != ours->signal_frame) diff += " signal-frame flag";
  const std::string cfa_ours = our_cfa(eh, ours->cfa),
                    cfa_dw = libdw_cfa(frame);
  if (cfa_ours != cfa_dw) diff += " CFA ours " + cfa_ours + " libdw " + cfa_dw;
  for (int reg : kComparedRegs) {
    const std::string a = our_reg(eh, ours->regs[static_cast<size_t>(reg)]);
    const std::string b = libdw_reg(frame, reg);
    if (reg == kDwarfRbx && a == "same" && b == "undef" && rbx_default) {
      ++t->libdw_rbx_default;
      continue;
    }
    if (a != b)
      diff += " r" + std::to_string(reg) + " ours " + a + " libdw " + b;
  }
  std::free(frame);
  if (!diff.empty()) note(t, where + diff);
  uint64_t next = std::min<uint64_t>(ours->end, end);
  return next > pc && next < fde_end ? next : 0;
}

// Every FDE, every row: at its first and its last byte.
void compare_module(const std::string& path, Totals* t) {
  INFO("module ", path);
  auto data = runner::symbols::read_unwind_data(path, path);
  REQUIRE_MESSAGE(data, (data ? "" : data.error().what()));
  auto eh = EhFrame::create(
      data->eh_frame, data->eh_frame_svma.start, data->eh_frame_hdr,
      data->eh_frame_hdr_svma ? data->eh_frame_hdr_svma->start : 0);
  REQUIRE(eh);
  REQUIRE(eh->uses_hdr_table());
  auto plain = EhFrame::create(data->eh_frame, data->eh_frame_svma.start,
                               std::nullopt, 0);
  REQUIRE(plain);

  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  REQUIRE(elf != nullptr);
  Dwarf_CFI* cfi = dwarf_getcfi_elf(elf);
  REQUIRE(cfi != nullptr);

  // The FDE count of libdw's own walk of .eh_frame (dwarf_next_cfi).
  size_t libdw_fdes = 0;
  size_t shstrndx = 0;
  elf_getshdrstrndx(elf, &shstrndx);
  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf, scn)) != nullptr;) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr) continue;
    const char* name = elf_strptr(elf, shstrndx, shdr.sh_name);
    if (name == nullptr || std::strcmp(name, ".eh_frame") != 0) continue;
    Elf_Data* d = elf_getdata(scn, nullptr);
    REQUIRE(d != nullptr);
    Dwarf_Off off = 0, next = 0;
    Dwarf_CFI_Entry entry;
    const unsigned char* ident =
        reinterpret_cast<const unsigned char*>(elf_getident(elf, nullptr));
    while (dwarf_next_cfi(ident, d, true, off, &next, &entry) == 0) {
      if (!dwarf_cfi_cie_p(&entry)) ++libdw_fdes;
      off = next;
    }
  }

  const auto fdes = eh->all_fdes();
  CHECK(eh->stats().bad_entries == 0);
  CHECK_MESSAGE(eh->stats().fdes == libdw_fdes, "ours ", eh->stats().fdes,
                " FDEs, libdw's dwarf_next_cfi ", libdw_fdes);
  // libdw's ABI defaults show in the first row of an FDE that mentions
  // neither rax nor rbx: rax same_value, rbx undefined.
  bool rbx_default = false;
  for (const FdeInfo& fde : fdes) {
    Dwarf_Frame* first = nullptr;
    if (dwarf_cfi_addrframe(cfi, fde.pc_begin, &first) == 0 &&
        libdw_reg(first, kDwarfRax) == "same" &&
        libdw_reg(first, kDwarfRbx) == "undef")
      rbx_default = true;
    std::free(first);
    if (rbx_default) break;
  }
  for (const FdeInfo& fde : fdes) {
    ++t->fdes;
    std::set<uint64_t> row_starts;
    uint64_t pc = fde.pc_begin;
    while (pc != 0) {
      ++t->rows;
      uint64_t next =
          compare_at(*eh, cfi, pc, fde.pc_end, row_starts, rbx_default, t);
      // The row's last byte (the FDE's last byte for its last row).
      uint64_t last = (next != 0 ? next : fde.pc_end) - 1;
      if (last > pc)
        compare_at(*eh, cfi, last, fde.pc_end, row_starts, rbx_default, t);
      row_starts.insert(pc);
      pc = next;
    }
    // The first byte past the FDE: the next FDE's row on both sides, or no
    // row on either.
    compare_at(*eh, cfi, fde.pc_end, UINT64_MAX, row_starts, rbx_default, t);
    // The lookup without .eh_frame_hdr (the index of every FDE) finds the
    // FDE the hdr's table finds.
    for (uint64_t at : {fde.pc_begin, fde.pc_end - 1}) {
      auto with_hdr = eh->find_fde(at), without = plain->find_fde(at);
      if (!with_hdr || !without || with_hdr->offset != without->offset)
        note(t, "pc " + hex(at) + ": the FDE found through .eh_frame_hdr (" +
                    (with_hdr ? hex(with_hdr->offset) : "none") +
                    ") is not the one the index finds (" +
                    (without ? hex(without->offset) : "none") + ")");
    }
  }
  dwarf_cfi_end(cfi);
  elf_end(elf);
  ::close(fd);
}

void check_module(const std::string& path) {
  Totals t;
  compare_module(path, &t);
  std::string listing;
  for (const auto& l : t.listing) listing += l + "\n";
  MESSAGE(path, ": compared ", t.rows, " rows of ", t.fdes, " FDEs at ",
          t.points, " addresses; known libdw differences: rbx default ",
          t.libdw_rbx_default, ", restore_state row start ",
          t.libdw_restore_state_start);
  CHECK_MESSAGE(t.disagreements == 0, t.disagreements,
                " disagreements with libdw (first 20):\n", listing);
  CHECK(t.fdes > 0);
}

std::string env_path(const char* var) {
  const char* v = std::getenv(var);
  return v != nullptr ? v : "";
}

}  // namespace

TEST_SUITE("report") {
  TEST_CASE("cfi oracle: libc rows equal libdw's") {
    const std::string path = loaded_object("/libc.so");
    REQUIRE_MESSAGE(!path.empty(), "libc is not in this process's link map");
    check_module(path);
  }

  TEST_CASE("cfi oracle: libstdc++ rows equal libdw's") {
    const std::string path = loaded_object("/libstdc++.so");
    if (path.empty())
      RUNNER_SKIP_CASE("libstdc++ is linked statically into this test");
    check_module(path);
  }

  TEST_CASE("cfi oracle: runner binary rows equal libdw's") {
    const std::string path = env_path("RUNNER_BIN");
    REQUIRE_MESSAGE(!path.empty(), "RUNNER_BIN is not set (run through meson)");
    check_module(path);
  }

  TEST_CASE("cfi oracle: -O2 test program rows equal libdw's") {
    const std::string path = env_path("CFI_O2_PROGRAM");
    REQUIRE_MESSAGE(!path.empty(),
                    "CFI_O2_PROGRAM is not set (run through meson)");
    check_module(path);
  }
}
