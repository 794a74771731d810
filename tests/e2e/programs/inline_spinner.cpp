// A CPU-bound program whose hot code is inlined two deep (built -O2 -g):
// inline_spinner [MS] spins for MS ms (default 50) in spin_inlined(), into
// which step() and, inside it, mix() are inlined. They have external
// linkage, so their DWARF carries linkage names (GNU addr2line, which perf
// asks, reports the symbol table's name instead of DW_AT_name for the
// innermost frame when there is none).
#include <cstdint>
#include <cstdlib>

#include "tests/e2e/programs/spin.hpp"

namespace e2e_inline {

volatile uint64_t g_sink = 0;

__attribute__((always_inline)) inline uint64_t mix(uint64_t x, uint64_t seed) {
  for (int i = 0; i < 10000; ++i) x = x * 6364136223846793005ull + seed;
  return x;
}

__attribute__((always_inline)) inline uint64_t step(uint64_t x, uint64_t seed) {
  x = mix(x, seed);
  return x ^ (x >> 7);
}

void spin_inlined(int ms);

__attribute__((noinline)) void spin_inlined(int ms) {
  uint64_t end = e2e::now_ns() + static_cast<uint64_t>(ms) * 1000000ull;
  uint64_t x = 1;
  while (e2e::now_ns() < end) x = step(x, 3);
  g_sink = x;
}

}  // namespace e2e_inline

int main(int argc, char** argv) {
  e2e_inline::spin_inlined(argc > 1 ? std::atoi(argv[1]) : 50);
  return 0;
}
