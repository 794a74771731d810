#include "format/trampoline_cfi.hpp"

#include <algorithm>
#include <array>

namespace runner::format {
namespace {

constexpr std::array<uint8_t, 11> kX86_64Trampoline = {
    0x48, 0x83, 0xec, 0x08,  // sub  $8, %rsp
    0xff, 0xd1,              // call *%rcx
    0x48, 0x83, 0xc4, 0x08,  // add  $8, %rsp
    0xc3};                   // ret

// DWARF call frame instructions and pointer encodings used below.
constexpr uint8_t kCfaDefCfa = 0x0c, kCfaDefCfaOffset = 0x0e;
constexpr uint8_t kCfaAdvanceLoc = 0x40, kCfaOffset = 0x80, kCfaNop = 0x00;
constexpr uint8_t kPcrelSdata4 = 0x1b;
constexpr uint8_t kRsp = 7, kRa = 16;

void put_u32(std::vector<uint8_t>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

// Appends one CIE or FDE: its length, then `body` padded with DW_CFA_nop to
// a multiple of 8 bytes in all.
void put_entry(std::vector<uint8_t>& out, std::vector<uint8_t> body) {
  while ((body.size() + 4) % 8 != 0) body.push_back(kCfaNop);
  put_u32(out, static_cast<uint32_t>(body.size()));
  out.insert(out.end(), body.begin(), body.end());
}

std::vector<uint8_t> cie() {
  return {0, 0, 0, 0,  // CIE id
          1,           // version
          'z', 'R', 0,
          1,     // code alignment factor
          0x78,  // data alignment factor -8 (sleb128)
          kRa,   // return address column
          1,     // augmentation data length
          kPcrelSdata4,
          // At entry: CFA = rsp + 8, return address at CFA - 8.
          kCfaDefCfa, kRsp, 8, static_cast<uint8_t>(kCfaOffset | kRa), 1};
}

// The FDE at `fde_offset` in an .eh_frame placed at SVMA `eh_frame_svma`,
// for the code at SVMA [0, size).
std::vector<uint8_t> fde(uint32_t fde_offset, uint64_t eh_frame_svma,
                         uint32_t size) {
  std::vector<uint8_t> body;
  put_u32(body, fde_offset + 4);  // back to the CIE at offset 0
  // pc_begin, pc-relative: 0 minus the SVMA of this field.
  const uint64_t field = eh_frame_svma + fde_offset + 8;
  put_u32(body, static_cast<uint32_t>(0 - field));
  put_u32(body, size);  // pc_range
  body.push_back(0);    // augmentation data length
  for (uint8_t b : {static_cast<uint8_t>(kCfaAdvanceLoc | 4),  // after sub
                    kCfaDefCfaOffset, uint8_t{16},
                    static_cast<uint8_t>(kCfaAdvanceLoc | 6),  // after add
                    kCfaDefCfaOffset, uint8_t{8}})
    body.push_back(b);
  return body;
}

}  // namespace

std::optional<UnwindData> cpython_trampoline_unwind_data(
    std::span<const uint8_t> code) {
  if (!std::equal(code.begin(), code.end(), kX86_64Trampoline.begin(),
                  kX86_64Trampoline.end()))
    return std::nullopt;
  const auto size = static_cast<uint32_t>(code.size());
  const uint64_t svma = (uint64_t{size} + 7) & ~uint64_t{7};
  UnwindData out;
  out.path = "cpython_perf_trampoline";
  out.base_svma = 0;
  put_entry(out.eh_frame, cie());
  const auto fde_offset = static_cast<uint32_t>(out.eh_frame.size());
  put_entry(out.eh_frame, fde(fde_offset, svma, size));
  put_u32(out.eh_frame, 0);  // terminator
  out.eh_frame_svma = Range{svma, svma + out.eh_frame.size()};
  return out;
}

}  // namespace runner::format
