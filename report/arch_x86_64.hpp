// x86_64 register knowledge of the report (report/ internal), in one place:
// DWARF register numbers (System V psABI), the register file an unwinder
// step works on, and how perf's sampled user registers map onto it.
#pragma once

#include <array>
#include <cstdint>
#include <span>

namespace runner::report {

// DWARF register numbers on x86_64 (System V psABI, figure 3.36).
inline constexpr int kDwarfRax = 0;
inline constexpr int kDwarfRbx = 3;
inline constexpr int kDwarfRbp = 6;
inline constexpr int kDwarfRsp = 7;
inline constexpr int kDwarfRa = 16;  // return address column = RIP
inline constexpr int kDwarfRegCount = 17;

// Register file of one frame while unwinding (DWARF numbering).
struct RegState {
  std::array<uint64_t, kDwarfRegCount> value{};
  uint32_t valid = 0;  // bit per register
  bool has(int reg) const { return (valid >> reg) & 1u; }
  void set(int reg, uint64_t v) {
    value[static_cast<size_t>(reg)] = v;
    valid |= 1u << reg;
  }
};

// perf's x86_64 user-register order (enum perf_event_x86_regs) of DWARF
// registers 0..16: rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8..r15, rip.
inline constexpr std::array<int, kDwarfRegCount> kPerfRegOfDwarf = {
    0, 3, 2, 1, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23, 8};

// The registers of a sample (`values`: one per set bit of `mask`, in bit
// order, as PERF_SAMPLE_REGS_USER delivers them) by DWARF number; those the
// mask leaves out are not valid.
RegState registers_from_sample(uint64_t mask, std::span<const uint64_t> values);

}  // namespace runner::report
