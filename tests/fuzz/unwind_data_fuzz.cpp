// <key>.unwind_data: the bincode decoder on any bytes; what it accepts must
// encode back to a value that decodes the same, then the report's .eh_frame
// interpreter runs on it: every FDE's rows at its start, middle and end,
// and each row's DWARF expressions on a small fake stack.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "report/cfi.hpp"
#include "report/dwarf_expr.hpp"
#include "symbols/symbols.hpp"

namespace {

using runner::report::CfaRule;
using runner::report::EhFrame;
using runner::report::RegRule;

void evaluate_row(EhFrame& eh, uint64_t pc) {
  auto row = eh.find_row(pc);
  if (!row) return;
  runner::report::RegState regs;
  for (int r = 0; r < runner::report::kDwarfRegCount; ++r)
    regs.set(r, 0x7ffc0000u + 8u * static_cast<unsigned>(r));
  static const uint8_t kStack[256] = {};
  const runner::report::StackMemory mem{0x7ffc0000u, kStack};
  const auto bytes = eh.bytes();
  auto eval = [&](uint32_t offset, uint32_t len, bool push) {
    if (offset > bytes.size() || len > bytes.size() - offset) std::abort();
    uint64_t out = 0;
    (void)runner::report::evaluate_expression(
        bytes.subspan(offset, len), regs, mem,
        push ? std::optional<uint64_t>(0x7ffc0040u) : std::nullopt, &out);
  };
  if (row->cfa.kind == CfaRule::Kind::kExpression)
    eval(row->cfa.expr_offset, row->cfa.expr_size, false);
  for (const RegRule& rule : row->regs) {
    if (rule.kind == RegRule::Kind::kExpression ||
        rule.kind == RegRule::Kind::kValExpression)
      eval(rule.expr_offset, rule.expr_size, true);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto decoded = runner::format::decode_unwind_data(std::span(data, size));
  if (!decoded) return 0;
  auto again = runner::format::decode_unwind_data(
      runner::format::encode_unwind_data(*decoded));
  if (!again || again->path != decoded->path ||
      again->base_svma != decoded->base_svma ||
      again->eh_frame != decoded->eh_frame ||
      again->eh_frame_svma != decoded->eh_frame_svma ||
      again->eh_frame_hdr != decoded->eh_frame_hdr ||
      again->eh_frame_hdr_svma != decoded->eh_frame_hdr_svma)
    std::abort();
  const uint64_t hdr_svma =
      decoded->eh_frame_hdr_svma ? decoded->eh_frame_hdr_svma->start : 0;
  auto eh = EhFrame::create(std::move(decoded->eh_frame),
                            decoded->eh_frame_svma.start,
                            std::move(decoded->eh_frame_hdr), hdr_svma);
  if (!eh) return 0;
  size_t visited = 0;
  for (const auto& fde : eh->all_fdes()) {
    if (++visited > 64) break;  // bounded work per input
    (void)eh->find_fde(fde.pc_begin);
    evaluate_row(*eh, fde.pc_begin);
    evaluate_row(*eh, fde.pc_begin + (fde.pc_end - fde.pc_begin) / 2);
    if (fde.pc_end != 0) evaluate_row(*eh, fde.pc_end - 1);
  }
  return 0;
}
