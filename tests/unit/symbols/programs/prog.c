// Test program for tests/unit/symbols: known symbols and lines.
#include <stdio.h>
#include <stdlib.h>

int global_counter = 7;
static int static_table[64];

__attribute__((noinline)) int known_function(int x) {  // KNOWN_FUNCTION_LINE
  static_table[x & 63] += x;
  return x * 3 + global_counter;
}

__attribute__((noinline)) static int static_helper(int x) {
  return (x ^ 0x55) + static_table[1];
}

int main(int argc, char** argv) {
  int v = argc > 1 ? atoi(argv[1]) : 3;
  int r = known_function(v) + static_helper(v);
  printf("%d\n", r);
  return r == 12345 ? 1 : 0;
}
