// Fixture of the InlineResolver tests (built -O2 -g): two static
// always_inline functions nested two deep in the loop of a non-inlined one.
// Each inlined body holds a global label on a nop, so the tests know an
// address inside it: inline_inner_marker is in inline_inner (inlined into
// inline_outer, inlined into inline_host), inline_outer_marker in
// inline_outer only.
#include <stdint.h>
#include <stdlib.h>

static inline __attribute__((always_inline)) uint64_t inline_inner(
    uint64_t x, uint64_t seed) {
  __asm__ volatile(".globl inline_inner_marker\ninline_inner_marker: nop");
  for (int i = 0; i < 100; ++i) x = x * 6364136223846793005ull + seed;
  return x;
}

static inline __attribute__((always_inline)) uint64_t inline_outer(
    uint64_t x, uint64_t seed) {
  x = inline_inner(x, seed);
  __asm__ volatile(".globl inline_outer_marker\ninline_outer_marker: nop");
  return x ^ (x >> 7);
}

__attribute__((noinline)) uint64_t inline_host(uint64_t n) {
  uint64_t x = 1;
  for (uint64_t i = 0; i < n; ++i) x = inline_outer(x, i);
  return x;
}

int main(int argc, char** argv) {
  return (int)(inline_host(argc > 1 ? strtoull(argv[1], NULL, 10) : 10) & 1);
}
