#include "report/arch_x86_64.hpp"

namespace runner::report {

RegState registers_from_sample(uint64_t mask,
                               std::span<const uint64_t> values) {
  std::array<uint64_t, 64> by_perf{};
  uint64_t present = 0;
  size_t next = 0;
  for (int bit = 0; bit < 64 && next < values.size(); ++bit) {
    if ((mask >> bit) & 1u) {
      by_perf[static_cast<size_t>(bit)] = values[next++];
      present |= 1ull << bit;
    }
  }
  RegState regs;
  for (int r = 0; r < kDwarfRegCount; ++r) {
    const int perf_reg = kPerfRegOfDwarf[static_cast<size_t>(r)];
    if ((present >> perf_reg) & 1u)
      regs.set(r, by_perf[static_cast<size_t>(perf_reg)]);
  }
  return regs;
}

}  // namespace runner::report
