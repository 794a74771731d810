#include "report/cfi.hpp"

#include <algorithm>
#include <cstring>
#include <unordered_map>
#include <utility>

#include "report/cfi_cursor.hpp"

namespace runner::report {
namespace {

using namespace cfi_detail;  // Cursor and the DW_EH_PE_* constants

// factor * data_align in wrapping (two's complement) arithmetic: a hostile
// CIE must not make it undefined behaviour, and offsets only ever feed
// address arithmetic modulo 2^64.
int64_t scaled(uint64_t factor, int64_t data_align) {
  return static_cast<int64_t>(factor * static_cast<uint64_t>(data_align));
}

struct Cie {
  uint8_t fde_encoding = kPeAbsptr;
  bool has_augmentation_length = false;
  bool signal_frame = false;
  uint64_t code_align = 1;
  int64_t data_align = 1;
  uint64_t ra_register = kDwarfRa;
  size_t program_begin = 0, program_end = 0;
};

// The header of a CIE or FDE at `offset`. `id_pos` is where the id/CIE
// pointer field starts, `body` where the content after it starts.
struct EntryHeader {
  size_t id_pos = 0, body = 0, end = 0;
  uint64_t id = 0;
  bool is_cie = false;
  bool terminator = false;
};

std::optional<EntryHeader> read_entry_header(std::span<const uint8_t> bytes,
                                             size_t offset) {
  Cursor c(bytes, 0, offset);
  uint64_t length = c.fixed<uint32_t>();
  if (!c.ok()) return std::nullopt;
  EntryHeader h;
  if (length == 0) {
    h.terminator = true;
    h.end = c.pos();
    return h;
  }
  bool is64 = false;
  if (length == 0xffffffffu) {
    length = c.fixed<uint64_t>();
    is64 = true;
  }
  h.id_pos = c.pos();
  if (!c.ok() || length > bytes.size() - h.id_pos) return std::nullopt;
  h.end = h.id_pos + static_cast<size_t>(length);
  h.id = is64 ? c.fixed<uint64_t>() : c.fixed<uint32_t>();
  if (!c.ok() || c.pos() > h.end) return std::nullopt;
  h.body = c.pos();
  h.is_cie = h.id == 0;
  return h;
}

base::Result<Cie> parse_cie(std::span<const uint8_t> bytes, uint64_t svma,
                            size_t offset) {
  auto header = read_entry_header(bytes, offset);
  if (!header || header->terminator || !header->is_cie)
    return base::Error("not a CIE at offset " + std::to_string(offset));
  Cursor c(bytes, svma, header->body, header->end);
  Cie cie;
  uint8_t version = c.u8();
  if (version != 1 && version != 3)
    return base::Error("unsupported CIE version " + std::to_string(version));
  std::string augmentation;
  while (true) {
    uint8_t ch = c.u8();
    if (!c.ok()) return base::Error("truncated CIE augmentation");
    if (ch == 0) break;
    augmentation.push_back(static_cast<char>(ch));
  }
  if (augmentation.find("eh") != std::string::npos)
    return base::Error("unsupported CIE augmentation 'eh'");
  cie.code_align = c.uleb128();
  cie.data_align = c.sleb128();
  cie.ra_register = version == 1 ? c.u8() : c.uleb128();
  if (!augmentation.empty() && augmentation[0] == 'z') {
    cie.has_augmentation_length = true;
    uint64_t aug_len = c.uleb128();
    size_t aug_end = c.pos() + aug_len;
    if (!c.ok() || aug_len > c.end() - c.pos())
      return base::Error("truncated CIE augmentation data");
    for (size_t i = 1; i < augmentation.size(); ++i) {
      switch (augmentation[i]) {
        case 'R':
          cie.fde_encoding = c.u8();
          break;
        case 'L':
          c.u8();
          break;  // LSDA encoding: FDE data skipped via 'z'
        case 'P': {
          uint8_t enc = c.u8();
          uint64_t ignored = 0;
          c.pointer(static_cast<uint8_t>(enc & ~kPeIndirect), 0, &ignored);
          break;
        }
        case 'S':
          cie.signal_frame = true;
          break;
        default:
          break;  // unknown letters: their data is covered by 'z'
      }
    }
    c.seek(aug_end);
  } else if (!augmentation.empty()) {
    return base::Error("unsupported CIE augmentation '" + augmentation + "'");
  }
  if (!c.ok()) return base::Error("truncated CIE");
  cie.program_begin = c.pos();
  cie.program_end = header->end;
  return cie;
}

struct Fde {
  FdeInfo info;
  size_t cie_offset = 0;
  size_t program_begin = 0, program_end = 0;
};

base::Result<Fde> parse_fde(std::span<const uint8_t> bytes, uint64_t svma,
                            size_t offset, const Cie* known_cie, Cie* cie_out) {
  auto header = read_entry_header(bytes, offset);
  if (!header || header->terminator || header->is_cie)
    return base::Error("not an FDE at offset " + std::to_string(offset));
  if (header->id > header->id_pos)
    return base::Error("FDE CIE pointer out of range");
  Fde fde;
  fde.info.offset = offset;
  fde.cie_offset = header->id_pos - static_cast<size_t>(header->id);
  Cie cie;
  if (known_cie != nullptr) {
    cie = *known_cie;
  } else {
    auto parsed = parse_cie(bytes, svma, fde.cie_offset);
    if (!parsed) return std::move(parsed.error());
    cie = *parsed;
  }
  Cursor c(bytes, svma, header->body, header->end);
  uint64_t begin = 0, range = 0;
  if (!c.pointer(cie.fde_encoding, 0, &begin) ||
      !c.pointer(cie.fde_encoding & 0x0f, 0, &range))
    return base::Error("bad FDE address encoding");
  if (cie.has_augmentation_length) {
    uint64_t aug_len = c.uleb128();
    if (!c.ok() || aug_len > c.end() - c.pos())
      return base::Error("truncated FDE augmentation data");
    c.seek(c.pos() + aug_len);
  }
  if (!c.ok()) return base::Error("truncated FDE");
  fde.info.pc_begin = begin;
  fde.info.pc_end = begin + range;
  fde.program_begin = c.pos();
  fde.program_end = header->end;
  if (cie_out != nullptr) *cie_out = cie;
  return fde;
}

// Runs a CFA program until the location passes `target`. Returns false on
// malformed input. `row->end` is narrowed to the next location change.
class RowProgram {
 public:
  RowProgram(std::span<const uint8_t> bytes, uint64_t svma, const Cie& cie)
      : bytes_(bytes), svma_(svma), cie_(cie) {}

  // Runs the CFA instructions in [begin, end) until the row of `target` is
  // complete; false on malformed instructions.
  bool run(size_t begin, size_t end, uint64_t target, uint64_t* loc,
           UnwindRow* row, const UnwindRow* initial) {
    Cursor c(bytes_, svma_, begin, end);
    Pass pass{c, target, loc, row, initial};
    while (!c.at_end()) {
      const uint8_t op = c.u8();
      if (!c.ok()) return false;
      const Step step =
          (op & 0xc0) != 0 ? primary(pass, op) : extended(pass, op);
      if (step == Step::kRowComplete) return c.ok();
      if (step == Step::kMalformed || !c.ok()) return false;
    }
    return c.ok();
  }

 private:
  enum class Step { kNext, kRowComplete, kMalformed };
  // What one run works on.
  struct Pass {
    Cursor& c;
    uint64_t target;
    uint64_t* loc;
    UnwindRow* row;
    const UnwindRow* initial;
  };

  // The three instructions with an operand in their low 6 bits.
  Step primary(Pass& p, uint8_t op) {
    const uint8_t low = op & 0x3f;
    switch (op & 0xc0) {
      case 0x40:  // advance_loc
        return advance(p, *p.loc + low * cie_.code_align);
      case 0x80:  // offset
        set(p.row, low,
            RegRule{RegRule::Kind::kOffset, 0,
                    scaled(p.c.uleb128(), cie_.data_align)});
        return Step::kNext;
      default:  // restore
        restore(p.row, p.initial, low);
        return Step::kNext;
    }
  }

  Step extended(Pass& p, uint8_t op) {
    switch (op) {
      case 0x00:  // nop
        return Step::kNext;
      case 0x01:
      case 0x02:
      case 0x03:
      case 0x04:
        return advance_op(p, op);
      case 0x0a:
      case 0x0b:
        return state_op(p, op);
      case 0x0c:
      case 0x0d:
      case 0x0e:
      case 0x0f:
      case 0x12:
      case 0x13:
        return cfa_op(p, op);
      case 0x05:
      case 0x06:
      case 0x07:
      case 0x08:
      case 0x09:
      case 0x10:
      case 0x11:
      case 0x14:
      case 0x15:
      case 0x16:
      case 0x2f:
        return register_op(p, op);
      case 0x2e:  // GNU_args_size: only for unwinding EH
        p.c.uleb128();
        return Step::kNext;
      default:
        return Step::kMalformed;
    }
  }

  // set_loc, advance_loc1/2/4.
  Step advance_op(Pass& p, uint8_t op) {
    uint64_t to = 0;
    switch (op) {
      case 0x01:
        if (!p.c.pointer(cie_.fde_encoding, 0, &to)) return Step::kMalformed;
        return advance(p, to);
      case 0x02:
        return advance(p, *p.loc + p.c.u8() * cie_.code_align);
      case 0x03:
        return advance(p, *p.loc + p.c.fixed<uint16_t>() * cie_.code_align);
      default:
        return advance(p, *p.loc + p.c.fixed<uint32_t>() * cie_.code_align);
    }
  }

  // remember_state, restore_state (the location stays).
  Step state_op(Pass& p, uint8_t op) {
    if (op == 0x0a) {
      if (stack_.size() > 64) return Step::kMalformed;
      stack_.push_back(*p.row);
      return Step::kNext;
    }
    if (stack_.empty()) return Step::kMalformed;
    const uint64_t start = p.row->start, row_end = p.row->end;
    *p.row = stack_.back();
    stack_.pop_back();
    p.row->start = start;
    p.row->end = row_end;
    return Step::kNext;
  }

  // def_cfa, def_cfa_register, def_cfa_offset, def_cfa_expression,
  // def_cfa_sf, def_cfa_offset_sf.
  Step cfa_op(Pass& p, uint8_t op) {
    CfaRule& cfa = p.row->cfa;
    switch (op) {
      case 0x0c:
        cfa.kind = CfaRule::Kind::kRegOffset;
        cfa.reg = static_cast<uint16_t>(p.c.uleb128());
        cfa.offset = static_cast<int64_t>(p.c.uleb128());
        return Step::kNext;
      case 0x0d:
        cfa.reg = static_cast<uint16_t>(p.c.uleb128());
        cfa.kind = CfaRule::Kind::kRegOffset;
        return Step::kNext;
      case 0x0e:
        cfa.offset = static_cast<int64_t>(p.c.uleb128());
        return Step::kNext;
      case 0x0f:
        if (!expression(p.c, &cfa.expr_offset, &cfa.expr_size))
          return Step::kMalformed;
        cfa.kind = CfaRule::Kind::kExpression;
        return Step::kNext;
      case 0x12:
        cfa.kind = CfaRule::Kind::kRegOffset;
        cfa.reg = static_cast<uint16_t>(p.c.uleb128());
        cfa.offset = signed_factored(p.c);
        return Step::kNext;
      default:  // 0x13
        cfa.offset = signed_factored(p.c);
        return Step::kNext;
    }
  }

  // The rules of one register: offset_extended(_sf), restore_extended,
  // undefined, same_value, register, (val_)expression, val_offset(_sf),
  // GNU_negative_offset_extended.
  Step register_op(Pass& p, uint8_t op) {
    const uint64_t reg = p.c.uleb128();
    RegRule rule;
    switch (op) {
      case 0x05:
        rule = {RegRule::Kind::kOffset, 0,
                scaled(p.c.uleb128(), cie_.data_align)};
        break;
      case 0x06:
        restore(p.row, p.initial, reg);
        return Step::kNext;
      case 0x07:
        rule = RegRule{RegRule::Kind::kUndefined};
        break;
      case 0x08:
        rule = RegRule{RegRule::Kind::kSameValue};
        break;
      case 0x09:
        rule = {RegRule::Kind::kRegister, static_cast<uint16_t>(p.c.uleb128()),
                0};
        break;
      case 0x10:
      case 0x16:
        rule.kind = op == 0x10 ? RegRule::Kind::kExpression
                               : RegRule::Kind::kValExpression;
        if (!expression(p.c, &rule.expr_offset, &rule.expr_size))
          return Step::kMalformed;
        break;
      case 0x11:
        rule = {RegRule::Kind::kOffset, 0, signed_factored(p.c)};
        break;
      case 0x14:
        rule = {RegRule::Kind::kValOffset, 0,
                scaled(p.c.uleb128(), cie_.data_align)};
        break;
      case 0x15:
        rule = {RegRule::Kind::kValOffset, 0, signed_factored(p.c)};
        break;
      default:  // 0x2f
        rule = {RegRule::Kind::kOffset, 0,
                scaled(0 - p.c.uleb128(), cie_.data_align)};
        break;
    }
    set(p.row, reg, rule);
    return Step::kNext;
  }

  int64_t signed_factored(Cursor& c) const {
    return scaled(static_cast<uint64_t>(c.sleb128()), cie_.data_align);
  }

  // A ULEB length and that many bytes of DWARF expression, kept by offset.
  static bool expression(Cursor& c, uint32_t* offset, uint32_t* size) {
    const uint64_t len = c.uleb128();
    if (!c.ok() || len > c.end() - c.pos()) return false;
    *offset = static_cast<uint32_t>(c.pos());
    *size = static_cast<uint32_t>(len);
    c.seek(c.pos() + len);
    return true;
  }

  // Moves to `to`; kRowComplete when that passes the target.
  static Step advance(Pass& p, uint64_t to) {
    if (to > p.target) {
      p.row->end = std::min(p.row->end, to);
      return Step::kRowComplete;
    }
    *p.loc = to;
    p.row->start = to;
    return Step::kNext;
  }
  int column(uint64_t reg) const {
    if (reg == cie_.ra_register) return kDwarfRa;
    if (reg < kDwarfRegCount) return static_cast<int>(reg);
    return -1;  // vector/flag registers: not needed to find callers
  }
  void set(UnwindRow* row, uint64_t reg, RegRule rule) const {
    int col = column(reg);
    if (col >= 0) row->regs[static_cast<size_t>(col)] = rule;
  }
  void restore(UnwindRow* row, const UnwindRow* initial, uint64_t reg) const {
    int col = column(reg);
    if (col < 0) return;
    row->regs[static_cast<size_t>(col)] =
        initial != nullptr ? initial->regs[static_cast<size_t>(col)]
                           : RegRule{};
  }

  std::span<const uint8_t> bytes_;
  uint64_t svma_;
  const Cie& cie_;
  std::vector<UnwindRow> stack_;
};

}  // namespace

base::Result<EhFrame> EhFrame::create(
    std::vector<uint8_t> eh_frame, uint64_t eh_frame_svma,
    std::optional<std::vector<uint8_t>> eh_frame_hdr, uint64_t hdr_svma) {
  if (eh_frame.size() >= UINT32_MAX) return base::Error("eh_frame too large");
  EhFrame f;
  f.eh_frame_ = std::move(eh_frame);
  f.eh_frame_svma_ = eh_frame_svma;
  if (eh_frame_hdr && eh_frame_hdr->size() >= 4) {
    f.hdr_ = std::move(*eh_frame_hdr);
    f.hdr_svma_ = hdr_svma;
    Cursor c(f.hdr_, hdr_svma);
    uint8_t version = c.u8();
    uint8_t ptr_enc = c.u8();
    uint8_t count_enc = c.u8();
    uint8_t table_enc = c.u8();
    uint64_t eh_frame_ptr = 0, count = 0;
    bool usable = version == 1 && c.pointer(ptr_enc, hdr_svma, &eh_frame_ptr) &&
                  c.pointer(count_enc, hdr_svma, &count) &&
                  table_enc == (kPeDatarel | kPeSdata4);
    // The table is only trusted when it describes this very .eh_frame.
    if (usable && eh_frame_ptr == eh_frame_svma &&
        count <= (f.hdr_.size() - c.pos()) / 8 && count > 0) {
      f.hdr_table_ = f.hdr_.data() + c.pos();
      f.hdr_count_ = count;
    }
  }
  // Indexed now rather than on the first lookup: lookups then never write,
  // and several unwinding threads may share the EhFrame.
  if (f.hdr_table_ == nullptr) f.build_index();
  return f;
}

void EhFrame::build_index() {
  index_ = all_fdes();
  std::sort(index_.begin(), index_.end(),
            [](const FdeInfo& a, const FdeInfo& b) {
              return a.pc_begin < b.pc_begin;
            });
}

std::vector<FdeInfo> EhFrame::all_fdes() const {
  std::vector<FdeInfo> out;
  std::unordered_map<size_t, Cie> cies;
  size_t offset = 0;
  CfiStats* stats = &stats_;
  stats->fdes = stats->cies = 0;
  while (offset < eh_frame_.size()) {
    auto header = read_entry_header(eh_frame_, offset);
    if (!header) {
      ++stats->bad_entries;
      break;
    }
    if (header->terminator) break;
    if (header->is_cie) {
      ++stats->cies;
    } else if (header->id <= header->id_pos) {
      size_t cie_offset = header->id_pos - static_cast<size_t>(header->id);
      auto it = cies.find(cie_offset);
      if (it == cies.end()) {
        auto cie = parse_cie(eh_frame_, eh_frame_svma_, cie_offset);
        if (cie) it = cies.emplace(cie_offset, *cie).first;
      }
      if (it != cies.end()) {
        auto fde =
            parse_fde(eh_frame_, eh_frame_svma_, offset, &it->second, nullptr);
        if (fde) {
          // Zero-length FDEs (padding left by the linker) cover nothing.
          if (fde->info.pc_end > fde->info.pc_begin) out.push_back(fde->info);
          ++stats->fdes;
        } else {
          ++stats->bad_entries;
        }
      } else {
        ++stats->bad_entries;
      }
    } else {
      ++stats->bad_entries;
    }
    offset = header->end;
  }
  return out;
}

std::optional<FdeInfo> EhFrame::find_fde(uint64_t svma) {
  if (hdr_table_ != nullptr) {
    // Sorted (initial_location, fde_address) pairs, both relative to the
    // start of .eh_frame_hdr: binary-search the last start <= svma.
    uint64_t lo = 0, hi = hdr_count_;
    auto loc_at = [&](uint64_t i) {
      int32_t v;
      std::memcpy(&v, hdr_table_ + i * 8, 4);
      return hdr_svma_ + static_cast<uint64_t>(int64_t{v});
    };
    while (lo < hi) {
      uint64_t mid = lo + (hi - lo) / 2;
      if (loc_at(mid) <= svma)
        lo = mid + 1;
      else
        hi = mid;
    }
    if (lo == 0) return std::nullopt;
    int32_t fde_rel;
    std::memcpy(&fde_rel, hdr_table_ + (lo - 1) * 8 + 4, 4);
    uint64_t fde_svma = hdr_svma_ + static_cast<uint64_t>(int64_t{fde_rel});
    if (fde_svma < eh_frame_svma_ ||
        fde_svma - eh_frame_svma_ >= eh_frame_.size())
      return std::nullopt;
    auto fde = parse_fde(eh_frame_, eh_frame_svma_,
                         static_cast<size_t>(fde_svma - eh_frame_svma_),
                         nullptr, nullptr);
    if (!fde || svma < fde->info.pc_begin || svma >= fde->info.pc_end)
      return std::nullopt;
    return fde->info;
  }
  auto it = std::upper_bound(
      index_.begin(), index_.end(), svma,
      [](uint64_t a, const FdeInfo& f) { return a < f.pc_begin; });
  // Walk back over FDEs with the same start (overlaps are rare but legal).
  while (it != index_.begin()) {
    --it;
    if (svma < it->pc_end) return *it;
    if (it->pc_begin != svma) break;
  }
  return std::nullopt;
}

base::Result<UnwindRow> EhFrame::find_row(uint64_t svma) {
  auto info = find_fde(svma);
  if (!info) return base::Error("no FDE covers the address");
  Cie cie;
  auto fde = parse_fde(eh_frame_, eh_frame_svma_,
                       static_cast<size_t>(info->offset), nullptr, &cie);
  if (!fde) return std::move(fde.error());
  UnwindRow initial;
  initial.start = fde->info.pc_begin;
  initial.end = fde->info.pc_end;
  initial.signal_frame = cie.signal_frame;
  uint64_t loc = fde->info.pc_begin;
  RowProgram cie_program(eh_frame_, eh_frame_svma_, cie);
  // The CIE's initial instructions describe the state at the FDE start;
  // they never advance the location in practice (a target of ~0 keeps any
  // advance from ending the program early).
  if (!cie_program.run(cie.program_begin, cie.program_end, UINT64_MAX, &loc,
                       &initial, nullptr))
    return base::Error("malformed CIE instructions");
  loc = fde->info.pc_begin;
  initial.start = loc;
  initial.end = fde->info.pc_end;
  UnwindRow row = initial;
  RowProgram fde_program(eh_frame_, eh_frame_svma_, cie);
  if (!fde_program.run(fde->program_begin, fde->program_end, svma, &loc, &row,
                       &initial))
    return base::Error("malformed FDE instructions");
  return row;
}

}  // namespace runner::report
