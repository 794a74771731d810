#include "report/cfi.hpp"

#include <algorithm>
#include <cstring>
#include <unordered_map>
#include <utility>

namespace runner::report {
namespace {

// Pointer encodings (LSB "DWARF Extensions", DW_EH_PE_*).
constexpr uint8_t kPeOmit = 0xff;
constexpr uint8_t kPeAbsptr = 0x00, kPeUleb128 = 0x01, kPeUdata2 = 0x02,
                  kPeUdata4 = 0x03, kPeUdata8 = 0x04, kPeSleb128 = 0x09,
                  kPeSdata2 = 0x0a, kPeSdata4 = 0x0b, kPeSdata8 = 0x0c;
constexpr uint8_t kPePcrel = 0x10, kPeDatarel = 0x30;
constexpr uint8_t kPeIndirect = 0x80;

// Cursor over a byte range with section-relative addressing: `svma` is the
// address of byte 0, for pcrel pointers. Reads past the end fail the cursor.
class Cursor {
 public:
  Cursor(std::span<const uint8_t> bytes, uint64_t svma, size_t pos = 0,
         size_t end = SIZE_MAX)
      : bytes_(bytes),
        svma_(svma),
        pos_(pos),
        end_(std::min(end, bytes.size())) {
    if (pos_ > end_) ok_ = false;
  }

  bool ok() const { return ok_; }
  size_t pos() const { return pos_; }
  size_t end() const { return end_; }
  bool at_end() const { return pos_ >= end_; }
  void seek(size_t pos) {
    if (pos > end_)
      ok_ = false;
    else
      pos_ = pos;
  }

  template <typename T>
  T fixed() {
    T v{};
    if (!ok_ || end_ - pos_ < sizeof(T)) {
      ok_ = false;
      return v;
    }
    std::memcpy(&v, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  uint8_t u8() { return fixed<uint8_t>(); }
  uint64_t uleb() {
    uint64_t result = 0;
    unsigned shift = 0;
    while (true) {
      uint8_t b = u8();
      if (!ok_) return 0;
      if (shift < 64) result |= static_cast<uint64_t>(b & 0x7f) << shift;
      shift += 7;
      if ((b & 0x80) == 0) break;
    }
    return result;
  }
  int64_t sleb() {
    uint64_t result = 0;
    unsigned shift = 0;
    uint8_t b = 0;
    do {
      b = u8();
      if (!ok_) return 0;
      if (shift < 64) result |= static_cast<uint64_t>(b & 0x7f) << shift;
      shift += 7;
    } while (b & 0x80);
    if (shift < 64 && (b & 0x40)) result |= ~uint64_t{0} << shift;
    return static_cast<int64_t>(result);
  }
  // An encoded pointer; `datarel_base` is what DW_EH_PE_datarel is relative
  // to (the .eh_frame_hdr start for the hdr; unused in .eh_frame on x86_64).
  bool pointer(uint8_t enc, uint64_t datarel_base, uint64_t* out) {
    if (enc == kPeOmit) return false;
    const uint64_t field_svma = svma_ + pos_;
    uint64_t v = 0;
    switch (enc & 0x0f) {
      case kPeAbsptr:
        v = fixed<uint64_t>();
        break;
      case kPeUleb128:
        v = uleb();
        break;
      case kPeUdata2:
        v = fixed<uint16_t>();
        break;
      case kPeUdata4:
        v = fixed<uint32_t>();
        break;
      case kPeUdata8:
        v = fixed<uint64_t>();
        break;
      case kPeSleb128:
        v = static_cast<uint64_t>(sleb());
        break;
      case kPeSdata2:
        v = static_cast<uint64_t>(int64_t{fixed<int16_t>()});
        break;
      case kPeSdata4:
        v = static_cast<uint64_t>(int64_t{fixed<int32_t>()});
        break;
      case kPeSdata8:
        v = fixed<uint64_t>();
        break;
      default:
        ok_ = false;
        return false;
    }
    switch (enc & 0x70) {
      case 0:
        break;
      case kPePcrel:
        v += field_svma;
        break;
      case kPeDatarel:
        v += datarel_base;
        break;
      default:
        ok_ = false;
        return false;  // textrel/funcrel/aligned: unused
    }
    // Indirect pointers would need the module's memory; only personality
    // routines use them and those are skipped through the 'z' length.
    if (enc & kPeIndirect) return false;
    *out = v;
    return ok_;
  }

 private:
  std::span<const uint8_t> bytes_;
  uint64_t svma_;
  size_t pos_;
  size_t end_;
  bool ok_ = true;
};

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
  cie.code_align = c.uleb();
  cie.data_align = c.sleb();
  cie.ra_register = version == 1 ? c.u8() : c.uleb();
  if (!augmentation.empty() && augmentation[0] == 'z') {
    cie.has_augmentation_length = true;
    uint64_t aug_len = c.uleb();
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
    uint64_t aug_len = c.uleb();
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

  bool run(size_t begin, size_t end, uint64_t target, uint64_t* loc,
           UnwindRow* row, const UnwindRow* initial) {
    Cursor c(bytes_, svma_, begin, end);
    while (!c.at_end()) {
      uint8_t op = c.u8();
      if (!c.ok()) return false;
      uint8_t high = op & 0xc0, low = op & 0x3f;
      if (high == 0x40) {  // DW_CFA_advance_loc
        if (!advance(*loc + low * cie_.code_align, target, loc, row))
          return true;
        continue;
      }
      if (high == 0x80) {  // DW_CFA_offset
        set(row, low,
            RegRule{RegRule::Kind::kOffset, 0,
                    scaled(c.uleb(), cie_.data_align)});
        continue;
      }
      if (high == 0xc0) {  // DW_CFA_restore
        restore(row, initial, low);
        continue;
      }
      switch (op) {
        case 0x00:
          break;      // nop
        case 0x01: {  // set_loc
          uint64_t to = 0;
          if (!c.pointer(cie_.fde_encoding, 0, &to)) return false;
          if (!advance(to, target, loc, row)) return true;
          break;
        }
        case 0x02:
          if (!advance(*loc + c.u8() * cie_.code_align, target, loc, row))
            return c.ok();
          break;
        case 0x03:
          if (!advance(*loc + c.fixed<uint16_t>() * cie_.code_align, target,
                       loc, row))
            return c.ok();
          break;
        case 0x04:
          if (!advance(*loc + c.fixed<uint32_t>() * cie_.code_align, target,
                       loc, row))
            return c.ok();
          break;
        case 0x05: {  // offset_extended
          uint64_t reg = c.uleb();
          set(row, reg,
              RegRule{RegRule::Kind::kOffset, 0,
                      scaled(c.uleb(), cie_.data_align)});
          break;
        }
        case 0x06:
          restore(row, initial, c.uleb());
          break;
        case 0x07:
          set(row, c.uleb(), RegRule{RegRule::Kind::kUndefined});
          break;
        case 0x08:
          set(row, c.uleb(), RegRule{RegRule::Kind::kSameValue});
          break;
        case 0x09: {  // register
          uint64_t reg = c.uleb();
          uint64_t from = c.uleb();
          set(row, reg,
              RegRule{RegRule::Kind::kRegister, static_cast<uint16_t>(from),
                      0});
          break;
        }
        case 0x0a:  // remember_state
          if (stack_.size() > 64) return false;
          stack_.push_back(*row);
          break;
        case 0x0b: {  // restore_state: the location stays
          if (stack_.empty()) return false;
          uint64_t start = row->start, row_end = row->end;
          *row = stack_.back();
          stack_.pop_back();
          row->start = start;
          row->end = row_end;
          break;
        }
        case 0x0c:  // def_cfa
          row->cfa.kind = CfaRule::Kind::kRegOffset;
          row->cfa.reg = static_cast<uint16_t>(c.uleb());
          row->cfa.offset = static_cast<int64_t>(c.uleb());
          break;
        case 0x0d:
          row->cfa.reg = static_cast<uint16_t>(c.uleb());
          row->cfa.kind = CfaRule::Kind::kRegOffset;
          break;
        case 0x0e:
          row->cfa.offset = static_cast<int64_t>(c.uleb());
          break;
        case 0x0f: {  // def_cfa_expression
          uint64_t len = c.uleb();
          if (!c.ok() || len > c.end() - c.pos()) return false;
          row->cfa.kind = CfaRule::Kind::kExpression;
          row->cfa.expr_offset = static_cast<uint32_t>(c.pos());
          row->cfa.expr_size = static_cast<uint32_t>(len);
          c.seek(c.pos() + len);
          break;
        }
        case 0x10:    // expression
        case 0x16: {  // val_expression
          uint64_t reg = c.uleb();
          uint64_t len = c.uleb();
          if (!c.ok() || len > c.end() - c.pos()) return false;
          RegRule r;
          r.kind = op == 0x10 ? RegRule::Kind::kExpression
                              : RegRule::Kind::kValExpression;
          r.expr_offset = static_cast<uint32_t>(c.pos());
          r.expr_size = static_cast<uint32_t>(len);
          set(row, reg, r);
          c.seek(c.pos() + len);
          break;
        }
        case 0x11: {  // offset_extended_sf
          uint64_t reg = c.uleb();
          set(row, reg,
              RegRule{
                  RegRule::Kind::kOffset, 0,
                  scaled(static_cast<uint64_t>(c.sleb()), cie_.data_align)});
          break;
        }
        case 0x12:  // def_cfa_sf
          row->cfa.kind = CfaRule::Kind::kRegOffset;
          row->cfa.reg = static_cast<uint16_t>(c.uleb());
          row->cfa.offset =
              scaled(static_cast<uint64_t>(c.sleb()), cie_.data_align);
          break;
        case 0x13:
          row->cfa.offset =
              scaled(static_cast<uint64_t>(c.sleb()), cie_.data_align);
          break;
        case 0x14: {  // val_offset
          uint64_t reg = c.uleb();
          set(row, reg,
              RegRule{RegRule::Kind::kValOffset, 0,
                      scaled(c.uleb(), cie_.data_align)});
          break;
        }
        case 0x15: {  // val_offset_sf
          uint64_t reg = c.uleb();
          set(row, reg,
              RegRule{
                  RegRule::Kind::kValOffset, 0,
                  scaled(static_cast<uint64_t>(c.sleb()), cie_.data_align)});
          break;
        }
        case 0x2e:
          c.uleb();
          break;      // GNU_args_size: only for unwinding EH
        case 0x2f: {  // GNU_negative_offset_extended
          uint64_t reg = c.uleb();
          set(row, reg,
              RegRule{RegRule::Kind::kOffset, 0,
                      scaled(0 - c.uleb(), cie_.data_align)});
          break;
        }
        default:
          return false;
      }
      if (!c.ok()) return false;
    }
    return c.ok();
  }

 private:
  // Moves to `to`; false when that passes the target (the row is complete).
  static bool advance(uint64_t to, uint64_t target, uint64_t* loc,
                      UnwindRow* row) {
    if (to > target) {
      row->end = std::min(row->end, to);
      return false;
    }
    *loc = to;
    row->start = to;
    return true;
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
  return f;
}

void EhFrame::build_index() {
  indexed_ = true;
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
  if (!indexed_) build_index();
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

bool StackMemory::read_u64(uint64_t addr, uint64_t* out) const {
  if (addr < base || addr - base > bytes.size() ||
      bytes.size() - (addr - base) < 8)
    return false;
  std::memcpy(out, bytes.data() + (addr - base), 8);
  return true;
}

EvalStatus evaluate_expression(std::span<const uint8_t> expr,
                               const RegState& regs, const StackMemory& mem,
                               std::optional<uint64_t> initial,
                               uint64_t* result) {
  std::vector<uint64_t> stack;
  stack.reserve(8);
  if (initial) stack.push_back(*initial);
  Cursor c(expr, 0);
  auto pop = [&](uint64_t* v) {
    if (stack.empty()) return false;
    *v = stack.back();
    stack.pop_back();
    return true;
  };
  int steps = 0;
  while (!c.at_end()) {
    if (++steps > 1000) return EvalStatus::kUnsupported;  // looping branches
    uint8_t op = c.u8();
    uint64_t a = 0, b = 0;
    if (op >= 0x30 && op <= 0x4f) {  // lit0..lit31
      stack.push_back(op - 0x30u);
    } else if (op >= 0x70 && op <= 0x8f) {  // breg0..breg31
      int reg = op - 0x70;
      int64_t off = c.sleb();
      if (reg >= kDwarfRegCount || !regs.has(reg))
        return EvalStatus::kUnsupported;
      stack.push_back(regs.value[static_cast<size_t>(reg)] +
                      static_cast<uint64_t>(off));
    } else {
      switch (op) {
        case 0x03:
          stack.push_back(c.fixed<uint64_t>());
          break;    // addr
        case 0x06:  // deref
          if (!pop(&a)) return EvalStatus::kUnsupported;
          if (!mem.read_u64(a, &b)) return EvalStatus::kMemoryOutside;
          stack.push_back(b);
          break;
        case 0x08:
          stack.push_back(c.u8());
          break;
        case 0x09:
          stack.push_back(static_cast<uint64_t>(int64_t{c.fixed<int8_t>()}));
          break;
        case 0x0a:
          stack.push_back(c.fixed<uint16_t>());
          break;
        case 0x0b:
          stack.push_back(static_cast<uint64_t>(int64_t{c.fixed<int16_t>()}));
          break;
        case 0x0c:
          stack.push_back(c.fixed<uint32_t>());
          break;
        case 0x0d:
          stack.push_back(static_cast<uint64_t>(int64_t{c.fixed<int32_t>()}));
          break;
        case 0x0e:
        case 0x0f:
          stack.push_back(c.fixed<uint64_t>());
          break;
        case 0x10:
          stack.push_back(c.uleb());
          break;
        case 0x11:
          stack.push_back(static_cast<uint64_t>(c.sleb()));
          break;
        case 0x12:
          if (stack.empty()) return EvalStatus::kUnsupported;
          stack.push_back(stack.back());
          break;
        case 0x13:
          if (!pop(&a)) return EvalStatus::kUnsupported;
          break;
        case 0x14:
          if (stack.size() < 2) return EvalStatus::kUnsupported;
          stack.push_back(stack[stack.size() - 2]);
          break;
        case 0x15: {
          uint8_t idx = c.u8();
          if (idx >= stack.size()) return EvalStatus::kUnsupported;
          stack.push_back(stack[stack.size() - 1 - idx]);
          break;
        }
        case 0x16:
          if (stack.size() < 2) return EvalStatus::kUnsupported;
          std::swap(stack[stack.size() - 1], stack[stack.size() - 2]);
          break;
        case 0x17:
          if (stack.size() < 3) return EvalStatus::kUnsupported;
          std::rotate(stack.end() - 3, stack.end() - 1, stack.end());
          break;
        case 0x19:
          if (!pop(&a)) return EvalStatus::kUnsupported;
          stack.push_back(static_cast<int64_t>(a) < 0 ? -a : a);
          break;
        case 0x1f:
          if (!pop(&a)) return EvalStatus::kUnsupported;
          stack.push_back(-a);
          break;
        case 0x20:
          if (!pop(&a)) return EvalStatus::kUnsupported;
          stack.push_back(~a);
          break;
        case 0x23:
          if (!pop(&a)) return EvalStatus::kUnsupported;
          stack.push_back(a + c.uleb());
          break;
        case 0x1a:
        case 0x1b:
        case 0x1c:
        case 0x1d:
        case 0x1e:
        case 0x21:
        case 0x22:
        case 0x24:
        case 0x25:
        case 0x26:
        case 0x27:
        case 0x29:
        case 0x2a:
        case 0x2b:
        case 0x2c:
        case 0x2d:
        case 0x2e: {
          if (!pop(&b) || !pop(&a)) return EvalStatus::kUnsupported;
          int64_t sa = static_cast<int64_t>(a), sb = static_cast<int64_t>(b);
          uint64_t r = 0;
          switch (op) {
            case 0x1a:
              r = a & b;
              break;
            case 0x1b:
              if (b == 0) return EvalStatus::kUnsupported;
              r = static_cast<uint64_t>(sa / sb);
              break;
            case 0x1c:
              r = a - b;
              break;
            case 0x1d:
              if (b == 0) return EvalStatus::kUnsupported;
              r = a % b;
              break;
            case 0x1e:
              r = a * b;
              break;
            case 0x21:
              r = a | b;
              break;
            case 0x22:
              r = a + b;
              break;
            case 0x24:
              r = b >= 64 ? 0 : a << b;
              break;
            case 0x25:
              r = b >= 64 ? 0 : a >> b;
              break;
            case 0x26:
              r = static_cast<uint64_t>(b >= 64 ? (sa < 0 ? -1 : 0) : sa >> b);
              break;
            case 0x27:
              r = a ^ b;
              break;
            // Comparisons are signed (DWARF 5 §2.5.1.5).
            case 0x29:
              r = sa == sb;
              break;
            case 0x2a:
              r = sa >= sb;
              break;
            case 0x2b:
              r = sa > sb;
              break;
            case 0x2c:
              r = sa <= sb;
              break;
            case 0x2d:
              r = sa < sb;
              break;
            case 0x2e:
              r = sa != sb;
              break;
          }
          stack.push_back(r);
          break;
        }
        case 0x28: {  // bra
          int16_t off = c.fixed<int16_t>();
          if (!pop(&a)) return EvalStatus::kUnsupported;
          if (a != 0) {
            int64_t to = static_cast<int64_t>(c.pos()) + off;
            if (to < 0 || static_cast<size_t>(to) > expr.size())
              return EvalStatus::kUnsupported;
            c.seek(static_cast<size_t>(to));
          }
          break;
        }
        case 0x2f: {  // skip
          int16_t off = c.fixed<int16_t>();
          int64_t to = static_cast<int64_t>(c.pos()) + off;
          if (to < 0 || static_cast<size_t>(to) > expr.size())
            return EvalStatus::kUnsupported;
          c.seek(static_cast<size_t>(to));
          break;
        }
        case 0x92: {  // bregx
          uint64_t reg = c.uleb();
          int64_t off = c.sleb();
          if (reg >= kDwarfRegCount || !regs.has(static_cast<int>(reg)))
            return EvalStatus::kUnsupported;
          stack.push_back(regs.value[reg] + static_cast<uint64_t>(off));
          break;
        }
        case 0x96:
          break;  // nop
        default:
          return EvalStatus::kUnsupported;
      }
    }
    if (!c.ok() || stack.size() > 64) return EvalStatus::kUnsupported;
  }
  if (stack.empty()) return EvalStatus::kUnsupported;
  *result = stack.back();
  return EvalStatus::kOk;
}

}  // namespace runner::report
