// x86_64 .eh_frame call-frame-information interpreter (report/ internal):
// the CFI table walk. Registers are numbered as in report/arch_x86_64.hpp;
// the DWARF expressions rows refer to run in report/dwarf_expr.hpp.
//
// An EhFrame owns the raw .eh_frame (and optional .eh_frame_hdr) bytes of
// one module as copied into a <key>.unwind_data artifact, plus the section
// addresses (SVMA) the pointer encodings are relative to. It finds the FDE of
// an address through the hdr's binary-search table when present (else an
// index of all FDEs built once) and runs the CIE + FDE row program up to that
// address. Rows refer to DWARF expressions by offset into the owned bytes, so
// a row is only meaningful together with its EhFrame.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/base.hpp"
#include "report/arch_x86_64.hpp"

namespace runner::report {

struct RegRule {
  enum class Kind : uint8_t {
    kSameValue,  // also the rule of columns no instruction mentions
    kUndefined,
    kOffset,        // saved at CFA + offset
    kValOffset,     // value = CFA + offset
    kRegister,      // value = register `reg`
    kExpression,    // saved at address computed by expr (CFA pushed first)
    kValExpression  // value = expr result (CFA pushed first)
  };
  Kind kind = Kind::kSameValue;
  uint16_t reg = 0;
  int64_t offset = 0;
  uint32_t expr_offset = 0, expr_size = 0;  // into EhFrame::bytes()
  bool operator==(const RegRule&) const = default;
};

struct CfaRule {
  enum class Kind : uint8_t { kRegOffset, kExpression, kUndefined };
  Kind kind = Kind::kUndefined;
  uint16_t reg = 0;
  int64_t offset = 0;
  uint32_t expr_offset = 0, expr_size = 0;
  bool operator==(const CfaRule&) const = default;
};

struct UnwindRow {
  uint64_t start = 0, end = 0;  // SVMA range of the row
  CfaRule cfa;
  std::array<RegRule, kDwarfRegCount> regs{};
  bool signal_frame = false;  // CIE augmentation 'S'
};

struct FdeInfo {
  uint64_t pc_begin = 0, pc_end = 0;  // SVMA
  uint64_t offset = 0;                // of the FDE inside .eh_frame
};

struct CfiStats {
  uint64_t fdes = 0, cies = 0;
  uint64_t bad_entries = 0;  // skipped while indexing (malformed CIE/FDE)
};

class EhFrame {
 public:
  // `eh_frame_hdr` may be absent or unusable (unsupported table encoding):
  // then every FDE is indexed once, here. Lookups (find_fde, find_row) do
  // not modify the EhFrame: threads may share one.
  static base::Result<EhFrame> create(
      std::vector<uint8_t> eh_frame, uint64_t eh_frame_svma,
      std::optional<std::vector<uint8_t>> eh_frame_hdr, uint64_t hdr_svma);

  EhFrame(EhFrame&&) noexcept = default;
  EhFrame& operator=(EhFrame&&) noexcept = default;

  // The FDE covering `svma`, or nullopt.
  std::optional<FdeInfo> find_fde(uint64_t svma);
  // The row in effect at `svma` (Error: no FDE, or malformed CFI).
  base::Result<UnwindRow> find_row(uint64_t svma);
  // Every FDE, in section order (walks the whole section; for tests).
  std::vector<FdeInfo> all_fdes() const;
  bool uses_hdr_table() const { return hdr_table_ != nullptr; }
  const CfiStats& stats() const { return stats_; }
  std::span<const uint8_t> bytes() const { return eh_frame_; }

 private:
  EhFrame() = default;
  void build_index();

  std::vector<uint8_t> eh_frame_;
  uint64_t eh_frame_svma_ = 0;
  std::vector<uint8_t> hdr_;
  uint64_t hdr_svma_ = 0;
  const uint8_t* hdr_table_ = nullptr;  // (initial_loc, fde) sdata4 pairs
  uint64_t hdr_count_ = 0;
  std::vector<FdeInfo> index_;  // sorted by pc_begin (no-hdr fallback)
  mutable CfiStats stats_;
};

}  // namespace runner::report
